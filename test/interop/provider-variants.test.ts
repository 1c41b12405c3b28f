/**
 * The provider configured as the other providers an app will meet, proven with clients nobody
 * here wrote: a national service's FAPI 2.0 login (issuer not at /v2, ES256 ID tokens encrypted
 * ECDH-ES+A256KW / A256CBC-HS512, no iss in authorization responses, no userinfo, a context type
 * beside the context message) with oauth4webapi; another issuer path and no iss with
 * openid-client 6 in the base profile; a client served no userinfo beside one that is.
 */
import { compactDecrypt, importJWK } from 'jose';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { describe, expect, it } from 'vitest';
import { startProvider } from '../helpers/provider.js';
import { fapiTestKeys } from '../../src/provider/testing/create-test-provider.js';
import { OTHER_CLIENT, pkce, providerOptions, TEST_CLIENT } from '../helpers/provider-fixtures.js';

const insecure = { [oauth.allowInsecureRequests]: true } as const;
const REDIRECT = 'http://127.0.0.1:3000/auth/callback';

async function closing<T extends { close(): Promise<void> }>(started: T, run: (s: T) => Promise<void>): Promise<void> {
  try {
    await run(started);
  } finally {
    await started.close();
  }
}

describe("the provider as a national service's FAPI 2.0 login, with oauth4webapi", () => {
  it('signs in from the ES256 ID token alone: issuer /fapi, A256CBC-HS512, no iss, no userinfo, context type and message', async () => {
    const keys = await fapiTestKeys('ECDH-ES+A256KW');
    const started = await startProvider({
      autoApprove: true,
      issuerPath: '/fapi',
      authorizationResponseIss: false,
      userinfo: false,
      clients: [
        {
          clientId: 'login-app',
          redirectUris: [REDIRECT],
          profile: 'fapi2',
          jwks: keys.jwks,
          idTokenSignedResponseAlg: 'ES256',
          idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
          idTokenEncryptedResponseEnc: 'A256CBC-HS512',
        },
      ],
    });
    await closing(started, async ({ provider, baseUrl }) => {
      expect(provider.issuer).toBe(`${baseUrl}/fapi`);
      const issuer = new URL(provider.issuer);
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' }),
      );
      expect(as).toMatchObject({
        authorization_endpoint: `${baseUrl}/fapi/oauth/authorize`,
        pushed_authorization_request_endpoint: `${baseUrl}/fapi/oauth/par`,
        token_endpoint: `${baseUrl}/fapi/oauth/token`,
        jwks_uri: `${baseUrl}/fapi/.well-known/jwks.json`,
        scopes_supported: ['openid'],
        id_token_signing_alg_values_supported: ['ES256'],
        id_token_encryption_alg_values_supported: ['ECDH-ES+A256KW'],
        id_token_encryption_enc_values_supported: ['A256CBC-HS512'],
      });
      expect(as.userinfo_endpoint).toBeUndefined();
      expect(as.authorization_response_iss_parameter_supported).toBeUndefined();
      expect(Object.keys(as).filter((k) => k.includes('userinfo'))).toEqual([]);
      // The spec's paths are not served: everything follows the issuer.
      expect((await fetch(`${baseUrl}/v2/.well-known/openid-configuration`)).status).toBe(404);
      expect((await fetch(`${baseUrl}/fapi/oauth/userinfo`)).status).toBe(404);

      const rp: oauth.Client = { client_id: 'login-app', id_token_signed_response_alg: 'ES256' };
      const auth = oauth.PrivateKeyJwt({
        key: (await importJWK(keys.signingKey, 'ES256')) as oauth.CryptoKey,
        kid: keys.signingKey.kid!,
      });
      const DPoP = oauth.DPoP(rp, await oauth.generateKeyPair('ES256'));
      const decryptionKey = await importJWK(keys.encryptionKey, keys.encryptionKey.alg);
      const decrypt: oauth.JweDecryptFunction = async (jwe) =>
        new TextDecoder().decode(
          (
            await compactDecrypt(jwe, decryptionKey, {
              keyManagementAlgorithms: ['ECDH-ES+A256KW'],
              contentEncryptionAlgorithms: ['A256CBC-HS512'],
            })
          ).plaintext,
        );
      const verifier = oauth.generateRandomCodeVerifier();
      const state = oauth.generateRandomState();
      const nonce = oauth.generateRandomNonce();
      const params = {
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid',
        code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
        authentication_context_type: 'APP_AUTHENTICATION_DEFAULT',
        authentication_context_message: 'Sign in to the test app',
      };
      const refused = await oauth.pushedAuthorizationRequest(
        as,
        rp,
        auth,
        { ...params, scope: 'openid profile.name' },
        { ...insecure, DPoP },
      );
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: 'invalid_scope' });

      const pushed = await oauth.pushedAuthorizationRequest(as, rp, auth, params, { ...insecure, DPoP });
      const { request_uri } = await oauth.processPushedAuthorizationResponse(as, rp, pushed);
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({ client_id: rp.client_id, request_uri }).toString();
      const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
      expect([...back.searchParams.keys()].sort()).toEqual(['code', 'state']);
      const code = oauth.validateAuthResponse(as, rp, back, state);
      const response = await oauth.authorizationCodeGrantRequest(as, rp, auth, code, REDIRECT, verifier, {
        ...insecure,
        DPoP,
      });
      const tokens = await oauth.processAuthorizationCodeResponse(as, rp, response, {
        expectedNonce: nonce,
        requireIdToken: true,
        [oauth.jweDecrypt]: decrypt,
      });
      await oauth.validateApplicationLevelSignature(as, response, insecure);
      const claims = oauth.getValidatedIdTokenClaims(tokens)!;
      expect(claims).toMatchObject({
        iss: provider.issuer,
        aud: 'login-app',
        sub: provider.subjectFor('login-app', provider.personas[0]!.id),
      });
    });
  });

  it('refuses an authentication_context_type that is not a name of capitals, digits and underscores', async () => {
    const started = await startProvider(providerOptions({ autoApprove: true }));
    await closing(started, async ({ baseUrl }) => {
      const { challenge } = pkce();
      const query = (type: string): string =>
        new URLSearchParams({
          response_type: 'code',
          client_id: TEST_CLIENT.clientId,
          redirect_uri: TEST_CLIENT.redirectUri,
          scope: 'openid',
          state: 'state-123456789012345678901',
          nonce: 'nonce-1',
          code_challenge: challenge,
          code_challenge_method: 'S256',
          authentication_context_type: type,
          authentication_context_message: 'Sign in to pay',
        }).toString();
      const bad = await fetch(`${baseUrl}/v2/oauth/authorize?${query('app authentication <b>')}`, {
        redirect: 'manual',
      });
      expect(bad.status).toBe(400);
      expect(await bad.text()).toMatch(/authentication_context_type must be a name of capitals/);
      const good = await fetch(`${baseUrl}/v2/oauth/authorize?${query('APP_PAYMENT_DEFAULT')}`, { redirect: 'manual' });
      expect(good.status).toBe(302);
    });
  });
});

