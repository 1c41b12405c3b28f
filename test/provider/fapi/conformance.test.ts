/**
 * The extended conformance plan of a FAPI 2.0 client: a strict relying party written out here
 * passes every case; one that checks nothing fails every case it must refuse.
 */
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import type { ConformanceResults } from '../../../src/provider/index.js';
import { authorizeUri, decryptIdToken, loginParams, push, tokenCall, userinfoCall, fapiFixture } from './support.js';

const f = fapiFixture();

/** One login; true when the app ends signed in (it called userinfo). */
async function login(strict: boolean): Promise<boolean> {
  const { params, verifier } = loginParams(f.test);
  const { request_uri } = (await (await push(f.test, f.dpop, params)).json()) as { request_uri: string };
  const back = new URL((await authorizeUri(f.test, request_uri)).headers.get('location') ?? '');
  if (
    strict &&
    (back.searchParams.get('state') !== params['state'] || back.searchParams.get('iss') !== f.test.provider.issuer)
  )
    return false;
  const res = await tokenCall(f.test, f.dpop, { code: back.searchParams.get('code') ?? '', code_verifier: verifier });
  const tokens = (await res.json()) as { access_token: string; id_token: string; token_type: string };
  if (strict) {
    if (tokens.token_type.toLowerCase() !== 'dpop') return false;
    if (tokens.id_token.split('.').length !== 5) return false;
    try {
      const { payload } = await jwtVerify(
        await decryptIdToken(f.test, tokens.id_token),
        createRemoteJWKSet(new URL(`${f.test.baseUrl}/v2/.well-known/jwks.json`)),
        {
          algorithms: ['PS256'],
          issuer: f.test.provider.issuer,
          audience: f.test.client.clientId,
          requiredClaims: ['exp', 'iat', 'sub', 'aud', 'iss'],
          currentDate: new Date(f.test.provider.clock()),
        },
      );
      if (payload.nonce !== params['nonce']) return false;
      if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== f.test.client.clientId) return false;
      if (typeof payload.iat === 'number' && payload.iat > f.test.provider.clock() / 1000 + 60) return false;
      const { createHash } = await import('node:crypto');
      const atHash = createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url');
      if (payload.at_hash !== atHash) return false;
    } catch {
      return false;
    }
  }
  const info = await userinfoCall(f.test, f.dpop, tokens.access_token);
  return info.status === 200;
}

async function runPlan(strict: boolean): Promise<ConformanceResults> {
  f.test.provider.conformance.start();
  for (const c of f.test.provider.conformance.cases) {
    const signedIn = await login(strict);
    expect(f.test.provider.conformance.current()).toBe(c.id);
    if (c.level === 'userinfo') f.test.provider.conformance.report(c.id, strict ? false : signedIn);
  }
  return f.test.provider.conformance.finish();
}

describe('the conformance plan of a FAPI 2.0 client', () => {
  it('is the base plan plus the FAPI cases, the rotation last, each with its requirement and basis', () => {
    f.test.provider.conformance.start();
    const ids = f.test.provider.conformance.cases.map((c) => c.id);
    for (const id of [
      'missing_aud',
      'missing_iss',
      'aud_array',
      'alternate_alg',
      'unencrypted_id_token',
      'iss_param_invalid',
      'iss_param_missing',
      'token_type_lowercase',
      'expires_in_missing',
      'alg_none',
      'state_modified',
      'nonce_missing',
    ]) {
      expect(ids).toContain(id);
    }
    expect(ids.at(-1)).toBe('rotated_kid');
    for (const c of f.test.provider.conformance.cases) expect(c.basis).not.toBe('');
    f.test.provider.conformance.finish();
  });

  it('a strict relying party passes every case but the userinfo ones it reports', async () => {
    const results = await runPlan(true);
    const failed = results.cases
      .filter((c) => c.level !== 'userinfo' && c.status !== 'pass')
      .map((c) => `${c.id}: ${c.status} (${c.reason})`);
    expect(failed).toEqual([]);
  });

  it('a relying party that checks nothing fails every case it must refuse, the FAPI ones included', async () => {
    const results = await runPlan(false);
    const status = Object.fromEntries(results.cases.map((c) => [c.id, c.status]));
    for (const id of [
      'missing_aud',
      'missing_iss',
      'alternate_alg',
      'unencrypted_id_token',
      'iss_param_invalid',
      'iss_param_missing',
      'alg_none',
      'wrong_iss',
      'expired',
      'state_modified',
    ]) {
      expect(status[id], id).toBe('fail');
    }
    for (const id of ['aud_array', 'token_type_lowercase', 'expires_in_missing', 'baseline'])
      expect(status[id], id).toBe('pass');
  });
});
