/**
 * The offline conformance plan against relying parties: our IdClient passes every case; an app
 * that does not check the ID token fails the ID-token cases (and the audit says so); the official
 * client's outcome is pinned case by case.
 */
import { SgidClient, generatePkcePair as sgidPkce } from '@opengovsg/sgid-client';
import express from 'express';
import session from 'express-session';
import { decodeJwt } from 'jose';
import { constants, createPublicKey, privateDecrypt, publicEncrypt, type KeyObject } from 'node:crypto';
import passport from 'passport';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { generatePkcePair, generateState, IdClient } from '../../src/client.js';
import {
  CONFORMANCE_CASES,
  createTestProvider,
  type ConformanceResults,
  type TestProvider,
} from '../../src/provider/index.js';
import { validateIdToken } from '../../src/client/id-token.js';
import { IdError } from '../../src/errors.js';
import { formatConformanceTable } from '../../src/provider/testing/conformance.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { pooledKeyObjects } from '../helpers/keys.js';

let kit: TestProvider | undefined;
afterEach(async () => {
  await kit?.close();
  kit = undefined;
});

type Attempt = () => Promise<boolean>;

/** One login through a browser-less authorize, then the app's own callback and userinfo. */
function codeFrom(location: string | null): string {
  return new URL(location ?? '').searchParams.get('code') ?? '';
}

function stateMatches(location: string | null, sent: string): boolean {
  return new URL(location ?? '').searchParams.get('state') === sent;
}

function idClientAttempt(k: TestProvider, errors: string[] = []): Attempt {
  const app = new IdClient({ ...k.client, hostname: k.baseUrl });
  return async () => {
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const state = generateState();
    const { url, nonce } = app.authorizationUrl({ state, codeChallenge, scope: 'openid profile.name' });
    const back = (await fetch(url, { redirect: 'manual' })).headers.get('location');
    // An app using IdClient compares the state itself (the router does it for Passport apps).
    if (!stateMatches(back, state)) {
      errors.push('state_mismatch');
      return false;
    }
    const code = codeFrom(back);
    try {
      const { sub, accessToken } = await app.callback({ code, codeVerifier, nonce });
      return (await app.userinfo({ sub, accessToken })).data['profile.name'] !== undefined;
    } catch (err) {
      errors.push(err instanceof IdError ? err.code : 'other');
      return false;
    }
  };
}

/** Run the whole plan: report only the userinfo-level cases; the provider decides the rest. */
async function runPlan(k: TestProvider, attempt: Attempt): Promise<ConformanceResults> {
  k.provider.conformance.start();
  for (const c of k.provider.conformance.cases) {
    const signedIn = await attempt();
    expect(k.provider.conformance.current()).toBe(c.id);
    if (c.level === 'userinfo') k.provider.conformance.report(c.id, signedIn);
  }
  return k.provider.conformance.finish();
}

