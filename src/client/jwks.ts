/**
 * The provider's signing keys, fetched from `/v2/.well-known/jwks.json` and cached per client.
 *
 * - The cached set is used for at most `maxAge` ms; the next key lookup after that refetches it,
 *   so a key the provider withdrew (e.g. compromised) stops verifying tokens. When that refetch
 *   fails, the lookup fails with the HTTP error: an expired set is never used as a fallback
 *   (failing closed during a key-set outage, rather than trusting a withdrawn key), and the next
 *   lookup tries again.
 * - A `kid` missing from the cached set, or a token without `kid` when the set has no usable
 *   key, triggers one refetch, at most once per cooldown, so provider key rotation just works
 *   and a flood of forged `kid`s cannot turn into a flood of requests.
 * - Every caller waiting at the same moment shares one request.
 * - Keys are RSA, EC (P-256, P-384, P-521) and OKP (Ed25519) signing keys; each lookup names
 *   the token's algorithm, and only a key of the type it takes (and whose `alg`, when the
 *   provider states one, is that algorithm) is chosen: the `kid` alone never picks a key.
 */
import type { KeyObject } from 'node:crypto';
import type { Clock } from '../clock.js';
import { IdError } from '../errors.js';
import type { HttpClient } from './http.js';
import { LOG_EVENTS, type Log } from '../log.js';
import { logCallFailure } from './call-log.js';
import { importVerificationJwk } from '../jose/jwk.js';
import { ID_TOKEN_ALGORITHM, keyFitsAlgorithm, type IdTokenSigningAlgorithm } from './id-token.js';

/** A usable verification key, its id and the algorithm its JWK names (if any). */
interface CachedKey {
  kid: string | undefined;
  /** The JWK's `alg`; undefined when the provider states none. */
  alg: string | undefined;
  key: KeyObject;
}

/** Options of {@link RemoteKeySet}. */
export interface RemoteKeySetOptions {
  http: HttpClient;
  url: URL;
  clock: Clock;
  /** Shortest time between two refetches caused by an unknown `kid`, in ms. */
  cooldown: number;
  /** Longest time a fetched key set is used, in ms; the next lookup after that refetches it. */
  maxAge: number;
  /** Where fetches (`debug`) and failed fetches (`warn`) are logged. */
  log?: Log;
}

/** Cached JWKS of one provider. */
export class RemoteKeySet {
  readonly #http: HttpClient;
  readonly #url: URL;
  readonly #clock: Clock;
  readonly #cooldown: number;
  readonly #maxAge: number;
  readonly #log: Log | undefined;
  #keys: CachedKey[] | undefined;
  /** Clock time at which {@link #keys} arrived. */
  #fetchedAt = 0;
  #inflight: Promise<CachedKey[]> | undefined;
  #lastRefetchAt: number | undefined;
  #fetches = 0;

  constructor(options: RemoteKeySetOptions) {
    this.#http = options.http;
    this.#url = options.url;
    this.#clock = options.clock;
    this.#cooldown = options.cooldown;
    this.#maxAge = options.maxAge;
    this.#log = options.log;
  }

  /** How many times the key set was requested from the provider. */
  get fetchCount(): number {
    return this.#fetches;
  }

  /**
   * The key that verifies a token with header `kid` (possibly absent) signed with `alg` (RS256
   * when not given): among the keys of the type `alg` takes whose JWK `alg`, when present, is
   * `alg`. Fetches the set first when none is cached or the cached one has reached the max age.
   * @throws IdError `id_token_key_not_found`, `id_token_kid_ambiguous`, `jwks_invalid`, or an HTTP code.
   */
  async keyFor(kid: string | undefined, alg: IdTokenSigningAlgorithm = ID_TOKEN_ALGORITHM): Promise<KeyObject> {
    const cached = this.#keys !== undefined && this.#isFresh() ? this.#keys : undefined;
    let keys = cached ?? (await this.#load());
    let found = select(keys, kid, alg);
    if (found === undefined && cached !== undefined && this.#mayRefetch()) {
      keys = await this.#load(true);
      found = select(keys, kid, alg);
    }
    if (found === undefined) {
      throw new IdError(
        'id_token_key_not_found',
        kid === undefined
          ? `The provider publishes no ${alg} signing key to verify the ID token with.`
          : `The ID token names a signing key (kid) that the provider does not publish as a ${alg} key.`,
      );
    }
    return found;
  }

  /** True while the cached set is younger than the max age (a clock that went back counts as expired). */
  #isFresh(): boolean {
    const age = this.#clock() - this.#fetchedAt;
    return age >= 0 && age < this.#maxAge;
  }

  #mayRefetch(): boolean {
    if (this.#inflight) return true;
    const now = this.#clock();
    return this.#lastRefetchAt === undefined || now - this.#lastRefetchAt >= this.#cooldown;
  }

  /** Fetches the key set; concurrent callers share one request. */
  #load(isRefetch = false): Promise<CachedKey[]> {
    if (this.#inflight) return this.#inflight;
    if (isRefetch) this.#lastRefetchAt = this.#clock();
    this.#fetches += 1;
    const pending = this.#fetch().then(
      (keys) => {
        this.#keys = keys;
        this.#fetchedAt = this.#clock();
        this.#inflight = undefined;
        if (this.#log?.debugEnabled) {
          this.#log.write(
            'debug',
            { event: LOG_EVENTS.jwksFetched, usableKeys: keys.length, refetch: isRefetch },
            'Fetched the key set of the service.',
          );
        }
        return keys;
      },
      (err: unknown) => {
        this.#inflight = undefined;
        if (this.#log) logCallFailure(this.#log, 'jwks', err);
        throw err;
      },
    );
    this.#inflight = pending;
    return pending;
  }

  async #fetch(): Promise<CachedKey[]> {
    const body = await this.#http.json({
      method: 'GET',
      url: this.#url,
      what: 'JWKS endpoint',
      refusedCode: 'jwks_invalid',
    });
    const entries = (body as { keys?: unknown } | null)?.keys;
    if (!Array.isArray(entries)) {
      throw new IdError('jwks_invalid', 'The JWKS endpoint answered without a "keys" array.');
    }
    const keys: CachedKey[] = [];
    for (const entry of entries) {
      const key = importVerificationJwk(entry);
      if (key) keys.push(key);
    }
    return keys;
  }
}

/**
 * The key for `kid` among those that fit `alg`; without a kid, the only one that fits, or an
 * ambiguity error when there are several.
 */
function select(keys: CachedKey[], kid: string | undefined, alg: IdTokenSigningAlgorithm): KeyObject | undefined {
  const fits = (k: CachedKey) => (k.alg === undefined || k.alg === alg) && keyFitsAlgorithm(k.key, alg);
  if (kid !== undefined) return keys.find((k) => k.kid === kid && fits(k))?.key;
  const fitting = keys.filter(fits);
  if (fitting.length > 1) {
    throw new IdError(
      'id_token_kid_ambiguous',
      `The ID token has no kid header and the provider publishes several ${alg} signing keys, so none can be chosen.`,
    );
  }
  return fitting[0]?.key;
}