describe('openid-client 6 against the provider at another issuer path, without iss', () => {
  it('discovers every endpoint under /idp and signs in, the ID token verified, no iss sent or advertised', async () => {
    const started = await startProvider(
      providerOptions({ autoApprove: true, issuerPath: '/idp', authorizationResponseIss: false }),
    );
    await closing(started, async ({ provider, baseUrl }) => {
      const config = await client.discovery(
        new URL(`${baseUrl}/idp`),
        TEST_CLIENT.clientId,
        TEST_CLIENT.clientSecret,
        client.ClientSecretPost(TEST_CLIENT.clientSecret),
        {
          execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
        },
      );
      expect(config.serverMetadata()).toMatchObject({
        issuer: `${baseUrl}/idp`,
        userinfo_endpoint: `${baseUrl}/idp/oauth/userinfo`,
        token_endpoint: `${baseUrl}/idp/oauth/token`,
      });
      expect(config.serverMetadata().authorization_response_iss_parameter_supported).toBeUndefined();
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: TEST_CLIENT.redirectUri,
        scope: 'openid profile.name',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const callback = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
      expect(callback.searchParams.has('iss')).toBe(false);
      const tokens = await client.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      expect(tokens.claims()?.iss).toBe(provider.issuer);
      const userinfo = await client.fetchUserInfo(config, tokens.access_token, tokens.claims()!.sub);
      expect(Object.keys(userinfo).sort()).toEqual(['data', 'key', 'sub']);

      // An error response carries no iss either, and openid-client still reads it as the error.
      const denied = new URL(
        (
          await fetch(
            client.buildAuthorizationUrl(config, {
              redirect_uri: TEST_CLIENT.redirectUri,
              scope: 'openid',
              state,
              prompt: 'none',
              code_challenge: 'x'.repeat(43),
              code_challenge_method: 'S256',
            }),
            { redirect: 'manual' },
          )
        ).headers.get('location') ?? '',
      );
      expect([...denied.searchParams.keys()].sort()).toEqual(['error', 'state']);
      await expect(
        client.authorizationCodeGrant(config, denied, { pkceCodeVerifier: verifier, expectedState: state }),
      ).rejects.toMatchObject({ error: 'login_required' });
    });
  });
});

