/**
 * Back-channel logout from someone else's certified provider: panva's oidc-provider with its
 * `backchannelLogout` feature. A person signs in to our Express app (ndIdRouter, requireSignIn)
 * or our Fastify app (ndIdFastify and its guard) through its forms over real HTTP with real
 * cookies, then signs out at its end_session endpoint; it POSTs its own logout token to the app,
 * and the person's next request to a guarded route is refused. With `backchannel_logout_session_required` the token names the provider session
 * (`sid`, also in the ID token) and only that session ends; without, it names the person (`sub`).
 */
import { createServer, type Server } from 'node:http';
import fastifyCookie from '@fastify/cookie';
import fastifySession from '@fastify/session';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { requireSignIn } from '../../src/passport/require-sign-in.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { IdClient } from '../../src/client/id-client.js';
import { ndIdFastify, ndIdFastifyGuards } from '../../src/fastify.js';
import {
  signInAtProvider,
  signOutAtProvider,
  startOidcProvider,
  type StartedOidcProvider,
} from '../helpers/oidc-provider.js';
import { Browser } from '../sessions/harness.js';

const CLIENT_ID = 'bcl-app';
const CLIENT_SECRET = 'a-client-secret-of-the-bcl-app-0123456789';

interface App {
  baseUrl: string;
  /** Builds the app's client on the provider's issuer and serves its routes. */
  install(issuer: string): Promise<void>;
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** The Express app: ndIdRouter (with the receiver) and requireSignIn; `/account` shows the sid the verify kept. */
async function startExpressApp(): Promise<App> {
  const app = express();
  let routes: RequestHandler | undefined;
  const sessions = createSessionPolicy();
  const authenticator = new passport.Passport();
  app.use(session({ secret: 'bcl-interop-secret', resave: false, saveUninitialized: false }));
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  app.use(authenticator.session());
  app.use('/auth', (req, res, next) => (routes === undefined ? next() : routes(req, res, next)));
  app.get('/account', requireSignIn({ sessions, api: true }), (req, res) => {
    res.json({ user: req.user });
  });
  const server: Server = createServer(app);
  const baseUrl = await listen(server);
  return {
    baseUrl,
    async install(issuer) {
      const strategy = new NdIdStrategy(
        {
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          issuer,
          callbackURL: `${baseUrl}/auth/callback`,
          scope: 'openid',
        },
        async (user) => ({ sub: user.sub, sid: user.claims.sid ?? null }),
      );
      authenticator.use(strategy);
      const backchannelLogout = createBackchannelLogout({
        client: strategy,
        sessions,
        replayStore: createMemoryReplayStore(),
      });
      routes = ndIdRouter({ passport: authenticator, sessions, successRedirect: '/account', backchannelLogout });
    },
    close: () => closeServer(server),
  };
}

/** The Fastify app: ndIdFastify (with the receiver) on @fastify/session; `/account` shows the sign-in's sid. */
async function startFastifyApp(): Promise<App> {
  const server: Server = createServer();
  const baseUrl = await listen(server);
  const sessions = createSessionPolicy();
  const guards = ndIdFastifyGuards({ sessions });
  const app = Fastify({
    serverFactory: (handler) => {
      server.on('request', handler);
      return server;
    },
  });
  await app.register(fastifyCookie);
  await app.register(fastifySession, {
    secret: 'bcl-interop-fastify-secret-0123456789',
    cookie: { secure: false },
    saveUninitialized: false,
  });
  app.get('/account', { preHandler: guards.requireSignIn({ api: true }) }, async (request) => ({
    user: { sid: guards.signedIn(request)?.signIn.sid ?? null },
  }));
  return {
    baseUrl,
    async install(issuer) {
      const client = new IdClient({
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        issuer,
        redirectUri: `${baseUrl}/auth/callback`,
      });
      const backchannelLogout = createBackchannelLogout({ client, sessions, replayStore: createMemoryReplayStore() });
      const auth = ndIdFastify({ client, scope: 'openid', sessions, successRedirect: '/account', backchannelLogout });
      await app.register(auth.plugin, { prefix: '/auth' });
      await app.ready();
    },
    close: async () => {
      server.closeAllConnections();
      await app.close();
    },
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

async function setup(
  start: () => Promise<App>,
  sessionRequired: boolean,
): Promise<{ app: App; provider: StartedOidcProvider }> {
  app = await start();
  provider = await startOidcProvider({
    backchannelLogout: true,
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${app.baseUrl}/auth/callback`],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'RS256',
        backchannel_logout_uri: `${app.baseUrl}/auth/backchannel-logout`,
        backchannel_logout_session_required: sessionRequired,
      },
    ],
  });
  await app.install(provider.issuer);
  return { app, provider };
}

/** Signs a browser in through the provider's forms; returns the provider cookies of that sign-in. */
async function signIn(browser: Browser, started: StartedOidcProvider): Promise<Map<string, string>> {
  const jar = new Map<string, string>();
  const login = await browser.request('/auth/login');
  expect(login.status).toBe(302);
  const callback = await signInAtProvider(login.headers.get('location') ?? '', started, 'alice', jar);
  const done = await browser.request(callback.href);
  expect(done.status).toBe(302);
  return jar;
}

async function account(browser: Browser): Promise<{ status: number; sid: unknown }> {
  const res = await browser.request('/account', { headers: { accept: 'application/json' } });
  const body = (await res.json()) as { user?: { sid?: unknown } };
  return { status: res.status, sid: body.user?.sid };
}

describe.each([
  ['Express app (ndIdRouter)', startExpressApp],
  ['Fastify app (ndIdFastify)', startFastifyApp],
])("oidc-provider's back-channel logout ends sessions in our %s", (_name, start) => {
  it('by sid: the provider session signed out ends; the same person in another provider session stays', async () => {
    const { app, provider } = await setup(start, true);
    const here = new Browser(app.baseUrl);
    const elsewhere = new Browser(app.baseUrl);
    const jar = await signIn(here, provider);
    await signIn(elsewhere, provider);
    const before = await account(here);
    expect(before.status).toBe(200);
    expect(before.sid).toEqual(expect.any(String)); // oidc-provider's ID token carries sid
    expect((await account(elsewhere)).sid).not.toBe(before.sid);

    expect(await signOutAtProvider(provider, jar)).toBeLessThan(400);
    expect(provider.backchannel).toEqual([{ clientId: CLIENT_ID, outcome: 'ok' }]);
    expect((await account(here)).status).toBe(401);
    expect((await account(elsewhere)).status).toBe(200);
  });

  it('by sub: every session of the person ends', async () => {
    const { app, provider } = await setup(start, false);
    const here = new Browser(app.baseUrl);
    const elsewhere = new Browser(app.baseUrl);
    const jar = await signIn(here, provider);
    await signIn(elsewhere, provider);
    expect((await account(here)).status).toBe(200);

    expect(await signOutAtProvider(provider, jar)).toBeLessThan(400);
    expect(provider.backchannel).toEqual([{ clientId: CLIENT_ID, outcome: 'ok' }]);
    expect((await account(here)).status).toBe(401);
    expect((await account(elsewhere)).status).toBe(401);
  });
});
