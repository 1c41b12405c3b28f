/**
 * Every `error_description` the provider writes stays within RFC 6749 section 5.2's characters
 * (`%x20-21 / %x23-5B / %x5D-7E`: no double quote, no backslash, nothing outside visible ASCII),
 * as a certified client's checks require: the refusals that quoted a value are driven over real
 * HTTP, and the one place errors are written mends what a sentence quotes from outside.
 */
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { errorDescription } from '../../../src/provider/http/answer.js';
import { assertion, fapiFixture, loginParams, push, tokenCall } from './support.js';

const f = fapiFixture();
const RFC6749_CHARS = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/** A compact JWS with any header, signed by nobody: enough for a refusal of its alg. */
function unsigned(header: Record<string, unknown>, payload: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part(header)}.${part(payload)}.${Buffer.from('x').toString('base64url')}`;
}

async function described(res: Response): Promise<{ error: string; description: string }> {
  const body = (await res.json()) as { error: string; error_description: string };
  return { error: body.error, description: body.error_description };
}

describe('error_description characters (RFC 6749 5.2)', () => {
  it('every refusal of PAR, token and the authorize validation at PAR is written within the allowed characters', async () => {
    const t = f.test;
    const par = `${t.baseUrl}/v2/oauth/par`;
    const token = `${t.baseUrl}/v2/oauth/token`;
    const params = (extra: Record<string, string> = {}) => loginParams(t, extra).params;
    const answers: Response[] = [
      // The DPoP proof: typ, alg, htm, htu.
      await push(t, f.dpop, params(), { proof: await f.dpop.proof(t, 'POST', par, {}, { typ: 'JWT' }) }),
      await push(t, f.dpop, params(), {
        proof: unsigned(
          { alg: 'HS256"\\', typ: 'dpop+jwt', jwk: f.dpop.publicJwk },
          { htm: 'POST', htu: par, iat: Math.floor(t.provider.clock() / 1000), jti: 'a' },
        ),
      }),
      await push(t, f.dpop, params(), { proof: await f.dpop.proof(t, 'GET', par) }),
      await push(t, f.dpop, params(), { proof: await f.dpop.proof(t, 'POST', `${t.baseUrl}/elsewhere`) }),
      // The client assertion: alg, aud as an endpoint and as an array, an iss of no FAPI client.
      await push(t, f.dpop, params(), {
        assertion: unsigned(
          { alg: 'none"\\' },
          { iss: t.client.clientId, sub: t.client.clientId, aud: t.provider.issuer },
        ),
      }),
      await push(t, f.dpop, params(), { assertion: await assertion(t, { aud: par }) }),
      await push(t, f.dpop, params(), { assertion: await assertion(t, { aud: [t.provider.issuer, par] }) }),
      await push(
        t,
        f.dpop,
        { ...params(), client_id: '' },
        { assertion: await assertion(t, { iss: 'nobody', sub: 'nobody' }) },
      ),
      // The authorize validation at PAR: response_type, scope, PKCE method, response_mode, redirect URI.
      await push(t, f.dpop, params({ response_type: 'token' })),
      await push(t, f.dpop, params({ scope: 'profile.name' })),
      await push(t, f.dpop, params({ code_challenge_method: 'plain' })),
      await push(t, f.dpop, params({ response_mode: 'fragment' })),
      await push(t, f.dpop, params({ redirect_uri: 'http://127.0.0.1:3000/caf\u00e9"\\' })),
      await push(t, f.dpop, { ...params(), dpop_jkt: `${await calculateJwkThumbprint(f.dpop.publicJwk)}x` }),
      // The token endpoint: a proof for another URL, no verifier, no code.
      await tokenCall(
        t,
        f.dpop,
        { code: 'x', code_verifier: 'y'.repeat(43) },
        {
          proof: await f.dpop.proof(t, 'POST', `${token}/x`),
        },
      ),
      await tokenCall(t, f.dpop, { code: 'x' }),
      await tokenCall(t, f.dpop, { code_verifier: 'y'.repeat(43) }),
    ];
    const seen = await Promise.all(answers.map(described));
    for (const { error, description } of seen) {
      expect(error).toMatch(/^[a-z_]+$/);
      expect(description, `${error}: ${description}`).toMatch(RFC6749_CHARS);
    }
    // Each was a refusal, with its own sentence.
    expect(answers.every((res) => res.status >= 400)).toBe(true);
    expect(new Set(seen.map((s) => s.description)).size).toBeGreaterThan(12);
  });

  it('the one place errors are written mends what a sentence quotes from outside', () => {
    expect(errorDescription('The value "a\\b" \u2026 caf\u00e9\nend.')).toBe("The value 'a/b' ... caf??end.");
    expect(errorDescription('Plain sentence: kept as it is.')).toBe('Plain sentence: kept as it is.');
  });
});