describe('a client served no userinfo beside one that is', () => {
  it('gets 403 insufficient_scope at userinfo, may ask for openid alone, needs no public key; the other client is served', async () => {
    const options = providerOptions({ autoApprove: true });
    const [first, second] = options.clients;
    const { publicKey: _unused, ...keyless } = second!;
    const started = await startProvider({ ...options, clients: [first!, { ...keyless, userinfo: false }] });
    await closing(started, async ({ baseUrl }) => {
      const doc = (await (await fetch(`${baseUrl}/v2/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      // One document serves both clients: the endpoint is advertised, since the first is served it.
      expect(doc['userinfo_endpoint']).toBe(`${baseUrl}/v2/oauth/userinfo`);
      const tokenOf = async (c: typeof TEST_CLIENT, scope: string): Promise<Response> => {
        const { verifier, challenge } = pkce();
        const query = new URLSearchParams({
          response_type: 'code',
          client_id: c.clientId,
          redirect_uri: c.redirectUri,
          scope,
          state: 'state-123456789012345678901',
          nonce: 'nonce-1',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        });
        const res = await fetch(`${baseUrl}/v2/oauth/authorize?${query}`, { redirect: 'manual' });
        if (res.status !== 302) return res;
        const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
        return fetch(`${baseUrl}/v2/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            grant_type: 'authorization_code',
            client_id: c.clientId,
            client_secret: c.clientSecret,
            code,
            code_verifier: verifier,
            redirect_uri: c.redirectUri,
          }),
        });
      };
      const scoped = await tokenOf(OTHER_CLIENT, 'openid profile.name');
      expect(scoped.status).toBe(400);
      expect(await scoped.text()).toMatch(/served no userinfo, so openid is the only scope/);

      const { access_token: refusedToken } = (await (await tokenOf(OTHER_CLIENT, 'openid')).json()) as {
        access_token: string;
      };
      const refused = await fetch(`${baseUrl}/v2/oauth/userinfo`, {
        headers: { authorization: `Bearer ${refusedToken}` },
      });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('www-authenticate')).toBe('Bearer error="insufficient_scope"');
      expect(await refused.json()).toMatchObject({ error: 'insufficient_scope' });

      const { access_token: servedToken } = (await (await tokenOf(TEST_CLIENT, 'openid profile.name')).json()) as {
        access_token: string;
      };
      expect(
        (await fetch(`${baseUrl}/v2/oauth/userinfo`, { headers: { authorization: `Bearer ${servedToken}` } })).status,
      ).toBe(200);
    });
  });

  it('a provider with userinfo: false serves none and advertises none', async () => {
    const started = await startProvider(providerOptions({ userinfo: false }));
    await closing(started, async ({ baseUrl }) => {
      const doc = (await (await fetch(`${baseUrl}/v2/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(doc['userinfo_endpoint']).toBeUndefined();
      expect(doc['scopes_supported']).toEqual(['openid']);
      expect(Object.keys(doc).filter((k) => k.startsWith('nd_id_userinfo'))).toEqual([]);
      expect((await fetch(`${baseUrl}/v2/oauth/userinfo`)).status).toBe(404);
    });
  });
});

describe('the variant options are checked at start-up', () => {
  it('refuses each bad value with a sentence naming the option', async () => {
    const mistakes = async (extra: Record<string, unknown>): Promise<string> =>
      startProvider({ ...providerOptions(), ...extra } as Parameters<typeof startProvider>[0]).then(
        async (s) => {
          await s.close();
          return '';
        },
        (err: Error) => err.message,
      );
    expect(await mistakes({ issuerPath: 'idp' })).toMatch(/issuerPath must be a path such as "\/idp"/);
    expect(await mistakes({ issuerPath: '/a/../b' })).toMatch(/issuerPath must be a path/);
    expect(await mistakes({ authorizationResponseIss: 'no' })).toMatch(
      /authorizationResponseIss must be true .* or false/,
    );
    expect(await mistakes({ userinfo: 0 })).toMatch(/userinfo must be true \(the default\) or false/);
    const [first] = providerOptions().clients;
    const { publicKey: _unused, ...keyless } = first!;
    expect(await mistakes({ clients: [keyless] })).toMatch(/must have exactly one of publicKey/);
    expect(await mistakes({ clients: [{ ...first, userinfo: 'off' }] })).toMatch(/clients\[0\]\.userinfo must be true/);
    expect(await mistakes({ clients: [keyless], userinfo: false })).toBe('');
  });
});
