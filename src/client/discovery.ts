/**
 * The provider's discovery document, kept for the key-set lifetime and refetched early only when an
 * ID token names an unknown key (once per cooldown). Its `issuer` must be exactly the configured
 * one (mix-up defence) and its endpoints https (loopback aside). Configured by `hostname` in the
 * base profile, the spec's own paths stand in for an unreachable or incomplete document, so an app
 * never depends on it; another issuer is still refused.
 */
import type { Clock } from '../clock.js';
import { IdError, PROVIDER_DOWN_CODES } from '../errors.js';
import { isLoopbackHost } from './client-options.js';
import type { HttpClient } from './http.js';

/** What the client uses of the discovery document. */
export interface ServiceMetadata {
  /** `authorization_response_iss_parameter_supported` is `true`: every authorization response must carry `iss`. */
  issParameterSupported: boolean;
  authorizationEndpoint: URL;
  /** `pushed_authorization_request_endpoint`, when given. */
  parEndpoint: URL | undefined;
  tokenEndpoint: URL;
  /** `userinfo_endpoint`; undefined when the provider publishes none (identity from the ID token alone). */
  userinfoEndpoint: URL | undefined;
  jwksUri: URL;
  /** `id_token_signing_alg_values_supported`, when the document lists it. */
  idTokenSigningAlgValues: readonly string[] | undefined;
  /** True when the provider's userinfo is the service's encrypted `{ sub, key, data }` answer (spec 2.4), false for OpenID Connect's claims. */
  encryptedUserinfo: boolean;
  /** False when the spec's paths stood in for a document that could not be read. */
  fromDocument: boolean;
}

/** The spec's own endpoints under `issuer` (`hostname` + `/v2`): the fallback of the base profile. */
export function specEndpoints(issuer: string): ServiceMetadata {
  return {
    issParameterSupported: false,
    authorizationEndpoint: new URL(`${issuer}/oauth/authorize`),
    parEndpoint: undefined,
    tokenEndpoint: new URL(`${issuer}/oauth/token`),
    userinfoEndpoint: new URL(`${issuer}/oauth/userinfo`),
    jwksUri: new URL(`${issuer}/.well-known/jwks.json`),
    idTokenSigningAlgValues: undefined,
    encryptedUserinfo: true,
    fromDocument: false,
  };
}

/** Options of {@link DiscoveryCache}. */
export interface DiscoveryCacheOptions {
  http: HttpClient;
  issuer: string;
  clock: Clock;
  /** How long a fetched document is used, in ms. */
  maxAge: number;
  /** Shortest time between two reads asked for by {@link DiscoveryCache.refresh}, and how long a stand-in is kept after a failed read, in ms. */
  cooldown: number;
  /** The spec's endpoints, when they stand in for a document that cannot be read (`hostname`, base profile). */
  fallback?: ServiceMetadata;
  /** Accept plain http endpoints on hosts that are not loopback (`allowInsecureHttp`). */
  allowInsecureHttp: boolean;
  /** The service of the spec (`hostname`, either profile): its userinfo is the encrypted `{ sub, key, data }` answer. */
  specService?: boolean;
}

/** The discovery document of one provider, cached. */
export class DiscoveryCache {
  readonly #http: HttpClient;
  readonly #issuer: string;
  readonly #url: URL;
  readonly #clock: Clock;
  readonly #maxAge: number;
  readonly #cooldown: number;
  readonly #fallback: ServiceMetadata | undefined;
  readonly #allowInsecureHttp: boolean;
  readonly #specService: boolean;
  #cached: ServiceMetadata | undefined;
  #fetchedAt = 0;
  #keepFor = 0;
  #refreshedAt: number | undefined;
  #inflight: Promise<ServiceMetadata> | undefined;
  #fetches = 0;

  constructor(options: DiscoveryCacheOptions) {
    this.#http = options.http;
    this.#issuer = options.issuer;
    this.#url = new URL(`${options.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`);
    this.#clock = options.clock;
    this.#maxAge = options.maxAge;
    this.#cooldown = options.cooldown;
    this.#fallback = options.fallback;
    this.#allowInsecureHttp = options.allowInsecureHttp;
    this.#specService = options.specService === true || options.fallback !== undefined;
  }

  /** How many times the document was requested. */
  get fetchCount(): number {
    return this.#fetches;
  }

  /** The metadata last read, fresh or not, or undefined before the first read (no request). */
  peek(): ServiceMetadata | undefined {
    return this.#cached;
  }

  /** True while the metadata last read is younger than its max age (a clock that went back counts as expired). */
  isFresh(): boolean {
    const age = this.#clock() - this.#fetchedAt;
    return this.#cached !== undefined && age >= 0 && age < this.#keepFor;
  }

