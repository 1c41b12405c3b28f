/**
 * The package's own Express app (NdIdStrategy + ndIdRouter, FAPI 2.0 profile) against our
 * provider set up as a national service's FAPI 2.0 login: issuer at /fapi (not /v2), ES256 ID
 * tokens encrypted ECDH-ES+A256KW / A256CBC-HS512, no iss in authorization responses and none
 * advertised, no userinfo endpoint, a context type beside the context message, scope openid.
 * The app finds every endpoint in discovery and signs the person in from the ID token alone.
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppPrivateJwk } from '../../src/client/fapi-keys.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy, type NdIdUser } from '../../src/passport/strategy.js';
import { startProvider } from '../helpers/provider.js';
import { fapiTestKeys } from '../../src/provider/testing/create-test-provider.js';
import { Browser } from '../helpers/harness.js';

describe("our FAPI 2.0 app against a national service's FAPI login (rehearsed by the provider)", () => {
  let op: Awaited<ReturnType<typeof startProvider>>;
  let baseUrl: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const keys = await fapiTestKeys('ECDH-ES+A256KW');
    const app = express();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    op = await startProvider({
      autoApprove: true,
      issuerPath: '/fapi',
      authorizationResponseIss: false,
      userinfo: false,
      clients: [
        {
          clientId: 'login-app',
          redirectUris: [`${baseUrl}/auth/callback`],
          profile: 'fapi2',
          jwks: keys.jwks,
          idTokenSignedResponseAlg: 'ES256',
          idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
          idTokenEncryptedResponseEnc: 'A256CBC-HS512',
        },
      ],
      log: () => {},
    });
    const authenticator = new passport.Passport();
    authenticator.use(
      new NdIdStrategy(
        {
          clientId: 'login-app',
          issuer: op.provider.issuer,
          callbackURL: `${baseUrl}/auth/callback`,
          scope: 'openid',
          profile: 'fapi2',
          clientAssertionKey: keys.signingKey as AppPrivateJwk,
          idTokenDecryptionKey: keys.encryptionKey as AppPrivateJwk,
          idTokenSigningAlgorithms: ['ES256'],
          authenticationContextType: 'APP_AUTHENTICATION_DEFAULT',
          authenticationContextMessage: 'Sign in to the login app',
        },
        async (user: NdIdUser) => ({
          sub: user.sub,
          data: user.data,
          iss: user.claims.iss,
          userinfo: user.userinfo ?? null,
        }),
      ),
    );
    authenticator.serializeUser((user, done) => done(null, user));
    authenticator.deserializeUser((user: Express.User, done) => done(null, user));
    app.use(session({ secret: 'national-login-session-secret', resave: false, saveUninitialized: false }));
    app.use(authenticator.session());
    app.use('/auth', ndIdRouter({ passport: authenticator, successRedirect: '/me' }));
    app.get('/me', (req, res) => res.status(req.user ? 200 : 401).json({ user: req.user ?? null }));
    close = async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await op.close();
    };
  });
  afterAll(async () => {
    await close();
  });

  it('signs a person in from the ES256 ID token alone: endpoints from discovery, no iss, no userinfo', async () => {
    const browser = new Browser(baseUrl);
    const login = await browser.get('/auth/login');
    expect(login.status, login.text).toBe(302);
    const authorize = new URL(login.location ?? '');
    expect(authorize.href.startsWith(`${op.baseUrl}/fapi/oauth/authorize?`)).toBe(true);
    expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);

    const approved = await fetch(authorize, { redirect: 'manual' });
    const callback = new URL(approved.headers.get('location') ?? '');
    expect(callback.origin + callback.pathname).toBe(`${baseUrl}/auth/callback`);
    expect([...callback.searchParams.keys()].sort()).toEqual(['code', 'state']); // no iss, as that service answers

    const done = await browser.get(callback.pathname + callback.search);
    expect(done.status, done.text).toBe(302);
    expect(done.location).toBe('/me');
    const me = await browser.get('/me');
    expect(me.status).toBe(200);
    const { user } = JSON.parse(me.text) as { user: { sub: string; data: object; iss: string; userinfo: unknown } };
    expect(user).toEqual({
      sub: op.provider.subjectFor('login-app', op.provider.personas[0]!.id),
      data: {},
      iss: `${op.baseUrl}/fapi`,
      userinfo: null,
    });
  });
});
