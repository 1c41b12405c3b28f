/**
 * Issue 12 over real HTTP with real cookies: a login is completed only by the registration and
 * callback URL it was started for (mix-up, RFC 9700 4.4.2), at most once even under concurrent
 * replays, and the app sees only the attributes it asked for.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { NdIdStrategy, type NdIdUser } from '../../src/passport/strategy.js';
import { testKeyPair } from '../helpers/keys.js';
import { startStubProvider, type StubProvider } from '../helpers/stub-provider.js';
import { approve, followCallback, startLogin, startRp, type Rp } from './harness.js';

const SECRET_A = 'client-a-secret-7d1e';
const SECRET_B = 'client-b-secret-2c9f';

interface TwoStrategyApp {
  baseUrl: string;
  provider: StartedProvider;
  tokenCalls: () => number;
  close(): Promise<void>;
}

/**
 * One app, one session, several strategies: `a` (client A), `b` (client B) and `a2` (client A
 * again, on another callback URL). Each route answers the strategy's outcome as JSON.
 */
async function startTwoStrategyApp(sessionKey?: string): Promise<TwoStrategyApp> {
  const keys = testKeyPair('rp');
  const authenticator = new passport.Passport();
  const app = express();
  app.use(session({ secret: 'mix-up-test', resave: false, saveUninitialized: false }));
  app.use(authenticator.initialize());
  for (const name of ['a', 'b', 'a2']) {
    app.get(`/${name}/callback`, (req, res, next) => {
      authenticator.authenticate(
        name,
        { session: false },
        (err: unknown, user: unknown, info: unknown, status: unknown) => {
          if (err) return next(err);
          if (user) return res.json({ signedIn: true });
          res.status(typeof status === 'number' ? status : 401).json(info);
        },
      )(req, res, next);
    });
  }
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = await startProvider({
    clients: [
      {
        clientId: 'client-a',
        clientSecret: SECRET_A,
        redirectUris: [`${baseUrl}/a/callback`, `${baseUrl}/a2/callback`],
        publicKey: keys.publicKeyPem,
      },
      {
        clientId: 'client-b',
        clientSecret: SECRET_B,
        redirectUris: [`${baseUrl}/b/callback`],
        publicKey: keys.publicKeyPem,
      },
    ],
    autoApprove: true,
  });
  let tokenCalls = 0;
  provider.server.on('request', (req) => {
    if (req.url?.startsWith('/v2/oauth/token')) tokenCalls++;
  });
  const common = {
    privateKey: keys.privateKeyPem,
    hostname: provider.baseUrl,
    ...(sessionKey === undefined ? {} : { sessionKey }),
  };
  authenticator.use(
    'a',
    new NdIdStrategy({ ...common, clientId: 'client-a', clientSecret: SECRET_A, callbackURL: `${baseUrl}/a/callback` }),
  );
  authenticator.use(
    'b',
    new NdIdStrategy({ ...common, clientId: 'client-b', clientSecret: SECRET_B, callbackURL: `${baseUrl}/b/callback` }),
  );
  authenticator.use(
    'a2',
    new NdIdStrategy({
      ...common,
      clientId: 'client-a',
      clientSecret: SECRET_A,
      callbackURL: `${baseUrl}/a2/callback`,
    }),
  );
  return {
    baseUrl,
    provider,
    tokenCalls: () => tokenCalls,
    close: async () => {
      await provider.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('mix-up: a login completes only on the registration and callback URL it was started for', () => {
  let rp: TwoStrategyApp | undefined;
  afterEach(async () => {
    await rp?.close();
    rp = undefined;
  });

  /** Starts a login on `from` in a fresh browser, lets the service approve it, and replays its code and state on `to`'s callback. */
  async function replayOn(from: string, to: string) {
    const browser = request.agent(rp!.baseUrl);
    const started = await browser.get(`/${from}/callback`).redirects(0);
    expect(started.status).toBe(302);
    const callback = await approve(new URL(started.headers.location as string));
    expect(callback.pathname).toBe(`/${from}/callback`);
    return browser.get(`/${to}/callback${callback.search}`);
  }

  it("refuses a state issued by strategy B on strategy A's callback (separate default slots), with no token call", async () => {
    rp = await startTwoStrategyApp();
    const res = await replayOn('b', 'a');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'state_mismatch', reason: 'no_pending_logins' });
    expect(rp.tokenCalls()).toBe(0);
  });

  it('refuses it by the recorded binding when both strategies share one session key', async () => {
    rp = await startTwoStrategyApp('shared-key');
    const res = await replayOn('b', 'a');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'state_mismatch', reason: 'binding_mismatch' });
    expect(rp.tokenCalls()).toBe(0);
  });

  it('refuses a login of the same client arriving on another callback URL', async () => {
    rp = await startTwoStrategyApp();
    const res = await replayOn('a', 'a2');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'state_mismatch', reason: 'binding_mismatch' });
    expect(rp.tokenCalls()).toBe(0);
  });

  it('still completes the login on its own callback', async () => {
    rp = await startTwoStrategyApp('shared-key');
    const res = await replayOn('b', 'b');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ signedIn: true });
    expect(rp.tokenCalls()).toBe(1);
  });
});