  /**
   * The provider's metadata, from the cache while it is fresh.
   * @throws IdError `discovery_issuer_mismatch`, `discovery_invalid`, `provider_invalid_response` or an HTTP code.
   */
  get(): Promise<ServiceMetadata> {
    if (this.isFresh()) return Promise.resolve(this.#cached as ServiceMetadata);
    return this.#load();
  }

  /** Reads the document again (the provider may have moved its `jwks_uri`), at most once per cooldown. */
  refresh(): Promise<ServiceMetadata> {
    if (this.#inflight !== undefined) return this.#inflight;
    const now = this.#clock();
    if (this.#refreshedAt !== undefined && now - this.#refreshedAt >= 0 && now - this.#refreshedAt < this.#cooldown)
      return this.get();
    this.#refreshedAt = now;
    return this.#load();
  }

  #load(): Promise<ServiceMetadata> {
    if (this.#inflight !== undefined) return this.#inflight;
    this.#fetches += 1;
    const pending = this.#fetch().then(
      ({ metadata, keepFor }) => {
        this.#cached = metadata;
        this.#fetchedAt = this.#clock();
        this.#keepFor = keepFor;
        this.#inflight = undefined;
        return metadata;
      },
      (err: unknown) => {
        this.#inflight = undefined;
        throw err;
      },
    );
    this.#inflight = pending;
    return pending;
  }

  async #fetch(): Promise<{ metadata: ServiceMetadata; keepFor: number }> {
    let body: unknown;
    try {
      body = await this.#http.json({
        method: 'GET',
        url: this.#url,
        what: 'discovery endpoint',
        refusedCode: 'provider_invalid_response',
      });
    } catch (err) {
      // The service of the spec without a reachable document: its own paths, read again after a while.
      if (
        this.#fallback !== undefined &&
        err instanceof IdError &&
        (err.status === 404 || PROVIDER_DOWN_CODES.has(err.code))
      ) {
        return {
          metadata: this.#fallback,
          keepFor: err.status === 404 ? this.#maxAge : Math.min(this.#cooldown, this.#maxAge),
        };
      }
      throw err;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new IdError(
        'provider_invalid_response',
        'The discovery endpoint answered with JSON that is not an object.',
      );
    }
    const doc = body as Record<string, unknown>;
    if (doc.issuer !== this.#issuer) {
      throw new IdError(
        'discovery_issuer_mismatch',
        `The discovery document names another issuer than ${this.#issuer}; check the issuer (or hostname) option: a provider must name itself exactly.`,
      );
    }
    const fallback = this.#fallback;
    const required = (field: string, stand: URL | undefined): URL => {
      const url = this.#endpoint(doc, field) ?? stand;
      if (url === undefined) {
        throw new IdError(
          'discovery_invalid',
          `The discovery document has no ${field}; the provider must publish it.`,
          { reason: field },
        );
      }
      return url;
    };
    const algs = doc.id_token_signing_alg_values_supported;
    return {
      metadata: {
        issParameterSupported: doc.authorization_response_iss_parameter_supported === true,
        authorizationEndpoint: required('authorization_endpoint', fallback?.authorizationEndpoint),
        parEndpoint: this.#endpoint(doc, 'pushed_authorization_request_endpoint'),
        tokenEndpoint: required('token_endpoint', fallback?.tokenEndpoint),
        userinfoEndpoint: this.#endpoint(doc, 'userinfo_endpoint') ?? fallback?.userinfoEndpoint,
        jwksUri: required('jwks_uri', fallback?.jwksUri),
        idTokenSigningAlgValues: Array.isArray(algs)
          ? algs.filter((a): a is string => typeof a === 'string')
          : undefined,
        encryptedUserinfo: this.#specService || doc.nd_id_userinfo_key_encryption_alg_values_supported !== undefined,
        fromDocument: true,
      },
      keepFor: this.#maxAge,
    };
  }

  /**
   * `doc[field]` as a URL, undefined when absent.
   * @throws IdError `discovery_invalid` (its `reason` the field) when it is not an absolute https URL (http on loopback aside).
   */
  #endpoint(doc: Record<string, unknown>, field: string): URL | undefined {
    const value = doc[field];
    if (value === undefined) return undefined;
    let url: URL | undefined;
    if (typeof value === 'string' && value.length <= 2048) {
      try {
        url = new URL(value);
      } catch {
        url = undefined;
      }
    }
    if (url === undefined || url.hash !== '' || url.username !== '' || url.password !== '') {
      throw new IdError('discovery_invalid', `The discovery document's ${field} is not an absolute URL.`, {
        reason: field,
      });
    }
    const plainAllowed = url.protocol === 'http:' && (this.#allowInsecureHttp || isLoopbackHost(url.hostname));
    if (url.protocol !== 'https:' && !plainAllowed) {
      throw new IdError(
        'discovery_invalid',
        `The discovery document's ${field} is not an https URL, so tokens would cross the network unencrypted; the provider must publish https endpoints.`,
        { reason: field },
      );
    }
    return url;
  }
}
