/**
 * Against someone else's certified provider: panva's oidc-provider 9 with its own routes and an
 * issuer that carries a path. The app points at it by `issuer` alone; every endpoint comes from
 * its discovery document. A person signs in through its login and consent forms over real HTTP
 * with real cookies: with IdClient directly, and with NdIdStrategy and ndIdRouter in an Express
 * app, in the base profile (code flow with PKCE, RS256, standard userinfo) and in its FAPI 2.0
 * profile (PAR required, DPoP with nonces required, private_key_jwt, the app's keys served by
 * the router at its jwks_uri, encrypted ID tokens).
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { generatePkcePair } from '../../src/pkce.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import type { NdIdUser } from '../../src/passport/strategy.js';
import { startExpressApp as startApp, type ExpressApp as App } from '../helpers/express-rp.js';
import type { Browser } from '../helpers/harness.js';
import { signInAtProvider, startOidcProvider, type StartedOidcProvider } from '../helpers/oidc-provider.js';

const CLIENT_SECRET = 'a-client-secret-of-the-base-app-0123456789';

/** What the verify callback keeps: the ID token's and the userinfo's claims. */
function keep(user: NdIdUser) {
  return {
    sub: user.sub,
    data: user.data,
    idTokenIss: user.claims.iss,
    name: user.userinfo?.name ?? null,
    email: user.userinfo?.email ?? null,
  };
}

let provider: StartedOidcProvider | undefined;
let app: App | undefined;
afterEach(async () => {
  await app?.close();
  await provider?.close();
  app = undefined;
  provider = undefined;
});

async function baseSetup(scope: string): Promise<{ app: App; provider: StartedOidcProvider; strategy: NdIdStrategy }> {
  app = await startApp();
  provider = await startOidcProvider({
    clients: [
      {
        client_id: 'base-app',
        client_secret: CLIENT_SECRET,
        redirect_uris: [app.callbackURL],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'RS256',
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
  });
  const strategy = new NdIdStrategy(
    { clientId: 'base-app', clientSecret: CLIENT_SECRET, issuer: provider.issuer, callbackURL: app.callbackURL, scope },
    async (user) => keep(user),
  );
  app.install(strategy);
  return { app, provider, strategy };
}

/** Logs in through the app's /auth/login and the provider's forms; returns the callback URL. */
async function toCallback(browser: Browser, started: StartedOidcProvider): Promise<URL> {
  const login = await browser.get('/auth/login');
  expect(login.status, login.text).toBe(302);
  return signInAtProvider(login.location ?? '', started);
}

describe('the base profile against oidc-provider (its own routes, issuer with a path)', () => {
  it('IdClient signs a person in from the discovery document alone: code flow with PKCE, RS256, standard userinfo', async () => {
    app = await startApp();
    provider = await startOidcProvider({
      clients: [
        {
          client_id: 'base-app',
          client_secret: CLIENT_SECRET,
          redirect_uris: [app.callbackURL],
          token_endpoint_auth_method: 'client_secret_post',
        },
      ],
    });
    const client = new IdClient({
      clientId: 'base-app',
      clientSecret: CLIENT_SECRET,
      issuer: provider.issuer,
      redirectUri: app.callbackURL,
    });
    await client.discover();
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const { url, nonce } = client.authorizationUrl({
      codeChallenge,
      state: 'state-0123456789',
      scope: 'openid profile email',
      authorizationParams: { ui_locales: 'en' },
    });
    expect(new URL(url).origin + new URL(url).pathname).toBe(`${provider.issuer}/auth`);
    const callback = await signInAtProvider(url, provider);
    const query = Object.fromEntries(callback.searchParams);
    expect(query.iss).toBe(provider.issuer);
    await client.checkAuthorizationResponse(query);
    const tokens = await client.callback({ code: query.code!, codeVerifier, nonce: nonce ?? null, iss: query.iss! });
    expect(tokens.claims).toMatchObject({ iss: provider.issuer, sub: 'alice', aud: 'base-app' });
    expect(client.idTokenAlgorithms).toEqual(['RS256']);
    const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken });
    expect(info).toEqual({
      sub: 'alice',
      data: {},
      claims: { sub: 'alice', name: 'Person alice', email: 'alice@example.test' },
    });
    expect(provider.requests.get('/.well-known/openid-configuration')).toBe(1);
    client.close();
  });

  it('the Express router signs a person in; the second login makes no discovery or key-set request', async () => {
    const { app: rp, provider: op } = await baseSetup('openid profile email');
    for (const _round of [1, 2]) {
      const browser = rp.browser();
      const callback = await toCallback(browser, op);
      const done = await browser.get(callback.pathname + callback.search);
      expect(done.status, done.text).toBe(302);
      expect(done.location).toBe('/me');
      const me = JSON.parse((await browser.get('/me')).text) as { user: Record<string, unknown> };
      expect(me.user).toEqual({
        sub: 'alice',
        data: {},
        idTokenIss: op.issuer,
        name: 'Person alice',
        email: 'alice@example.test',
      });
    }
    expect(op.requests.get('/.well-known/openid-configuration')).toBe(1);
    expect(op.requests.get('/jwks')).toBe(1);
    expect(op.requests.get('/token')).toBe(2);
    expect(op.requests.get('/me')).toBe(2);
  });

  it("with scope 'openid' alone the sign-in completes from the ID token, without a userinfo call or a privateKey", async () => {
    const { app: rp, provider: op } = await baseSetup('openid');
    const browser = rp.browser();
    const callback = await toCallback(browser, op);
    expect((await browser.get(callback.pathname + callback.search)).status).toBe(302);
    const me = JSON.parse((await browser.get('/me')).text) as { user: Record<string, unknown> };
    expect(me.user).toEqual({ sub: 'alice', data: {}, idTokenIss: op.issuer, name: null, email: null });
    expect(op.requests.get('/me') ?? 0).toBe(0);
  });

  it.each([
    ['dropped', (u: URL) => u.searchParams.delete('iss'), 'authorization_response_iss_missing'],
    [
      'changed',
      (u: URL) => u.searchParams.set('iss', 'http://127.0.0.1:1/oidc'),
      'authorization_response_iss_mismatch',
    ],
  ])(
    'a callback whose iss was %s is refused, though oidc-provider advertises it, and the code is never redeemed',
    async (_how, tamper, code) => {
      const { app: rp, provider: op } = await baseSetup('openid profile');
      const browser = rp.browser();
      const callback = await toCallback(browser, op);
      tamper(callback);
      const res = await browser.get(callback.pathname + callback.search);
      expect(JSON.parse(res.text)).toMatchObject({ code });
      expect(op.requests.get('/token') ?? 0).toBe(0);
    },
  );

  it('a provider whose discovery document names another issuer is refused before the person leaves: a 500 naming the issuer option', async () => {
    app = await startApp();
    provider = await startOidcProvider({
      clients: [{ client_id: 'base-app', client_secret: CLIENT_SECRET, redirect_uris: [app.callbackURL] }],
    });
    app.install(
      new NdIdStrategy({
        clientId: 'base-app',
        clientSecret: CLIENT_SECRET,
        issuer: `${provider.issuer}/`,
        callbackURL: app.callbackURL,
      }),
    );
    const res = await app.browser().get('/auth/login');
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text)).toEqual({ code: 'discovery_issuer_mismatch', diagnosis: 'discovery_other_issuer' });
  });
});

