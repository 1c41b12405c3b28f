// test/sign-in.test.ts: your Express app, signed in through its own routes against the test provider.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NdIdStrategy, ndIdRouter, type NdIdUser } from 'passport-nd-id';
import { createTestProvider, signIn, type TestProvider } from 'passport-nd-id/provider';

/** The app under test, built as in production, pointed at the test provider. */
function buildApp(kit: TestProvider): express.Express {
  const authenticator = new passport.Passport();
  authenticator.use(
    new NdIdStrategy(
      { ...kit.client, hostname: kit.baseUrl, callbackURL: kit.client.redirectUri, scope: 'openid profile.name' },
      async (user: NdIdUser) => ({ sub: user.sub, name: user.data['profile.name'] }),
    ),
  );
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));

  const app = express();
  app.use(session({ name: 'sid', secret: 'test-only-session-secret', resave: false, saveUninitialized: false }));
  app.use(authenticator.session());
  app.use('/auth', ndIdRouter({ passport: authenticator, successRedirect: '/me' }));
  app.get('/me', (req, res) => {
    if (req.user) res.json(req.user);
    else res.status(401).json({ error: 'not signed in' });
  });
  return app;
}

let server: Server;
let appBaseUrl: string;
let kit: TestProvider;

beforeAll(async () => {
  // Listen first: the provider registers the app's callback URL, and the app needs the provider's URL.
  server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  appBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  kit = await createTestProvider({ redirectUri: `${appBaseUrl}/auth/callback` });
  server.on('request', buildApp(kit));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await kit.close();
});

describe('signing in through the app', () => {
  it('ends on /me, signed in as the chosen person', async () => {
    const { response, url, cookieHeader } = await signIn(appBaseUrl, { persona: 'ben', provider: kit });
    expect(new URL(url).pathname).toBe('/me');
    expect(await response.json()).toMatchObject({ name: 'Ben Samplename' });

    // The session cookie works for any later request, here through supertest.
    const me = await request(appBaseUrl).get('/me').set('Cookie', cookieHeader).expect(200);
    expect(me.body.name).toBe('Ben Samplename');
  });

  it('is not signed in without the cookie, nor when the person declines', async () => {
    await request(appBaseUrl).get('/me').expect(401);
    const declined = await signIn(appBaseUrl, { provider: kit, deny: true });
    await request(appBaseUrl).get('/me').set('Cookie', declined.cookieHeader).expect(401);
  });
});
