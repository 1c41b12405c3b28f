/**
 * One DPoP-protected call, with exactly one retry on a `use_dpop_nonce` challenge (fresh proof and
 * credentials, the challenge's nonce). The nonce is kept per key and server, so a nonce, its key
 * and its token always belong to one login.
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

/** Sends what `build` makes (called again for the retry, so one-time values are new); `accessToken` goes into the proof as `ath`. */
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
      const challenge = isNonceChallenge(
        answered.status,
        oauthError,
        firstHeader(answered.headers['www-authenticate']),
      );
      // Retry only when challenged and given a nonce we did not already send.
      if (!challenge || fresh === undefined || fresh === nonce) throw err;
      nonce = fresh;
    }
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