describe('the FAPI 2.0 profile against oidc-provider (PAR, DPoP nonces, private_key_jwt, jwks_uri served by the router)', () => {
  async function fapiSetup(alg: 'RS256' | 'PS256' | 'ES256', enc: 'A256GCM' | 'A256CBC-HS512', scope: string) {
    app = await startApp();
    const assertion: KeyObject = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    const idTokenKey: KeyObject = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    provider = await startOidcProvider({
      fapi: true,
      clients: [
        {
          client_id: 'fapi-app',
          redirect_uris: [app.callbackURL],
          token_endpoint_auth_method: 'private_key_jwt',
          token_endpoint_auth_signing_alg: 'ES256',
          jwks_uri: `${app.baseUrl}/auth/jwks.json`,
          id_token_signed_response_alg: alg,
          id_token_encrypted_response_alg: 'ECDH-ES+A256KW',
          id_token_encrypted_response_enc: enc,
          dpop_bound_access_tokens: true,
          response_types: ['code'],
          grant_types: ['authorization_code'],
        },
      ],
    });
    const strategy = new NdIdStrategy(
      {
        clientId: 'fapi-app',
        issuer: provider.issuer,
        callbackURL: app.callbackURL,
        scope,
        profile: 'fapi2',
        clientAssertionKey: assertion,
        idTokenDecryptionKey: idTokenKey,
        idTokenSigningAlgorithms: [alg],
      },
      async (user) => keep(user),
    );
    app.install(strategy, { publishKeys: true });
    return { rp: app, op: provider };
  }

  it.for([
    ['RS256', 'A256GCM', 'openid profile email'],
    ['PS256', 'A256GCM', 'openid profile email'],
    ['ES256', 'A256CBC-HS512', 'openid'],
  ] as const)(
    'signs a person in with %s ID tokens encrypted with ECDH-ES+A256KW and %s (scope %s)',
    async ([alg, enc, scope]) => {
      const { rp, op } = await fapiSetup(alg, enc, scope);
      const browser = rp.browser();
      const login = await browser.get('/auth/login');
      expect(login.status, login.text).toBe(302);
      const authorize = new URL(login.location ?? '');
      expect(authorize.origin + authorize.pathname).toBe(`${op.issuer}/auth`);
      expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      const callback = await signInAtProvider(authorize.href, op);
      const done = await browser.get(callback.pathname + callback.search);
      expect(done.status, done.text).toBe(302);
      const me = JSON.parse((await browser.get('/me')).text) as { user: Record<string, unknown> };
      const withUserinfo = scope !== 'openid';
      expect(me.user).toEqual({
        sub: 'alice',
        data: {},
        idTokenIss: op.issuer,
        name: withUserinfo ? 'Person alice' : null,
        email: withUserinfo ? 'alice@example.test' : null,
      });
      // The push without a nonce is challenged (use_dpop_nonce), then sent once more with it.
      expect(op.requests.get('/request')).toBe(2);
      expect(op.requests.get('/me') ?? 0).toBe(withUserinfo ? 1 : 0);
      expect(op.requests.get('/.well-known/openid-configuration')).toBe(1);
    },
  );

  it('a callback whose iss was dropped is refused (oidc-provider advertises it) before the code is redeemed', async () => {
    const { rp, op } = await fapiSetup('RS256', 'A256GCM', 'openid');
    const browser = rp.browser();
    const callback = await toCallback(browser, op);
    callback.searchParams.delete('iss');
    const res = await browser.get(callback.pathname + callback.search);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'authorization_response_iss_missing' });
    expect(op.requests.get('/token') ?? 0).toBe(0);
  });
});