describe('one-time logins under concurrent replays', () => {
  let rp: Rp;
  beforeAll(async () => {
    rp = await startRp();
  });
  afterAll(async () => {
    await rp.close();
  });

  it('30 concurrent replays of one callback in one session: exactly one reaches the service and signs in', async () => {
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    const before = rp.tokenCalls();
    const responses = await Promise.all(Array.from({ length: 30 }, () => followCallback(browser, callback)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 302)).toHaveLength(1);
    expect(statuses.filter((s) => s === 403)).toHaveLength(29);
    expect(rp.tokenCalls() - before).toBe(1);
  });
});

describe('the app sees only the attributes it asked for', () => {
  let stub: StubProvider;
  let server: Server;
  let baseUrl: string;
  const seen: NdIdUser[] = [];

  beforeAll(async () => {
    stub = await startStubProvider();
    const authenticator = new passport.Passport();
    const app = express();
    app.use(session({ secret: 'attributes-test', resave: false, saveUninitialized: false }));
    app.use(authenticator.initialize());
    app.get('/auth', (req, res, next) => {
      authenticator.authenticate('nd-id', { session: false }, (err: unknown, user: unknown) => {
        if (err) return next(err);
        res.status(user ? 200 : 401).json({ signedIn: Boolean(user) });
      })(req, res, next);
    });
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    authenticator.use(
      new NdIdStrategy(
        {
          clientId: stub.clientId,
          clientSecret: 'stub-secret',
          privateKey: stub.rpPrivateKeyPem,
          hostname: stub.origin,
          callbackURL: `${baseUrl}/auth`,
          scope: 'openid profile.name',
        },
        async (user: NdIdUser) => {
          seen.push(user);
          return { sub: user.sub };
        },
      ),
    );
  });
  afterAll(async () => {
    await stub.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('drops unrequested attributes (even one named hasOwnProperty) and keeps data prototype-safe', async () => {
    stub.userinfo.data = JSON.parse(
      '{"profile.name":"TAN AH KOW","profile.nric_number":"S9812381D","hasOwnProperty":"x","constructor":"y"}',
    ) as Record<string, string>;
    const browser = request.agent(baseUrl);
    const started = await browser.get('/auth').redirects(0);
    const authorize = new URL(started.headers.location as string);
    stub.nonce = authorize.searchParams.get('nonce')!;
    const state = authorize.searchParams.get('state')!;
    const res = await browser.get(`/auth?code=stub-code&state=${encodeURIComponent(state)}`);
    expect(res.status).toBe(200);
    expect(seen).toHaveLength(1);
    const { data } = seen[0]!;
    expect(data).toEqual({ 'profile.name': 'TAN AH KOW' });
    expect(Object.keys(data)).toEqual(['profile.name']);
    expect(Object.hasOwn(data, 'profile.nric_number')).toBe(false);
    expect(data.constructor).toBe(Object);
  });
});
