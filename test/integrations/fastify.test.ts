/**
 * NdIdStrategy in a real Fastify 5 app with @fastify/passport (and ndIdFastifyGuards on /account), once over @fastify/session (a
 * server-side session) and once over @fastify/secure-session (the whole session sealed in a
 * cookie), against the provider over loopback.
 */
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import { Authenticator } from '@fastify/passport';
import fastifySecureSession from '@fastify/secure-session';
import fastifySession from '@fastify/session';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeHtml } from '../../src/html.js';
import { NdIdStrategy, type NdIdFailure } from '../../src/passport/strategy.js';
import { ndIdFastifyGuards } from '../../src/fastify.js';
import { createSessionPolicy, type SessionPolicy } from '../../src/flow/session-policy.js';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  approve,
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  expectFailurePage,
  PERSONA,
  recordingLogger,
  RP_KEYS,
  startIntegrationProvider,
  itKeepsTheSharedGuarantees,
  me,
  startLogin,
} from '../helpers/harness.js';

type Plugin = 'session' | 'secure-session';

interface FastifyRp {
  baseUrl: string;
  provider: StartedProvider;
  tokenCalls: () => number;
  log: () => string;
  sessions: SessionPolicy;
  close(): Promise<void>;
}

async function startFastifyRp(plugin: Plugin, keepOtherTabs = true): Promise<FastifyRp> {
  const app: FastifyInstance = Fastify();
  const recorded = recordingLogger();
  await app.register(fastifyCookie);
  if (plugin === 'session') {
    await app.register(fastifySession, {
      secret: 'fastify-session-secret-0123456789-abcdef',
      cookie: { secure: false },
      saveUninitialized: false,
    });
  } else {
    await app.register(fastifySecureSession, {
      key: randomBytes(32),
      cookie: { path: '/', httpOnly: true, sameSite: 'lax' },
    });
  }
  // The strategy is built once the app's port (and so its callback URL) is known.
  // biome-ignore lint/style/useConst: assigned below, once the port is known
  let strategy: NdIdStrategy | undefined;
  const sessionKey = `nd-id:${CLIENT_ID}`;
  // clearSessionIgnoreFields keeps the other tabs' pending logins across the session regeneration at sign-in.
  const sessions = createSessionPolicy();
  // The sign-in record (sessions.recordKey) is kept the same way, for the guards.
  const passport = new Authenticator(
    keepOtherTabs ? { clearSessionIgnoreFields: [sessionKey, sessions.recordKey] } : {},
  );
  const guards = ndIdFastifyGuards({ sessions, loginPath: '/auth/login' });
  passport.registerUserSerializer(async (user: { sub: string; data: Record<string, string> }) => ({
    sub: user.sub,
    data: user.data,
  }));
  passport.registerUserDeserializer(async (user: unknown) => user);
  await app.register(passport.initialize());
  await app.register(passport.secureSession());

  // As docs/fastify.md: both answers set session state (the strategy has no reply to set it on).
  app.get('/auth/login', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { returnTo } = request.query as { returnTo?: string };
    const handler = passport.authenticate('nd-id', { returnTo } as object);
    await handler.call(app, request, reply);
  });
  app.get('/auth/callback', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const handler = passport.authenticate('nd-id', async (req, res, err, user, info, status) => {
      if (err !== null || user === undefined || user === false) {
        const failure = info as Partial<NdIdFailure> | undefined;
        const message =
          err !== null
            ? 'Sign-in could not be completed because of a problem on this site.'
            : (failure?.message ?? 'Sign-in failed.');
        await res
          .code(err !== null ? 500 : (status ?? 401))
          .type('text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(
            `<!doctype html><title>Sign-in failed</title><main><h1>Sign-in failed</h1><p>${escapeHtml(message)}</p><a href="/auth/login">Try again</a></main>`,
          );
        return;
      }
      await req.logIn(user);
      await res.redirect((info as { returnTo?: string } | undefined)?.returnTo ?? '/');
    });
    await handler.call(app, request, reply);
  });
  app.get('/auth/logout', async (request, reply) => {
    await request.logOut();
    await reply.redirect('/');
  });
  app.get('/me', async (request) => ({ user: request.user ?? null }));
  app.get('/account', { preHandler: guards.requireSignIn() }, async (request) => guards.signedIn(request));
  app.get('/mark', async (request) => {
    request.session.set('marker' as never, 'before-login' as never);
    return { ok: true };
  });
  app.get('/marker', async (request) => ({ marker: (request.session.get('marker' as never) as unknown) ?? null }));

  const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  const { provider, tokenCalls } = await startIntegrationProvider(`${baseUrl}/auth/callback`);
  strategy = new NdIdStrategy({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: RP_KEYS.privateKeyPem,
    hostname: provider.baseUrl,
    callbackURL: `${baseUrl}/auth/callback`,
    scope: 'openid profile.name profile.nric_number',
    logger: recorded.logger,
    sessions,
  });
  expect(strategy.sessionKey).toBe(sessionKey);
  passport.use('nd-id', strategy as never);
  return {
    baseUrl,
    provider,
    tokenCalls,
    log: recorded.text,
    sessions,
    close: async () => {
      await provider.close();
      await app.close();
    },
  };
}

