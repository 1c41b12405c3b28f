/**
 * Our IdClient in the FAPI 2.0 profile runs the provider's extended conformance plan over HTTP,
 * one login per case, as an app does it (PAR, the callback's state and iss, token with DPoP,
 * the encrypted ID token, userinfo), and passes every case: it refuses each one it must
 * and signs in on each positive one (aud as an array, token_type in lower case, no expires_in,
 * a rotated signing key).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { generatePkcePair, generateState } from '../../src/pkce.js';
import { createTestProvider, formatConformanceTable, type TestProvider } from '../../src/provider/index.js';

let test: TestProvider;
let app: IdClient;

beforeAll(async () => {
  test = await createTestProvider({ profile: 'fapi2', autoApprove: true });
  const fapi = test.client.fapi!;
  app = new IdClient({
    clientId: test.client.clientId,
    privateKey: test.client.privateKey,
    redirectUri: test.client.redirectUri,
    hostname: test.baseUrl,
    profile: 'fapi2',
    clientAssertionKey: fapi.signingKey as never,
    idTokenDecryptionKey: fapi.encryptionKey as never,
    // What the test provider registered: the client asks for encryption, so a plain ID token is refused.
    idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
    clock: test.provider.clock,
  });
});
afterAll(async () => {
  app.close();
  await test.close();
});

/** One login as an app does it; true when the person ends signed in. */
async function signIn(): Promise<boolean> {
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const state = generateState();
  const { key, stored } = await app.dpopKeyForLogin();
  const { url, nonce } = await app.pushAuthorizationRequest({
    state,
    codeChallenge,
    scope: 'openid profile.name',
    dpopKey: key,
  });
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
  if (back.searchParams.get('state') !== state) return false; // the callback refuses another state
  try {
    const query = Object.fromEntries(back.searchParams);
    await app.checkAuthorizationResponse(query);
    const dpopKey = await app.restoreDpopKey(stored);
    const { sub, accessToken } = await app.callback({
      code: query.code ?? '',
      codeVerifier,
      nonce: nonce ?? null,
      ...(query.iss === undefined ? {} : { iss: query.iss }),
      dpopKey,
    });
    await app.userinfo({ sub, accessToken, dpopKey });
    return true;
  } catch {
    return false;
  }
}

it('passes every case of the extended (FAPI 2.0) conformance plan', async () => {
  test.provider.conformance.start();
  const cases = test.provider.conformance.cases;
  expect(cases.map((c) => c.id)).toEqual(
    expect.arrayContaining([
      'unencrypted_id_token',
      'iss_param_missing',
      'iss_param_invalid',
      'token_type_lowercase',
      'expires_in_missing',
      'aud_array',
      'alternate_alg',
    ]),
  );
  for (const c of cases) {
    const signedIn = await signIn();
    if (c.level === 'userinfo') test.provider.conformance.report(c.id, signedIn);
  }
  const results = test.provider.conformance.finish();
  expect(results.summary.fail, formatConformanceTable(results)).toBe(0);
  expect(results.summary.pass, formatConformanceTable(results)).toBe(cases.length);
  expect(test.provider.audit(test.client.clientId)).toEqual([]);
}, 60_000);
