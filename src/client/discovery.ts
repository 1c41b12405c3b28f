/**
 * The service's discovery document (`{issuer}/.well-known/openid-configuration`), fetched when
 * first needed and kept for the key-set lifetime (`jwksCacheMaxAge`). The client reads from it
 * only what changes its behaviour: whether the authorization response carries `iss` (RFC 9207)
 * and, in the FAPI 2.0 profile, where to push authorization requests (RFC 9126). Its `issuer`
 * must be exactly the one the client was configured for (a mix-up defence).
 */
import type { Clock } from '../clock.js';
import { IdError } from '../errors.js';
import type { HttpClient } from './http.js';

/** What the client uses of the discovery document. */
export interface ServiceMetadata {
  /** `authorization_response_iss_parameter_supported` is `true`: every authorization response must carry `iss`. */
  issParameterSupported: boolean;
  /** `pushed_authorization_request_endpoint`, when given and on the service's own origin. */
  parEndpoint: URL | undefined;
}

/** Options of {@link DiscoveryCache}. */
export interface DiscoveryCacheOptions {
  http: HttpClient;
  issuer: string;
  clock: Clock;
  /** How long a fetched document is used, in ms. */
  maxAge: number;
}

/** The discovery document of one service, cached. */
export class DiscoveryCache {
  readonly #http: HttpClient;
  readonly #issuer: string;
  readonly #url: URL;
  readonly #clock: Clock;
  readonly #maxAge: number;
  #cached: ServiceMetadata | undefined;
  #fetchedAt = 0;
  #inflight: Promise<ServiceMetadata> | undefined;

  constructor(options: DiscoveryCacheOptions) {
    this.#http = options.http;
    this.#issuer = options.issuer;
    this.#url = new URL(`${options.issuer}/.well-known/openid-configuration`);
    this.#clock = options.clock;
    this.#maxAge = options.maxAge;
  }

  /**
   * The service's metadata, from the cache while it is younger than the max age.
   * @throws IdError `discovery_issuer_mismatch`, `provider_invalid_response` or an HTTP code.
   */
  get(): Promise<ServiceMetadata> {
    const age = this.#clock() - this.#fetchedAt;
    if (this.#cached !== undefined && age >= 0 && age < this.#maxAge) return Promise.resolve(this.#cached);
    if (this.#inflight !== undefined) return this.#inflight;
    const pending = this.#fetch().then(
      (metadata) => {
        this.#cached = metadata;
        this.#fetchedAt = this.#clock();
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

  async #fetch(): Promise<ServiceMetadata> {
    let body: unknown;
    try {
      body = await this.#http.json({ method: 'GET', url: this.#url, what: 'discovery endpoint', refusedCode: 'provider_invalid_response' });
    } catch (err) {
      if (err instanceof IdError && err.status === 404) return { issParameterSupported: false, parEndpoint: undefined };
      throw err;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw new IdError('provider_invalid_response', 'The discovery endpoint answered with JSON that is not an object.');
    }
    const doc = body as Record<string, unknown>;
    if (doc.issuer !== this.#issuer) {
      throw new IdError(
        'discovery_issuer_mismatch',
        `The discovery document names another issuer than ${this.#issuer}; check the hostname option (a service must name itself exactly).`,
      );
    }
    return {
      issParameterSupported: doc.authorization_response_iss_parameter_supported === true,
      parEndpoint: sameOriginUrl(doc.pushed_authorization_request_endpoint, this.#url),
    };
  }
}

/** `value` as a URL when it is an absolute URL on the origin of `base`, else undefined. */
function sameOriginUrl(value: unknown, base: URL): URL | undefined {
  if (typeof value !== 'string' || value.length > 2048) return undefined;
  try {
    const url = new URL(value);
    return url.origin === base.origin && url.search === '' && url.hash === '' ? url : undefined;
  } catch {
    return undefined;
  }
}
