/**
 * FAPI 2.0 clients' public keys, inline or fetched from `jwksUri`. A fetched set is refetched only
 * for an unknown `kid` (rotation) or a missing encryption key, at most once per
 * {@link REFETCH_INTERVAL_MS} per client; each fetch is bounded ({@link FETCH_TIMEOUT_MS},
 * {@link MAX_JWKS_BYTES}, no redirects).
 */
import type { Clock } from '../../clock.js';
import type { ResolvedClient } from '../config.js';
import { checkPublicJwks, type PublicJwk } from './registration.js';

/** Longest wait for a client's hosted JWKS. */
export const FETCH_TIMEOUT_MS = 3000;
/** Largest accepted hosted JWKS, in bytes. */
export const MAX_JWKS_BYTES = 64 * 1024;
/** Shortest time between two fetches of one client's JWKS. */
export const REFETCH_INTERVAL_MS = 10_000;
/** Longest a fetched JWKS is used unrefreshed (the relying party's key route `max-age`), so rotations take effect. */
export const MAX_JWKS_AGE_MS = 300_000;

/** The statuses that redirect (named as such in the refusal; never followed). */
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A client's keys could not be had: the sentence says why, without any key material. */
export class ClientKeysUnavailable extends Error {}

interface Fetched {
  /** The keys of the last fetch that succeeded (none yet: empty), and when it was made. */
  keys: readonly PublicJwk[];
  at: number;
  /** The last failed attempt since, when there was one: why, and when. */
  failure?: { reason: string; at: number };
}

async function readBounded(res: Response): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_JWKS_BYTES) {
      await reader.cancel();
      throw new ClientKeysUnavailable(`the jwksUri answered more than ${MAX_JWKS_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The public keys of every FAPI client of one provider. */
export class ClientJwks {
  readonly #fetched = new Map<string, Fetched>();
  readonly #inflight = new Map<string, Promise<readonly PublicJwk[]>>();

  constructor(private readonly clock: Clock) {}

  /**
   * The keys of `client`; a hosted JWKS is refetched past {@link MAX_JWKS_AGE_MS}, or sooner with
   * `refresh` (the needed key was missing; at most once per {@link REFETCH_INTERVAL_MS}).
   * @throws ClientKeysUnavailable when a hosted JWKS cannot be fetched or read.
   */
  async keys(client: ResolvedClient, refresh = false): Promise<readonly PublicJwk[]> {
    const fapi = client.fapi;
    if (fapi === undefined) return [];
    if (fapi.jwks !== undefined || fapi.jwksUri === undefined) return fapi.jwks ?? [];
    const known = this.#fetched.get(client.clientId);
    if (known !== undefined) {
      const now = this.clock();
      const age = now - known.at;
      // Keys are used for MAX_JWKS_AGE_MS from the fetch that brought them, never longer: a failed
      // refetch does not extend them (a withdrawn key must stop working).
      const usable = known.keys.length > 0 && age >= 0 && age < MAX_JWKS_AGE_MS;
      const sinceFailure = known.failure === undefined ? Infinity : now - known.failure.at;
      const failedRecently = sinceFailure >= 0 && sinceFailure < REFETCH_INTERVAL_MS;
      if (usable && (!refresh || age < REFETCH_INTERVAL_MS || failedRecently)) return known.keys;
      // No usable keys and the last attempt failed: its reason until the next attempt is due.
      if (failedRecently) throw new ClientKeysUnavailable(known.failure!.reason);
    }
    let inflight = this.#inflight.get(client.clientId);
    if (inflight === undefined) {
      inflight = this.#fetch(client.clientId, fapi.jwksUri).finally(() => this.#inflight.delete(client.clientId));
      this.#inflight.set(client.clientId, inflight);
    }
    return inflight;
  }

  async #fetch(clientId: string, uri: string): Promise<readonly PublicJwk[]> {
    let text: string;
    try {
      // 'manual': a redirect is answered as itself (never followed), and named as such.
      const res = await fetch(uri, {
        redirect: 'manual',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        headers: { accept: 'application/json' },
      });
      if (res.status !== 200) {
        await res.body?.cancel();
        throw new ClientKeysUnavailable(
          REDIRECTS.has(res.status)
            ? `the jwksUri answered a redirect (HTTP ${res.status}), which is not followed: register the URL that serves the JWKS itself`
            : `the jwksUri answered HTTP ${res.status}, not 200`,
        );
      }
      text = await readBounded(res);
    } catch (err) {
      if (err instanceof ClientKeysUnavailable) throw this.#failed(clientId, err);
      const timedOut = err instanceof Error && err.name === 'TimeoutError';
      throw this.#failed(
        clientId,
        new ClientKeysUnavailable(
          timedOut ? `the jwksUri did not answer within ${FETCH_TIMEOUT_MS} ms` : 'the jwksUri could not be reached',
        ),
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw this.#failed(clientId, new ClientKeysUnavailable('the jwksUri did not answer JSON'));
    }
    const mistakes: string[] = [];
    const keys = checkPublicJwks(parsed, 'the hosted JWKS', mistakes);
    if (keys.length === 0)
      throw this.#failed(clientId, new ClientKeysUnavailable(mistakes[0] ?? 'the hosted JWKS holds no usable key'));
    this.#fetched.set(clientId, { keys, at: this.clock() });
    return keys;
  }

  /**
   * Remembers a failed fetch beside the keys held before (usable until {@link MAX_JWKS_AGE_MS} old),
   * so unknown kids cannot make the provider fetch in a loop. Returns `failure`.
   */
  #failed(clientId: string, failure: ClientKeysUnavailable): ClientKeysUnavailable {
    const before = this.#fetched.get(clientId);
    this.#fetched.set(clientId, {
      keys: before?.keys ?? [],
      at: before?.at ?? 0,
      failure: { reason: failure.message, at: this.clock() },
    });
    return failure;
  }
}
