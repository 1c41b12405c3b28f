/**
 * The conformance plan and the audit of a provider configured as a national service's FAPI 2.0
 * login (issuer /fapi, ES256 ID tokens encrypted A256CBC-HS512, no iss, no userinfo): the plan
 * leaves out what cannot apply, a strict relying party passes every case it reports, a lax one
 * fails every case it must refuse, and unreported ID-token cases stay inconclusive.
 */
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestProvider, type ConformanceResults, type TestProvider } from '../../../src/provider/index.js';
import { assertion, decryptIdToken, DpopKey, loginParams } from './support.js';

let test: TestProvider;
let dpop: DpopKey;
beforeAll(async () => {
  test = await createTestProvider({
    profile: 'fapi2',
    autoApprove: true,
    issuerPath: '/fapi',
    authorizationResponseIss: false,
    userinfo: false,
    idTokenSignedResponseAlg: 'ES256',
    idTokenEncryptedResponseEnc: 'A256CBC-HS512',
  });
  dpop = await DpopKey.make();
});
afterAll(() => test.close());

async function post(path: string, fields: Record<string, string>): Promise<Response> {
  const url = `${test.provider.issuer}${path}`;
  const body = new URLSearchParams({
    ...fields,
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: await assertion(test),
  });
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop.proof(test, 'POST', url) },
    body,
  });
}

/** One login; true when the app ends signed in (strict: only when every check passed). */
async function login(strict: boolean, extra: Record<string, string> = {}): Promise<boolean> {
  const { params, verifier } = loginParams(test, { scope: 'openid', ...extra });
  const { request_uri } = (await (await post('/oauth/par', params)).json()) as { request_uri: string };
  const query = new URLSearchParams({ client_id: test.client.clientId, request_uri });
  const back = new URL(
    (await fetch(`${test.provider.issuer}/oauth/authorize?${query}`, { redirect: 'manual' })).headers.get('location') ??
      '',
  );
  // Not advertised, so its absence is fine; one that is present is still checked (RFC 9207 2.4).
  const iss = back.searchParams.get('iss');
  if (strict && (back.searchParams.get('state') !== params['state'] || (iss !== null && iss !== test.provider.issuer)))
    return false;
  const res = await post('/oauth/token', {
    grant_type: 'authorization_code',
    redirect_uri: test.client.redirectUri,
    code: back.searchParams.get('code') ?? '',
    code_verifier: verifier,
  });
  const tokens = (await res.json()) as { access_token: string; id_token: string; token_type: string };
  if (!strict) return true;
  if (tokens.token_type.toLowerCase() !== 'dpop' || tokens.id_token.split('.').length !== 5) return false;
  try {
    const { payload } = await jwtVerify(
      await decryptIdToken(test, tokens.id_token),
      createRemoteJWKSet(new URL(`${test.provider.issuer}/.well-known/jwks.json`)),
      {
        algorithms: ['ES256'],
        issuer: test.provider.issuer,
        audience: test.client.clientId,
        requiredClaims: ['exp', 'iat', 'sub', 'aud', 'iss'],
        currentDate: new Date(test.provider.clock()),
      },
    );
    if (payload.nonce !== params['nonce']) return false;
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== test.client.clientId) return false;
    if (typeof payload.iat === 'number' && payload.iat > test.provider.clock() / 1000 + 60) return false;
    return (
      payload.at_hash ===
      createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url')
    );
  } catch {
    return false;
  }
}

async function runPlan(strict: boolean, report = true): Promise<ConformanceResults> {
  test.provider.conformance.start();
  for (const c of test.provider.conformance.cases) {
    const signedIn = await login(strict);
    expect(test.provider.conformance.current()).toBe(c.id);
    if (report) test.provider.conformance.report(c.id, signedIn);
  }
  return test.provider.conformance.finish();
}

describe("the conformance plan of a national service's FAPI login (no iss, no userinfo, ES256)", () => {
  it('leaves out the userinfo cases and iss_param_missing, and keeps the others', () => {
    test.provider.conformance.start();
    const ids = test.provider.conformance.cases.map((c) => c.id);
    expect(ids.filter((id) => id.startsWith('userinfo_'))).toEqual([]);
    expect(ids).not.toContain('iss_param_missing');
    for (const id of [
      'baseline',
      'alternate_alg',
      'iss_param_invalid',
      'unencrypted_id_token',
      'alg_none',
      'hs256_public_key',
      'rotated_kid',
    ])
      expect(ids).toContain(id);
    test.provider.conformance.finish();
  });

  it('a strict relying party passes every case it reports', async () => {
    const results = await runPlan(true);
    expect(results.cases.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.status} (${c.reason})`)).toEqual(
      [],
    );
  });

  it('a relying party that checks nothing fails every case it must refuse', async () => {
    const results = await runPlan(false);
    const mustRefuse = results.cases.filter((c) => c.expect === 'reject' && c.requirement === 'must');
    expect(mustRefuse.length).toBeGreaterThan(10);
    expect(mustRefuse.filter((c) => c.status !== 'fail').map((c) => c.id)).toEqual([]);
  });

  it('without reports, the ID-token cases are inconclusive: no userinfo call can show a sign-in', async () => {
    const results = await runPlan(true, false);
    const idTokenCases = results.cases.filter((c) => c.level === 'id_token' || c.level === 'token_response');
    expect(idTokenCases.length).toBeGreaterThan(10);
    expect(idTokenCases.every((c) => c.status === 'inconclusive' && /served no userinfo/.test(c.reason))).toBe(true);
    expect(results.cases.find((c) => c.id === 'iss_param_invalid')?.status).toBe('pass');
  });

  it('the audit still sees what the app does at authorize and token', async () => {
    await login(true, { nonce: '' });
    expect(test.provider.audit().map((f) => f.code)).toContain('nonce_missing');
  });
});
