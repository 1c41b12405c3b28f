/**
 * One DPoP-protected call: a fresh proof (with the server's last nonce), and when the server
 * answers with a `use_dpop_nonce` challenge and a new `DPoP-Nonce`, exactly one retry with a
 * fresh proof (and, through `build`, fresh client credentials). The nonce is remembered for the
 * next call to the same server.
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
  for (let attempt = 0; ; attempt += 1) {
    const nonce = ctx.nonces.for(url);
    const proof = await createDpopProof(ctx.key, {
      htm: method,
      url,
      nonce,
      clock: ctx.clock,
      ...(accessToken === undefined ? {} : { accessToken }),
    });
    const req = await build();
    let answered: { status: number; headers: IncomingHttpHeaders } | undefined;
    try {
      return await ctx.http.json({
        ...req,
        method,
        url,
        headers: { ...req.headers, DPoP: proof },
        onResponse: (status, headers) => {
          answered = { status, headers };
          ctx.nonces.remember(url, headers['dpop-nonce']);
        },
      });
    } catch (err) {
      if (attempt > 0 || !(err instanceof IdError) || answered === undefined) throw err;
      const fresh = ctx.nonces.for(url);
      const oauthError = (err.cause as { error?: unknown } | undefined)?.error;
      const challenge = isNonceChallenge(answered.status, oauthError, firstHeader(answered.headers['www-authenticate']));
      // Retry only when challenged and given a nonce we did not already send.
      if (!challenge || fresh === undefined || fresh === nonce) throw err;
    }
  }
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