/** The auto-approved authorization for `query`, its code redeemed at the token endpoint by the kit's client. */
async function authorizeAndRedeem(
  k: TestProvider,
  query: URLSearchParams,
  codeVerifier: string,
): Promise<{ access_token: string; id_token: string }> {
  const code = codeFrom(
    (await fetch(`${k.baseUrl}/v2/oauth/authorize?${query.toString()}`, { redirect: 'manual' })).headers.get(
      'location',
    ),
  );
  const response = await fetch(`${k.baseUrl}/v2/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_id: k.client.clientId,
      client_secret: k.client.clientSecret,
      grant_type: 'authorization_code',
      code,
      code_verifier: codeVerifier,
      redirect_uri: k.client.redirectUri,
    }),
  });
  return (await response.json()) as { access_token: string; id_token: string };
}

/** Whether this Node refuses RSA PKCS#1 v1.5 decryption (`RSA1_5`): Node 20 does, 22 and later do not. */
function nodeRefusesPkcs1Decryption(): boolean {
  const { publicKey, privateKey } = pooledKeyObjects();
  const sealed = publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.from('probe'));
  try {
    privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, sealed);
    return false;
  } catch {
    return true;
  }
}

const statuses = (r: ConformanceResults): Record<string, string> =>
  Object.fromEntries(r.cases.map((c) => [c.id, c.status]));

describe('conformance plan', () => {
  it('our IdClient passes every case', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const errors: string[] = [];
    const results = await runPlan(kit, idClientAttempt(kit, errors));
    // The userinfo cases are refused for their own reasons, too.
    expect(errors.slice(-3)).toEqual([
      'userinfo_sub_mismatch',
      'userinfo_data_decrypt_failed',
      'userinfo_alg_not_allowed',
    ]);
    expect(results.cases.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.status} (${c.reason})`)).toEqual(
      [],
    );
    expect(results.summary).toEqual({ pass: results.cases.length, fail: 0, inconclusive: 0, not_run: 0 });
    expect(kit.provider.audit()).toEqual([]);
    const table = formatConformanceTable(results);
    expect(table).toMatch(/alg_none\s+must\s+reject\s+PASS/);
    expect(table).toMatch(/iat_in_future\s+stricter\s+reject\s+PASS/);
    expect(table).toMatch(/21 passed, 0 failed, 0 inconclusive, 0 not run\n$/);
    expect(errors).toContain('state_mismatch');
  });

  it('each hostile ID token is broken the way its case says, and the ID-token check refuses it with the matching code', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const k = kit;
    const seen: Record<string, { header: Record<string, unknown>; claims: Record<string, unknown>; error: string }> =
      {};
    const keyFor = async (kid: string | undefined): Promise<KeyObject> => {
      const { keys } = (await (await fetch(`${k.baseUrl}/v2/.well-known/jwks.json`)).json()) as {
        keys: Array<{ kid: string; kty: string; n: string; e: string }>;
      };
      const jwk = keys.find((key) => key.kid === kid);
      if (!jwk) throw new IdError('id_token_key_not_found', 'no such kid');
      return createPublicKey({ key: jwk, format: 'jwk' });
    };
    k.provider.conformance.start();
    for (const c of k.provider.conformance.cases) {
      const { codeVerifier, codeChallenge } = generatePkcePair();
      const nonce = generateState();
      const q = new URLSearchParams({
        response_type: 'code',
        client_id: k.client.clientId,
        redirect_uri: k.client.redirectUri,
        scope: 'openid',
        state: generateState(),
        nonce,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      });
      const tokens = await authorizeAndRedeem(k, q, codeVerifier);
      let error = '';
      try {
        await validateIdToken(tokens.id_token, {
          issuer: k.provider.issuer,
          clientId: k.client.clientId,
          nonce,
          accessToken: tokens.access_token,
          clockTolerance: 60,
          clock: Date.now,
          keyFor,
        });
      } catch (err) {
        error = err instanceof IdError ? err.code : String(err);
      }
      const [h = '', p = ''] = tokens.id_token.split('.');
      seen[c.id] = {
        header: JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>,
        claims: decodeJwt(`e30.${p}.`) as Record<string, unknown>,
        error,
      };
    }
    k.provider.conformance.finish();
    const base = seen['baseline']!;
    expect(seen['alg_none']!.header.alg).toBe('none');
    expect(seen['hs256_public_key']!.header).toMatchObject({ alg: 'HS256', kid: base.header.kid });
    expect(seen['invalid_signature']!.header).toMatchObject({ alg: 'RS256', kid: base.header.kid });
    expect(seen['wrong_iss']!.claims.iss).toBe(`${k.provider.issuer}/elsewhere`);
    expect(seen['wrong_aud']!.claims.aud).toBe('another-relying-party');
    expect(seen['multiple_aud_without_azp']!.claims.aud).toEqual([k.client.clientId, 'another-relying-party']);
    expect(seen['multiple_aud_without_azp']!.claims).not.toHaveProperty('azp');
    expect(seen['aud_other_client_with_azp']!.claims).toMatchObject({
      aud: 'another-relying-party',
      azp: k.client.clientId,
    });
    expect(Number(seen['expired']!.claims.exp)).toBeLessThan(Date.now() / 1000 - 3000);
    expect(Number(seen['iat_in_future']!.claims.iat)).toBeGreaterThan(Date.now() / 1000 + 3000);
    for (const claim of ['sub', 'iat', 'exp']) expect(seen[`missing_${claim}`]!.claims).not.toHaveProperty(claim);
    expect(seen['nonce_missing']!.claims).not.toHaveProperty('nonce');
    expect(seen['rotated_kid']!.header.kid).not.toBe(base.header.kid);
    // Each refused for its own reason; the userinfo cases carry a genuine ID token.
    expect(Object.fromEntries(Object.entries(seen).map(([id, v]) => [id, v.error]))).toEqual({
      baseline: '',
      invalid_signature: 'id_token_signature_invalid',
      alg_none: 'id_token_alg_not_allowed',
      hs256_public_key: 'id_token_alg_not_allowed',
      wrong_iss: 'id_token_iss_mismatch',
      wrong_aud: 'id_token_aud_mismatch',
      multiple_aud_without_azp: 'id_token_azp_mismatch',
      aud_other_client_with_azp: 'id_token_aud_mismatch',
      expired: 'id_token_expired',
      iat_in_future: 'id_token_issued_in_future',
      missing_sub: 'id_token_claim_missing',
      missing_iat: 'id_token_claim_missing',
      missing_exp: 'id_token_claim_missing',
      nonce_mismatch: 'nonce_mismatch',
      nonce_missing: 'nonce_missing',
      wrong_at_hash: 'at_hash_mismatch',
      state_modified: '',
      userinfo_sub_mismatch: '',
      userinfo_tampered_jwe: '',
      userinfo_rsa1_5_key: '',
      rotated_kid: '',
    });
  });

  it('an Express app with NdIdStrategy and ndIdRouter passes every case, each login in a fresh browser', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const k = kit;
    const authenticator = new passport.Passport();
    authenticator.serializeUser((u, done) => done(null, u));
    authenticator.deserializeUser((u: Express.User, done) => done(null, u));
    authenticator.use(new NdIdStrategy({ ...k.client, callbackURL: k.client.redirectUri, hostname: k.baseUrl }));
    const app = express();
    app.use(session({ secret: 'conformance-test', resave: false, saveUninitialized: false }));
    app.use(authenticator.session());
    app.use('/auth', ndIdRouter({ passport: authenticator, successRedirect: '/me' }));
    app.get('/me', (req, res) =>
      res.json({ name: (req.user as { data?: Record<string, string> } | undefined)?.data?.['profile.name'] ?? null }),
    );
    const attempt: Attempt = async () => {
      const browser = request.agent(app);
      const login = await browser.get('/auth/login');
      const back = new URL(
        (await fetch(login.headers.location as string, { redirect: 'manual' })).headers.get('location') ?? '',
      );
      await browser.get(back.pathname + back.search);
      return ((await browser.get('/me')).body as { name: string | null }).name !== null;
    };
    const results = await runPlan(kit, attempt);
    expect(results.cases.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.status}`)).toEqual([]);
    expect(kit.provider.audit()).toEqual([]);
  });

  it('an app that decodes the ID token without checking it fails the ID-token cases, and the audit reports it', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const k = kit;
    const careless: Attempt = async () => {
      const { codeVerifier, codeChallenge } = generatePkcePair();
      const q = new URLSearchParams({
        response_type: 'code',
        client_id: k.client.clientId,
        redirect_uri: k.client.redirectUri,
        scope: 'openid',
        state: generateState(),
        nonce: generateState(),
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
      });
      const token = await authorizeAndRedeem(k, q, codeVerifier);
      decodeJwt(token.id_token); // read, never verified
      const info = await fetch(`${k.baseUrl}/v2/oauth/userinfo`, {
        headers: { authorization: `Bearer ${token.access_token}` },
      });
      return info.status === 200;
    };
    const results = await runPlan(kit, careless);
    const byStatus = statuses(results);
    for (const c of results.cases) {
      if (c.level === 'id_token') expect(byStatus[c.id], c.id).toBe(c.expect === 'accept' ? 'pass' : 'fail');
      else expect(byStatus[c.id], c.id).toBe('fail'); // it reported signed in
    }
    const audit = kit.provider.audit(kit.client.clientId).find((f) => f.code === 'id_token_not_checked');
    expect(audit?.count).toBe(results.cases.filter((c) => c.level === 'id_token' && c.expect === 'reject').length);
  });

  it('decides from what the app does next: not_run without redemption, inconclusive without a report, and refuses bad reports', async () => {
    kit = await createTestProvider({ autoApprove: true, conformance: true });
    const k = kit;
    const authorizeOnly = async (): Promise<void> => {
      const { codeChallenge } = generatePkcePair();
      const app = new IdClient({ ...k.client, hostname: k.baseUrl });
      await fetch(app.authorizationUrl({ state: generateState(), codeChallenge }).url, { redirect: 'manual' });
    };
    await authorizeOnly();
    expect(k.provider.conformance.current()).toBe('baseline');
    await authorizeOnly();
    let r = k.provider.conformance.results();
    expect(statuses(r)['baseline']).toBe('not_run');
    expect(statuses(r)['invalid_signature']).toBe('inconclusive');
    expect(statuses(r)['alg_none']).toBe('not_run');
    expect(() => k.provider.conformance.report('alg_none', true)).toThrow(/has not been run yet/);
    expect(() => k.provider.conformance.report('nope' as 'alg_none', true)).toThrow(/unknown case/);

    // Over HTTP: the results, and a report from the app's test.
    const res = await fetch(`${k.baseUrl}/_provider/conformance/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ caseId: 'invalid_signature', signedIn: true }),
    });
    expect(res.status).toBe(204);
    const bad = await fetch(`${k.baseUrl}/_provider/conformance/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ caseId: 'invalid_signature', signedIn: 'yes' }),
    });
    expect(bad.status).toBe(400);
    r = (await (await fetch(`${k.baseUrl}/_provider/conformance`)).json()) as ConformanceResults;
    expect(statuses(r)['invalid_signature']).toBe('fail');
    expect(r.running).toBe(true);
  });

  it('the official @opengovsg/sgid-client: pinned outcome per case', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const k = kit;
    const client = new SgidClient({ ...k.client, hostname: k.baseUrl });
    const sgidErrors: string[] = [];
    const attempt: Attempt = async () => {
      const { codeVerifier, codeChallenge } = sgidPkce();
      const state = generateState();
      const { url, nonce } = client.authorizationUrl({ state, scope: ['openid', 'profile.name'], codeChallenge });
      const back = (await fetch(url, { redirect: 'manual' })).headers.get('location');
      // Its README has the app compare the state; this app does.
      if (!stateMatches(back, state)) return false;
      const code = codeFrom(back);
      try {
        const { sub, accessToken } = await client.callback({ code, nonce, codeVerifier });
        return (await client.userinfo({ sub, accessToken })).data['profile.name'] !== undefined;
      } catch (err) {
        sgidErrors.push(err instanceof Error ? err.message : String(err));
        return false;
      }
    };
    sgidErrors.push('(baseline)');
    const results = await runPlan(kit, attempt);
    // It signs in and refuses the hostile cases but two: it accepts an ID token issued an hour in
    // the future, and meets the rotated key as "no valid key found" (no key-set refetch on an
    // unknown kid within its refresh interval). A third depends on Node, not on the client: it
    // decrypts with node:crypto whatever the header names, so an RSA1_5 block key is refused
    // only where Node refuses PKCS#1 v1.5 decryption, which Node 20 does (since 20.11.1) and
    // Node 22 and later do not (OpenSSL's implicit rejection made it safe again).
    const expected: Record<string, string> = Object.fromEntries(results.cases.map((c) => [c.id, 'pass']));
    expected['iat_in_future'] = 'fail';
    expected['rotated_kid'] = 'fail';
    expected['userinfo_rsa1_5_key'] = nodeRefusesPkcs1Decryption() ? 'pass' : 'fail';
    expect(nodeRefusesPkcs1Decryption()).toBe(Number(process.versions.node.split('.')[0]) <= 20);
    expect(statuses(results), formatConformanceTable(results)).toEqual(expected);
    expect(sgidErrors.at(-1)).toMatch(/no valid key found in issuer's jwks_uri/);
  });
});

describe('conformance plan: state and azp cases', () => {
  /** One login of an app that redeems whatever code comes back, checking nothing but the ID token. */
  function ignoresState(k: TestProvider): Attempt {
    const app = new IdClient({ ...k.client, hostname: k.baseUrl });
    return async () => {
      const { codeVerifier, codeChallenge } = generatePkcePair();
      const { url, nonce } = app.authorizationUrl({
        state: generateState(),
        codeChallenge,
        scope: 'openid profile.name',
      });
      const code = codeFrom((await fetch(url, { redirect: 'manual' })).headers.get('location'));
      try {
        const { sub, accessToken } = await app.callback({ code, codeVerifier, nonce });
        return (await app.userinfo({ sub, accessToken })).data['profile.name'] !== undefined;
      } catch {
        return false;
      }
    };
  }

  it('catches an app that ignores a modified state in the authorization response: state_modified fails, every ID-token case still passes', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const results = await runPlan(kit, ignoresState(kit));
    const byStatus = statuses(results);
    expect(byStatus['state_modified']).toBe('fail');
    expect(results.cases.find((c) => c.id === 'state_modified')?.reason).toMatch(/redeemed the code.*state/);
    expect(byStatus['aud_other_client_with_azp']).toBe('pass');
    expect(results.summary.fail).toBe(1);
  });

  it('the modified state is another value than the one sent, outside the plan it is the one sent', async () => {
    kit = await createTestProvider({ autoApprove: true });
    const app = new IdClient({ ...kit.client, hostname: kit.baseUrl });
    const stateBack = async (): Promise<{ sent: string; back: string | null }> => {
      const sent = generateState();
      const { url } = app.authorizationUrl({ state: sent, codeChallenge: generatePkcePair().codeChallenge });
      return {
        sent,
        back: new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get(
          'state',
        ),
      };
    };
    const outside = await stateBack();
    expect(outside.back).toBe(outside.sent);
    kit.provider.conformance.start();
    for (const c of kit.provider.conformance.cases) {
      const { sent, back } = await stateBack();
      if (c.id === 'state_modified') {
        expect(back).not.toBe(sent);
        expect(back).toMatch(/^[A-Za-z0-9_-]{32}$/);
      } else expect(back).toBe(sent);
    }
    const r = kit.provider.conformance.finish();
    // Not redeemed: the state case passes, the others were never run.
    expect(statuses(r)['state_modified']).toBe('pass');
  });

  it('marks each case as an OpenID MUST or stricter than the specifications, with its basis', () => {
    const byId = Object.fromEntries(CONFORMANCE_CASES.map((c) => [c.id, c.requirement]));
    expect(byId).toMatchObject({
      state_modified: 'must',
      aud_other_client_with_azp: 'must',
      wrong_aud: 'must',
      nonce_mismatch: 'must',
      multiple_aud_without_azp: 'stricter',
      iat_in_future: 'stricter',
      wrong_at_hash: 'stricter',
      userinfo_rsa1_5_key: 'stricter',
    });
    for (const c of CONFORMANCE_CASES) expect(c.basis, c.id).toMatch(/\S{3,}/);
  });
});
