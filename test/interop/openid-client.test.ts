/**
 * openid-client 6 (with its signature checks on) against the provider: discovery, the code flow
 * with PKCE, state, nonce and max_age, the ID token, userinfo, and prompt=none.
 */
import { createPrivateKey } from 'node:crypto';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';
import { decryptAttributes } from './decrypt-userinfo.js';

let started: StartedProvider;
let config: client.Configuration;

beforeAll(async () => {
  started = await startTestProvider({ autoApprove: 'chandra' });
  config = await client.discovery(
    new URL(started.provider.issuer),
    TEST_CLIENT.clientId,
    TEST_CLIENT.clientSecret,
    client.ClientSecretBasic(TEST_CLIENT.clientSecret),
    { execute: [client.allowInsecureRequests] },
  );
  client.enableNonRepudiationChecks(config);
});
afterAll(() => started.close());

async function begin(
  extra: Record<string, string> = {},
): Promise<{ callback: URL; verifier: string; state: string; nonce: string }> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: TEST_CLIENT.redirectUri,
    scope: 'openid profile.name profile.nric_number profile.passport_expiry_date',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return { callback: new URL(res.headers.get('location') ?? ''), verifier, state, nonce };
}

describe('openid-client 6 against the provider', () => {
  it('completes the code flow with max_age, checks the ID token signature and auth_time, and decrypts userinfo', async () => {
    const { callback, verifier, state, nonce } = await begin({ max_age: '300' });
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      maxAge: 300,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims?.iss).toBe(started.provider.issuer);
    expect(typeof claims?.auth_time).toBe('number');
    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims!.sub);
    const persona = started.provider.personas.find((p) => p.id === 'chandra')!;
    expect(await decryptAttributes(userinfo, createPrivateKey(testKeyPair('rp').privateKeyPem))).toEqual({
      'profile.name': persona['profile.name'],
      'profile.nric_number': persona['profile.nric_number'],
      'profile.passport_expiry_date': persona['profile.passport_expiry_date'],
    });
  });

  it('gets login_required for prompt=none, as an authorization error it understands', async () => {
    const { callback, verifier, state } = await begin({ prompt: 'none' });
    await expect(
      client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }),
    ).rejects.toMatchObject({
      error: 'login_required',
    });
  });
});
