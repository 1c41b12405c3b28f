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
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import type { Clock } from '../clock.js';
import { IdError } from '../errors.js';
import type { HttpClient } from './http.js';
import { LOG_EVENTS, type Log } from '../log.js';
import { logCallFailure } from './call-log.js';
import { MIN_RSA_BITS } from '../keys.js';

/** A usable verification key and its id. */
interface CachedKey {
  kid: string | undefined;
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
   * The key that verifies a token with header `kid` (possibly absent). Fetches the set first
   * when none is cached or the cached one has reached the max age.
   * @throws IdError `id_token_key_not_found`, `id_token_kid_ambiguous`, `jwks_invalid`, or an HTTP code.
   */
  async keyFor(kid: string | undefined): Promise<KeyObject> {
    const cached = this.#keys !== undefined && this.#isFresh() ? this.#keys : undefined;
    let keys = cached ?? (await this.#load());
    let found = select(keys, kid);
    if (found === undefined && cached !== undefined && this.#mayRefetch()) {
      keys = await this.#load(true);
      found = select(keys, kid);
    }
    if (found === undefined) {
      throw new IdError(
        'id_token_key_not_found',
        kid === undefined
          ? 'The provider publishes no RS256 signing key to verify the ID token with.'
          : 'The ID token names a signing key (kid) that the provider does not publish.',
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
          this.#log.write('debug', { event: LOG_EVENTS.jwksFetched, usableKeys: keys.length, refetch: isRefetch }, 'Fetched the key set of the service.');
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
      const key = await usableKey(entry);
      if (key) keys.push(key);
    }
    return keys;
  }
}

/** The key for `kid`; without a kid, the only key, or an ambiguity error when there are several. */
function select(keys: CachedKey[], kid: string | undefined): KeyObject | undefined {
  if (kid !== undefined) return keys.find((k) => k.kid === kid)?.key;
  if (keys.length > 1) {
    throw new IdError(
      'id_token_kid_ambiguous',
      'The ID token has no kid header and the provider publishes several signing keys, so none can be chosen.',
    );
  }
  return keys[0]?.key;
}

/** An RSA public key meant for RS256 signatures, or undefined for any other entry (skipped). */
async function usableKey(entry: unknown): Promise<CachedKey | undefined> {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const jwk = entry as JWK & { key_ops?: unknown };
  if (jwk.kty !== 'RSA' || typeof jwk.n !== 'string' || typeof jwk.e !== 'string') return undefined;
  if (jwk.d !== undefined) return undefined; // a private key has no business in a public key set
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  if (jwk.alg !== undefined && jwk.alg !== 'RS256') return undefined;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return undefined;
  if (jwk.kid !== undefined && typeof jwk.kid !== 'string') return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
  } catch {
    return undefined;
  }
  if ((key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) return undefined;
  return { kid: jwk.kid, key };
}
