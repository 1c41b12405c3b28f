/**
 * One DPoP-protected call: a fresh proof (with the last nonce the server gave this key), and when
 * the server answers with a `use_dpop_nonce` challenge and a new `DPoP-Nonce`, exactly one retry
 * with a fresh proof (and, through `build`, fresh client credentials) carrying the nonce of that
 * very challenge. The nonce is remembered for the same key's next call to the same server: a
 * nonce, the key that signs with it and the token it covers always belong to one login.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Clock } from '../clock.js';
import { IdError } from '../errors.js';
import { createDpopProof, isNonceChallenge, type DpopKey, type DpopNonces } from './dpop.js';
import type { HttpClient, JsonRequest } from './http.js';

/** What {@link dpopCall} needs. */
export interface DpopCallContext {
  http: HttpClient;
  nonces: DpopNonces;
  key: DpopKey;
  clock: Clock;
}

/**
 * Sends the request `build` makes (called again for the retry, so its one-time values are new).
 * `accessToken` is bound into the proof as `ath` (resource requests).
 */
export async function dpopCall(
  ctx: DpopCallContext,
  method: 'GET' | 'POST',
  url: URL,
  build: () => Promise<Omit<JsonRequest, 'method' | 'url' | 'onResponse'>>,
  accessToken?: string,
): Promise<unknown> {
  const scope = ctx.key.jkt;
  let nonce = ctx.nonces.for(url, scope);
  for (let attempt = 0; ; attempt += 1) {
    const proof = await createDpopProof(ctx.key, {
      htm: method,
      url,
      nonce,
      clock: ctx.clock,
      ...(accessToken === undefined ? {} : { accessToken }),
    });
    const req = await build();
    let answered: { status: number; headers: IncomingHttpHeaders; nonce: string | undefined } | undefined;
    try {
      return await ctx.http.json({
        ...req,
        method,
        url,
        headers: { ...req.headers, DPoP: proof },
        onResponse: (status, headers) => {
          // The nonce of this answer, read now: never one another login's answer left behind meanwhile.
          answered = { status, headers, nonce: ctx.nonces.remember(url, headers['dpop-nonce'], scope) };
        },
      });
    } catch (err) {
      if (attempt > 0 || !(err instanceof IdError) || answered === undefined) throw err;
      const fresh = answered.nonce;
      const oauthError = (err.cause as { error?: unknown } | undefined)?.error;
      const challenge = isNonceChallenge(answered.status, oauthError, firstHeader(answered.headers['www-authenticate']));
      // Retry only when challenged and given a nonce we did not already send.
      if (!challenge || fresh === undefined || fresh === nonce) throw err;
      nonce = fresh;
    }
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
