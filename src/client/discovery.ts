/**
 * The provider's discovery document, kept for the key-set lifetime and refetched early only when an
 * ID token names an unknown key (once per cooldown). Its `issuer` must be exactly the configured
 * one (mix-up defence). One source per configuration: configured by `issuer`, every endpoint comes
 * from the document, https (plain http only under a plain-http issuer, loopback or
 * `allowInsecureHttp`) and the PAR endpoint on the issuer's origin; configured by `hostname` (the
 * service of the spec), every endpoint is the spec's path and the document is read only for what
 * it advertises (algorithms, RFC 9207 `iss`). In the base profile the spec's paths stand in for a
 * document never read; once one was read, a failed re-read keeps it (never switching a check off).
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
  /** `userinfo_signing_alg_values_supported`, when the document lists it. */
  userinfoSigningAlgValues: readonly string[] | undefined;
  /** True when the provider's userinfo is the service's encrypted `{ sub, key, data }` answer (spec 2.4), false for OpenID Connect's claims. */
  encryptedUserinfo: boolean;
  /** True when the endpoints are the document's (`issuer`); false when they are the spec's paths (`hostname`). */
  fromDocument: boolean;
}

/**
 * The spec's own endpoints under `issuer` (`hostname` + `/v2`), as the service's official client
 * builds them: every endpoint of a client configured by `hostname` (PAR being the FAPI profile's
 * path of the service), and what stands in for a document never read in the base profile.
 */