describe.each(['session', 'secure-session'] as const)('Fastify with @fastify/passport and @fastify/%s', (plugin) => {
  let rp: FastifyRp;
  beforeAll(async () => {
    rp = await startFastifyRp(plugin);
  });
  afterAll(async () => {
    await rp.close();
  });

  itKeepsTheSharedGuarantees(
    () => rp,
    async () => new Browser(rp.baseUrl),
  );

  it('signs a person in end to end, returning to the same-site returnTo', async () => {
    const browser = new Browser(rp.baseUrl);
    expect((await browser.get('/auth/login')).cacheControl).toBe('no-store');
    const done = await browser.get((await approve(await startLogin(browser, '/auth/login?returnTo=%2Faccount'))).href);
    expect(done.status).toBe(302);
    expect(done.cacheControl).toBe('no-store');
    expect(done.location).toBe('/account');
    expect((await me(browser))?.data['profile.name']).toBe(PERSONA['profile.name']);
  });

  it('starts a fresh session at sign-in: data from before the login is gone', async () => {
    const browser = new Browser(rp.baseUrl);
    await browser.get('/mark');
    const callback = await approve(await startLogin(browser, '/auth/login'));
    const before = [...browser.jar.values()].join(';');
    expect((await browser.get(callback.href)).status).toBe(302);
    expect([...browser.jar.values()].join(';')).not.toBe(before);
    expect(JSON.parse((await browser.get('/marker')).text)).toEqual({ marker: null });
    expect(await me(browser)).not.toBeNull();
  });

  it('takes the pending login out of the session, so the same state is refused even before another login ends', async () => {
    const browser = new Browser(rp.baseUrl);
    const authorize = await startLogin(browser, '/auth/login');
    const state = authorize.searchParams.get('state') ?? '';
    const iss = encodeURIComponent(`${authorize.origin}/v2`);
    expectFailurePage(
      await browser.get(`/auth/callback?error=access_denied&state=${state}&iss=${iss}`),
      401,
      /cancelled or refused/,
    );
    expectFailurePage(
      await browser.get(`/auth/callback?error=access_denied&state=${state}&iss=${iss}`),
      403,
      /not started in this browser/,
    );
  });

  it('keeps the sign-in record for ndIdFastifyGuards: after signOutEverywhere the guard refuses', async () => {
    const browser = new Browser(rp.baseUrl);
    await browser.get((await approve(await startLogin(browser, '/auth/login'))).href);
    const account = await browser.get('/account');
    expect(account.status).toBe(200);
    const { signIn } = JSON.parse(account.text) as { signIn: { sub: string } };
    await rp.sessions.signOutEverywhere(signIn.sub);
    const after = await browser.get('/account');
    expect(after.status).toBe(303);
    expect(after.location).toBe('/auth/login?returnTo=%2Faccount');
  });

  it('signs out', async () => {
    const browser = new Browser(rp.baseUrl);
    await browser.get((await approve(await startLogin(browser, '/auth/login'))).href);
    expect(await me(browser)).not.toBeNull();
    expect((await browser.get('/auth/logout')).status).toBe(302);
    expect(await me(browser)).toBeNull();
  });
});

describe.each(['session', 'secure-session'] as const)(
  'Fastify with @fastify/passport and @fastify/%s, without clearSessionIgnoreFields',
  (plugin) => {
    let rp: FastifyRp;
    beforeAll(async () => {
      rp = await startFastifyRp(plugin, false);
    });
    afterAll(async () => {
      await rp.close();
    });

    it('loses the other tab’s login at sign-in, and the log says so and names clearSessionIgnoreFields with the key', async () => {
      const browser = new Browser(rp.baseUrl);
      const first = await approve(await startLogin(browser, '/auth/login?returnTo=/one'));
      const second = await approve(await startLogin(browser, '/auth/login?returnTo=/two'));
      expect((await browser.get(second.href)).location).toBe('/two');
      // Already signed in by the other tab, the person is sent on (to '/', not to the lost login's '/one').
      expect((await browser.get(first.href)).location).toBe('/');
      const log = rp.log();
      expect(log).toMatch(/^warn .*pending_login_lost_at_sign_in/m);
      expect(log, log).toContain(`clearSessionIgnoreFields: ['nd-id:${CLIENT_ID}']`);
      expect(log.match(/Sign-in completed/g)).toHaveLength(1);
    });
  },
);
