/**
 * oauth4webapi in the FAPI 2.0 profile against the provider, step by step: PAR with
 * private_key_jwt and DPoP, the authorization response with its iss checked, the code exchange
 * with the same DPoP key, the ID token decrypted and its claims checked (iss, aud, nonce, exp),
 * then userinfo with a DPoP proof and the attributes decrypted.
 */
import { createPrivateKey } from 'node:crypto';
import { compactDecrypt, importJWK } from 'jose';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestProvider, type TestProvider } from '../../src/provider/index.js';
import { decryptAttributes } from './decrypt-userinfo.js';

let test: TestProvider;
let as: oauth.AuthorizationServer;
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  test = await createTestProvider({ profile: 'fapi2', autoApprove: true });
  const issuer = new URL(test.provider.issuer);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' }),
  );
});
afterAll(() => test.close());

describe('oauth4webapi in the FAPI 2.0 profile against the provider', () => {
  it('PAR, authorize with request_uri, DPoP-bound code exchange, the encrypted ID token, userinfo with DPoP', async () => {
    const fapi = test.client.fapi!;
    const rp: oauth.Client = { client_id: test.client.clientId, id_token_signed_response_alg: 'PS256' };
    const auth = oauth.PrivateKeyJwt({
      key: (await importJWK(fapi.signingKey, 'ES256')) as oauth.CryptoKey,
      kid: fapi.signingKey.kid!,
    });
    const DPoP = oauth.DPoP(rp, await oauth.generateKeyPair('ES256'));
    const decryptionKey = (await importJWK(fapi.encryptionKey, fapi.encryptionKey.alg)) as oauth.CryptoKey;
    const decrypt: oauth.JweDecryptFunction = async (jwe) =>
      new TextDecoder().decode(
        (
          await compactDecrypt(jwe, decryptionKey, {
            keyManagementAlgorithms: [fapi.encryptionKey.alg!],
            contentEncryptionAlgorithms: ['A256GCM'],
          })
        ).plaintext,
      );

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const pushed = await oauth.pushedAuthorizationRequest(
      as,
      rp,
      auth,
      {
        response_type: 'code',
        redirect_uri: test.client.redirectUri,
        scope: 'openid profile.name',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      },
      { ...insecure, DPoP },
    );
    const { request_uri } = await oauth.processPushedAuthorizationResponse(as, rp, pushed);
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: rp.client_id, request_uri }).toString();
    const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
    const params = oauth.validateAuthResponse(as, rp, back, state);

    const response = await oauth.authorizationCodeGrantRequest(
      as,
      rp,
      auth,
      params,
      test.client.redirectUri,
      verifier,
      { ...insecure, DPoP },
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, rp, response, {
      expectedNonce: nonce,
      requireIdToken: true,
      [oauth.jweDecrypt]: decrypt,
    });
    expect(tokens.token_type).toBe('dpop');
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims.aud).toBe(rp.client_id);

    const userinfo = await oauth.userInfoRequest(as, rp, tokens.access_token, { ...insecure, DPoP });
    const body = await oauth.processUserInfoResponse(as, rp, claims.sub, userinfo);
    expect(await decryptAttributes(body, createPrivateKey(test.client.privateKey))).toEqual({
      'profile.name': test.provider.personas[0]!['profile.name'],
    });
  });
});
