/**
 * `req.user` without a verify callback keeps every provider's claims: `{ sub, data, claims,
 * userinfo?, authTime?, signedInAt }`. Over real HTTP with real cookies, through NdIdStrategy and
 * ndIdRouter: the service of the spec (the bundled provider; its attributes decrypted into
 * `data`), oidc-provider's standard JSON userinfo, and its userinfo as a JWT signed then
 * encrypted to the app, carrying an object claim as Myinfo v5's `person_info`.
 */
import { createPublicKey } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { Browser, CLIENT_ID, CLIENT_SECRET, PERSONA, RP_KEYS, startIntegrationProvider } from '../helpers/harness.js';
import { PERSON_INFO, signInAtProvider, startOidcProvider } from '../helpers/oidc-provider.js';
import { startPassportApp } from '../helpers/passport-app.js';

const running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.close();
});

const SECRET = 'a-client-secret-of-the-default-user-app-0123';

/** The app's `/me` after a sign-in that went through `toCallback`. */
async function signedInUser(baseUrl: string, toCallback: (authorize: string) => Promise<URL>): Promise<unknown> {
  const browser = new Browser(baseUrl);
  const login = await browser.get('/auth/login');
  expect(login.status, login.text).toBe(302);
  const callback = await toCallback(login.location ?? '');
  const done = await browser.get(callback.pathname + callback.search);
  expect(done.status, done.text).toBe(302);
  return (JSON.parse((await browser.get('/me')).text) as { user: unknown }).user;
}

/** The app against oidc-provider by `issuer`, with no verify callback. */
async function againstOidcProvider(scope: string, jwtUserinfo: boolean): Promise<{ user: unknown; issuer: string }> {
  const app = await startPassportApp();
  running.push(app);
  const publicJwk = createPublicKey(RP_KEYS.publicKeyPem).export({ format: 'jwk' }) as JWK;
  // Named as the app names its key: by its RFC 7638 thumbprint.
  const encKey = { ...publicJwk, use: 'enc', kid: await calculateJwkThumbprint(publicJwk) };
  const op = await startOidcProvider({
    jwtUserinfo,
    clients: [
      {
        client_id: 'default-user-app',
        client_secret: SECRET,
        redirect_uris: [app.callbackURL],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'RS256',
        ...(jwtUserinfo
          ? {
              userinfo_signed_response_alg: 'RS256',
              userinfo_encrypted_response_alg: 'RSA-OAEP-256',
              userinfo_encrypted_response_enc: 'A256GCM',
              jwks: { keys: [encKey as never] },
            }
          : {}),
      },
    ],
  });
  running.push(op);
  app.install(
    new NdIdStrategy({
      clientId: 'default-user-app',
      clientSecret: SECRET,
      issuer: op.issuer,
      callbackURL: app.callbackURL,
      scope,
      ...(jwtUserinfo ? { privateKey: RP_KEYS.privateKeyPem } : {}),
    }),
  );
  return { user: await signedInUser(app.baseUrl, (url) => signInAtProvider(url, op)), issuer: op.issuer };
}

describe('req.user without a verify callback', () => {
  it("the service of the spec: the decrypted attributes in data and the ID token's claims, no userinfo", async () => {
    const app = await startPassportApp();
    running.push(app);
    const { provider } = await startIntegrationProvider(app.callbackURL);
    running.push(provider);
    app.install(
      new NdIdStrategy({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        privateKey: RP_KEYS.privateKeyPem,
        hostname: provider.baseUrl,
        callbackURL: app.callbackURL,
        scope: 'openid profile.name',
      }),
    );
    const user = await signedInUser(app.baseUrl, async (url) => {
      const approved = await fetch(url, { redirect: 'manual' });
      return new URL(approved.headers.get('location') ?? '');
    });
    const sub = provider.provider.subjectFor(CLIENT_ID, PERSONA!.id);
    expect(user).toEqual({
      sub,
      data: { 'profile.name': PERSONA!['profile.name'] },
      claims: expect.objectContaining({ iss: `${provider.baseUrl}/v2`, sub, aud: CLIENT_ID }),
      signedInAt: expect.any(Number),
      ...((user as { authTime?: number }).authTime === undefined ? {} : { authTime: expect.any(Number) }),
    });
    expect(user).not.toHaveProperty('userinfo');
  });

  it("a provider's standard JSON userinfo: its claims in userinfo, the ID token's in claims", async () => {
    const { user, issuer } = await againstOidcProvider('openid profile email', false);
    expect(user).toEqual({
      sub: 'alice',
      data: {},
      claims: expect.objectContaining({ iss: issuer, sub: 'alice', aud: 'default-user-app' }),
      userinfo: { sub: 'alice', name: 'Person alice', email: 'alice@example.test' },
      signedInAt: expect.any(Number),
      ...((user as { authTime?: number }).authTime === undefined ? {} : { authTime: expect.any(Number) }),
    });
  });

  it('a userinfo JWT, signed then encrypted to the app: its verified payload, person_info included, in userinfo', async () => {
    const { user, issuer } = await againstOidcProvider('openid myinfo', true);
    expect(user).toMatchObject({
      sub: 'alice',
      data: {},
      claims: { iss: issuer, sub: 'alice', aud: 'default-user-app' },
      userinfo: { sub: 'alice', person_info: PERSON_INFO },
    });
  });

  it('an ID token alone (scope openid): its claims, and no userinfo', async () => {
    const { user, issuer } = await againstOidcProvider('openid', false);
    expect(user).toMatchObject({ sub: 'alice', data: {}, claims: { iss: issuer, sub: 'alice' } });
    expect(user).not.toHaveProperty('userinfo');
  });
});