export function specEndpoints(issuer: string): ServiceMetadata {
  return {
    issParameterSupported: false,
    authorizationEndpoint: new URL(`${issuer}/oauth/authorize`),
    parEndpoint: new URL(`${issuer}/oauth/par`),
    tokenEndpoint: new URL(`${issuer}/oauth/token`),
    userinfoEndpoint: new URL(`${issuer}/oauth/userinfo`),
    jwksUri: new URL(`${issuer}/.well-known/jwks.json`),
    idTokenSigningAlgValues: undefined,
    userinfoSigningAlgValues: undefined,
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
  /**
   * The spec's endpoints (`hostname`, either profile): the only endpoints used, whatever the
   * document names; its userinfo is the encrypted `{ sub, key, data }` answer.
   */
  specPaths?: ServiceMetadata;
  /** The spec's endpoints stand in while no document was ever read (404, 5xx, no answer): `hostname`, base profile. */
  standInWhenUnread?: boolean;
  /** Accept plain http endpoints on hosts that are not loopback (`allowInsecureHttp`), under a plain-http issuer. */
  allowInsecureHttp: boolean;
}

/** The discovery document of one provider, cached. */
export class DiscoveryCache {
  readonly #http: HttpClient;
  readonly #issuer: string;
  readonly #url: URL;
  readonly #clock: Clock;
  readonly #maxAge: number;
  readonly #cooldown: number;
  readonly #specPaths: ServiceMetadata | undefined;
  readonly #standIn: boolean;
  readonly #allowInsecureHttp: boolean;
  /** The issuer is plain http: only then may an endpoint be plain http too. */
  readonly #plainIssuer: boolean;
  readonly #issuerOrigin: string;
  #cached: ServiceMetadata | undefined;
  /** The metadata of the last document read (never a stand-in). */
  #lastRead: ServiceMetadata | undefined;
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
    this.#specPaths = options.specPaths;
    this.#standIn = options.specPaths !== undefined && options.standInWhenUnread === true;
    this.#allowInsecureHttp = options.allowInsecureHttp;
    const issuerUrl = new URL(options.issuer);
    this.#plainIssuer = issuerUrl.protocol === 'http:';
    this.#issuerOrigin = issuerUrl.origin;
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
      const kept = this.#unreadable(err);
      if (kept === undefined) throw err;
      return kept;
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
    const advertised = {
      issParameterSupported: doc.authorization_response_iss_parameter_supported === true,
      idTokenSigningAlgValues: stringList(doc.id_token_signing_alg_values_supported),
      userinfoSigningAlgValues: stringList(doc.userinfo_signing_alg_values_supported),
    };
    const metadata: ServiceMetadata =
      this.#specPaths === undefined
        ? { ...this.#documentEndpoints(doc), ...advertised }
        : { ...this.#specPaths, ...advertised, fromDocument: false };
    this.#lastRead = metadata;
    return { metadata, keepFor: this.#maxAge };
  }

  /**
   * What a configuration by `hostname` uses when the document cannot be read (404, 5xx, no
   * answer): the document last read, kept (a check it asked for stays on), read again after the
   * cooldown; before any was read, the spec's paths in the base profile. Undefined: the failure stands.
   */
  #unreadable(err: unknown): { metadata: ServiceMetadata; keepFor: number } | undefined {
    if (this.#specPaths === undefined || !(err instanceof IdError)) return undefined;
    if (err.status !== 404 && !PROVIDER_DOWN_CODES.has(err.code)) return undefined;
    const retryAfter = Math.min(this.#cooldown, this.#maxAge);
    if (this.#lastRead !== undefined) return { metadata: this.#lastRead, keepFor: retryAfter };
    if (!this.#standIn) return undefined;
    return { metadata: this.#specPaths, keepFor: err.status === 404 ? this.#maxAge : retryAfter };
  }

  /** The endpoints a document names (a configuration by `issuer`), each checked. */
  #documentEndpoints(doc: Record<string, unknown>): Omit<ServiceMetadata, keyof Advertised> {
    const required = (field: string): URL => {
      const url = this.#endpoint(doc, field);
      if (url === undefined) {
        throw new IdError(
          'discovery_invalid',
          `The discovery document has no ${field}; the provider must publish it.`,
          { reason: field },
        );
      }
      return url;
    };
    const parEndpoint = this.#endpoint(doc, 'pushed_authorization_request_endpoint');
    if (parEndpoint !== undefined && parEndpoint.origin !== this.#issuerOrigin) {
      throw new IdError(
        'discovery_invalid',
        `The discovery document's pushed_authorization_request_endpoint is not on the issuer's origin (${this.#issuerOrigin}), so the pushed request and its client assertion would go to another server; the provider must publish it on its own origin.`,
        { reason: 'pushed_authorization_request_endpoint' },
      );
    }
    return {
      authorizationEndpoint: required('authorization_endpoint'),
      parEndpoint,
      tokenEndpoint: required('token_endpoint'),
      userinfoEndpoint: this.#endpoint(doc, 'userinfo_endpoint'),
      jwksUri: required('jwks_uri'),
      encryptedUserinfo: doc.nd_id_userinfo_key_encryption_alg_values_supported !== undefined,
      fromDocument: true,
    };
  }

  /**
   * `doc[field]` as a URL, undefined when absent.
   * @throws IdError `discovery_invalid` (its `reason` the field) when it is not an absolute https
   *   URL: plain http only under a plain-http issuer, and then on loopback or with `allowInsecureHttp`.
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
    const plainAllowed =
      url.protocol === 'http:' && this.#plainIssuer && (this.#allowInsecureHttp || isLoopbackHost(url.hostname));
    if (url.protocol !== 'https:' && !plainAllowed) {
      throw new IdError(
        'discovery_invalid',
        `The discovery document's ${field} is not an https URL, so tokens would cross the network unencrypted; the provider must publish https endpoints (plain http is taken only from a plain-http loopback issuer).`,
        { reason: field },
      );
    }
    return url;
  }
}

/** What a document advertises, read in both configurations. */
type Advertised = Pick<
  ServiceMetadata,
  'issParameterSupported' | 'idTokenSigningAlgValues' | 'userinfoSigningAlgValues'
>;

/** The strings of a list the document advertises, undefined when it lists none. */
function stringList(value: unknown): readonly string[] | undefined {
  return Array.isArray(value) ? value.filter((a): a is string => typeof a === 'string') : undefined;
}
