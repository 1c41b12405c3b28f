/**
 * openid-client 6 configured for FAPI 2.0 against the provider: PAR, DPoP (with the server nonce
 * retry), private_key_jwt, the encrypted ID token and the iss response parameter, over real
 * HTTP, then the userinfo attributes decrypted as the spec describes.
 */
import { createPrivateKey } from 'node:crypto';
import { importJWK } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestProvider, type TestProvider } from '../../src/provider/index.js';
import { decryptAttributes } from './decrypt-userinfo.js';

let test: TestProvider;

async function configure(provider: TestProvider): Promise<client.Configuration> {
  const fapi = provider.client.fapi!;
  const signing = (await importJWK(fapi.signingKey, 'ES256')) as client.CryptoKey;
  const config = await client.discovery(
    new URL(provider.provider.issuer),
    provider.client.clientId,
    { token_endpoint_auth_method: 'private_key_jwt', id_token_signed_response_alg: 'PS256' },
    client.PrivateKeyJwt({ key: signing, kid: fapi.signingKey.kid! }),
    { execute: [client.allowInsecureRequests] },
  );
  const decryption = (await importJWK(fapi.encryptionKey, fapi.encryptionKey.alg)) as client.CryptoKey;
  client.enableDecryptingResponses(config, ['A256GCM'], {
    key: decryption,
    alg: fapi.encryptionKey.alg!,
    kid: fapi.encryptionKey.kid!,
  });
  return config;
}

async function login(provider: TestProvider, config: client.Configuration): Promise<void> {
  const dpopKeys = await client.randomDPoPKeyPair('ES256');
  const DPoP = client.getDPoPHandle(config, dpopKeys);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = await client.buildAuthorizationUrlWithPAR(
    config,
    {
      redirect_uri: provider.client.redirectUri,
      scope: 'openid profile.name profile.nric_number',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      authentication_context_message: 'Sign in to the interop test',
    },
    { DPoP },
  );
  expect([...url.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const callback = new URL(res.headers.get('location') ?? '');
  const tokens = await client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
    undefined,
    { DPoP },
  );
  expect(tokens.token_type.toLowerCase()).toBe('dpop');
  const claims = tokens.claims()!;
  expect(claims.iss).toBe(provider.provider.issuer);
  expect(claims.aud).toBe(provider.client.clientId);
  const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub, { DPoP });
  const persona = provider.provider.personas[0]!;
  expect(await decryptAttributes(userinfo, createPrivateKey(provider.client.privateKey))).toEqual({
    'profile.name': persona['profile.name'],
    'profile.nric_number': persona['profile.nric_number'],
  });
}

beforeAll(async () => {
  test = await createTestProvider({ profile: 'fapi2', autoApprove: true });
});
afterAll(() => test.close());

describe('openid-client 6 in the FAPI 2.0 profile against the provider', () => {
  it('completes the login (PAR, DPoP, private_key_jwt, encrypted ID token, iss) and decrypts the userinfo attributes', async () => {
    await login(test, await configure(test));
    expect(test.provider.audit()).toEqual([]);
  });

  it('answers the DPoP-Nonce challenge with its one retry', async () => {
    const nonced = await createTestProvider({ profile: 'fapi2', autoApprove: true, dpopNonce: true });
    try {
      await login(nonced, await configure(nonced));
    } finally {
      await nonced.close();
    }
  });

  it('refuses a discovery document naming another issuer (the issuer_mismatch fault)', async () => {
    test.provider.faults.inject({ kind: 'issuer_mismatch' });
    await expect(configure(test)).rejects.toThrow(/issuer/);
    await configure(test);
  });

  it('decrypts an RSA-OAEP-256 ID token too', async () => {
    const rsa = await createTestProvider({
      profile: 'fapi2',
      autoApprove: true,
      idTokenEncryptedResponseAlg: 'RSA-OAEP-256',
    });
    try {
      await login(rsa, await configure(rsa));
    } finally {
      await rsa.close();
    }
  });
});
