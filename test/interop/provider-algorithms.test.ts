/**
 * The provider's FAPI 2.0 ID tokens of every algorithm it serves, checked by code nobody here
 * wrote: openid-client 6 (its signature checks on) and oauth4webapi verify PS256, ES256 and EdDSA
 * signatures against the provider's published JWKS, jose verifies them by kid and alg, and
 * openid-client decrypts every key-management and content-encryption algorithm a client can
 * register.
 */
import { createHash } from 'node:crypto';
import { compactDecrypt, createRemoteJWKSet, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { createTestProvider, type TestProvider, type TestProviderOptions } from '../../src/provider/index.js';

const SIGNING = ['PS256', 'ES256', 'EdDSA'] as const;
type Signing = (typeof SIGNING)[number];

async function withProvider(options: TestProviderOptions, run: (test: TestProvider) => Promise<void>): Promise<void> {
  const test = await createTestProvider({ profile: 'fapi2', autoApprove: true, ...options });
  try {
    await run(test);
  } finally {
    await test.close();
  }
}

/** openid-client configured from discovery for the test's FAPI client, the ID token's algorithms named. */
async function configure(test: TestProvider, signing: string, enc: string): Promise<client.Configuration> {
  const fapi = test.client.fapi!;
  const config = await client.discovery(
    new URL(test.provider.issuer),
    test.client.clientId,
    { token_endpoint_auth_method: 'private_key_jwt', id_token_signed_response_alg: signing },
    client.PrivateKeyJwt({
      key: (await importJWK(fapi.signingKey, 'ES256')) as client.CryptoKey,
      kid: fapi.signingKey.kid!,
    }),
    { execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks] },
  );
  const key = (await importJWK(fapi.encryptionKey, fapi.encryptionKey.alg)) as client.CryptoKey;
  client.enableDecryptingResponses(config, [enc], { key, alg: fapi.encryptionKey.alg!, kid: fapi.encryptionKey.kid! });
  return config;
}

/** One FAPI login with openid-client: the token endpoint's response, its ID token checked. */
async function login(
  test: TestProvider,
  config: client.Configuration,
): Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers> {
  const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = await client.buildAuthorizationUrlWithPAR(
    config,
    {
      redirect_uri: test.client.redirectUri,
      scope: 'openid profile.name',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    },
    { DPoP },
  );
  const callback = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
  return client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
    undefined,
    { DPoP },
  );
}

/** The signed ID token inside the encrypted one the provider sent, decrypted by jose with the client's key. */
async function innerJws(test: TestProvider, idToken: string): Promise<string> {
  if (idToken.split('.').length === 3) return idToken;
  const key = test.client.fapi!.encryptionKey;
  return new TextDecoder().decode((await compactDecrypt(idToken, await importJWK(key, key.alg))).plaintext);
}

/** The raw token response of an openid-client login (the ID token as it came over the wire). */
async function rawIdToken(
  test: TestProvider,
  config: client.Configuration,
): Promise<{ idToken: string; accessToken: string }> {
  let idToken = '';
  const original = config[client.customFetch];
  config[client.customFetch] = async (...args) => {
    const res = await (original ?? fetch)(...args);
    if (String(args[0]).endsWith('/oauth/token') && res.status === 200)
      idToken = ((await res.clone().json()) as { id_token: string }).id_token;
    return res;
  };
  const tokens = await login(test, config);
  return { idToken, accessToken: tokens.access_token };
}

describe('ID tokens signed PS256, ES256 and EdDSA (FAPI 2.0 section 5.4.1)', () => {
  for (const alg of SIGNING) {
    it(`${alg}: openid-client 6 verifies the signature against the JWKS, and jose verifies it by kid and alg`, async () => {
      await withProvider({ idTokenSignedResponseAlg: alg }, async (test) => {
        const config = await configure(test, alg, 'A256GCM');
        const { idToken, accessToken } = await rawIdToken(test, config);
        expect(idToken.split('.')).toHaveLength(5);
        const jws = await innerJws(test, idToken);
        const header = decodeProtectedHeader(jws);
        expect(header.alg).toBe(alg);

        const jwks = (await (await fetch(config.serverMetadata().jwks_uri!)).json()) as { keys: JWK[] };
        const published = jwks.keys.find((k) => k.kid === header.kid);
        expect(published).toMatchObject({
          alg,
          use: 'sig',
          kty: alg === 'PS256' ? 'RSA' : alg === 'ES256' ? 'EC' : 'OKP',
        });
        // Only one kind of key per algorithm, each naming its alg, beside the spec's RS256 key.
        expect(jwks.keys.map((k) => k.alg ?? 'RS256').sort()).toEqual([alg, 'RS256'].sort());

        const { payload } = await jwtVerify(jws, createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!)), {
          algorithms: [alg],
          issuer: test.provider.issuer,
          audience: test.client.clientId,
        });
        // at_hash: the left half of the hash of the signature's algorithm (SHA-512 for Ed25519).
        const digest = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256')
          .update(accessToken)
          .digest();
        expect(payload['at_hash']).toBe(digest.subarray(0, digest.length / 2).toString('base64url'));
        expect(config.serverMetadata().id_token_signing_alg_values_supported).toEqual([alg]);
      });
    });
  }

  it('openid-client refuses an ID token of another algorithm than the one it registered', async () => {
    await withProvider({ idTokenSignedResponseAlg: 'ES256' }, async (test) => {
      const refused = await login(test, await configure(test, 'PS256', 'A256GCM')).then(
        () => undefined,
        (err: Error & { cause?: Error }) => err,
      );
      expect(refused?.cause?.message).toMatch(/unexpected JWT "alg" header parameter/);
    });
  });

  for (const alg of SIGNING) {
    it(`${alg}: oauth4webapi validates the ID token's signature (validateApplicationLevelSignature)`, async () => {
      await withProvider({ idTokenSignedResponseAlg: alg }, async (test) => {
        const { claims } = await oauth4webapiLogin(test, alg);
        expect(claims.iss).toBe(test.provider.issuer);
      });
    });
  }
});

/** A whole FAPI login with oauth4webapi, the ID token decrypted by jose and its signature checked. */
async function oauth4webapiLogin(test: TestProvider, alg: Signing): Promise<{ claims: oauth.IDToken }> {
  const insecure = { [oauth.allowInsecureRequests]: true } as const;
  const issuer = new URL(test.provider.issuer);
  const as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' }),
  );
  const fapi = test.client.fapi!;
  const rp: oauth.Client = { client_id: test.client.clientId, id_token_signed_response_alg: alg };
  const auth = oauth.PrivateKeyJwt({
    key: (await importJWK(fapi.signingKey, 'ES256')) as oauth.CryptoKey,
    kid: fapi.signingKey.kid!,
  });
  const DPoP = oauth.DPoP(rp, await oauth.generateKeyPair('ES256'));
  const decryptionKey = await importJWK(fapi.encryptionKey, fapi.encryptionKey.alg);
  const decrypt: oauth.JweDecryptFunction = async (jwe) =>
    new TextDecoder().decode((await compactDecrypt(jwe, decryptionKey)).plaintext);
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const params = {
    response_type: 'code',
    redirect_uri: test.client.redirectUri,
    scope: 'openid',
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  const pushed = await oauth.pushedAuthorizationRequest(as, rp, auth, params, { ...insecure, DPoP });
  const { request_uri } = await oauth.processPushedAuthorizationResponse(as, rp, pushed);
  const url = new URL(as.authorization_endpoint!);
  url.search = new URLSearchParams({ client_id: rp.client_id, request_uri }).toString();
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
  const code = oauth.validateAuthResponse(as, rp, back, state);
  const response = await oauth.authorizationCodeGrantRequest(as, rp, auth, code, test.client.redirectUri, verifier, {
    ...insecure,
    DPoP,
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, rp, response, {
    expectedNonce: nonce,
    requireIdToken: true,
    [oauth.jweDecrypt]: decrypt,
  });
  await oauth.validateApplicationLevelSignature(as, response, insecure);
  return { claims: oauth.getValidatedIdTokenClaims(tokens)! };
}

describe('ID tokens encrypted with every key-management and content encryption a client can register', () => {
  // Each key-management algorithm and each content encryption at least once.
  const pairs = [
    ['ECDH-ES', 'A128GCM'],
    ['ECDH-ES+A128KW', 'A192GCM'],
    ['ECDH-ES+A192KW', 'A256GCM'],
    ['ECDH-ES+A256KW', 'A128CBC-HS256'],
    ['RSA-OAEP-256', 'A192CBC-HS384'],
    ['ECDH-ES+A256KW', 'A256CBC-HS512'],
  ] as const;
  for (const [alg, enc] of pairs) {
    it(`${alg} / ${enc}: openid-client 6 decrypts the ID token and verifies it`, async () => {
      await withProvider(
        { idTokenEncryptedResponseAlg: alg, idTokenEncryptedResponseEnc: enc, idTokenSignedResponseAlg: 'ES256' },
        async (test) => {
          const config = await configure(test, 'ES256', enc);
          expect(config.serverMetadata()).toMatchObject({
            id_token_encryption_alg_values_supported: [alg],
            id_token_encryption_enc_values_supported: [enc],
          });
          const { idToken } = await rawIdToken(test, config);
          expect(decodeProtectedHeader(idToken)).toMatchObject({
            alg,
            enc,
            cty: 'JWT',
            kid: test.client.fapi!.encryptionKey.kid,
          });
        },
      );
    });
  }
});
