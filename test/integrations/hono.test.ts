/**
 * Fetch-standard handlers (createFetchLogin) in a real Hono app on Node, against the provider
 * over loopback: with the sealed-cookie session and with a session the app supplies.
 */
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { createCookieSession, type CookieSessionStore } from '../../src/adapters/cookie-session.js';
import { createFetchLogin, type FetchLogin, type FetchSessionProvider } from '../../src/adapters/fetch.js';
import { recordSession } from '../../src/flow/session.js';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  approve,
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  closeServer,
  expectFailurePage,
  listenOnLoopback,
  PERSONA,
  recordingLogger,
  RP_KEYS,
  startIntegrationProvider,
  itKeepsTheSharedGuarantees,
  me,
  startLogin,
} from '../helpers/harness.js';

const SECRET = 'hono-cookie-secret-0123456789-abcdefghij';

interface HonoRp {
  baseUrl: string;
  provider: StartedProvider;
  tokenCalls: () => number;
  log: () => string;
  close(): Promise<void>;
}

/** A session the app keeps in a Map behind its own random cookie (the caller-supplied kind). */
function mapSessions(): { provide: FetchSessionProvider; app: Hono } {
  const store = new Map<string, Record<string, unknown>>();
  const app = new Hono();
  const provide: FetchSessionProvider = (request) => {
    const sid = /(?:^|;\s*)app\.sid=([\w-]+)/.exec(request.headers.get('cookie') ?? '')?.[1];
    const record = (sid === undefined ? undefined : store.get(sid)) ?? {};
    if (sid !== undefined) store.set(sid, record);
    return recordSession(record);
  };
  // Issues the app's own session cookie before the login starts.
  app.get('/start', (c) => {
    const sid = crypto.randomUUID();
    store.set(sid, {});
    c.header('set-cookie', `app.sid=${sid}; Path=/; HttpOnly; SameSite=Lax`);
    return c.redirect('/auth/login');
  });
  return { provide, app };
}

async function startHonoRp(kind: 'cookie' | 'caller'): Promise<HonoRp> {
  const cookies: CookieSessionStore = createCookieSession({ secret: SECRET });
  const supplied = mapSessions();
  const recorded = recordingLogger();
  let auth: FetchLogin | undefined;
  const app = kind === 'cookie' ? new Hono() : supplied.app;
  const handlers = (): FetchLogin => auth as FetchLogin;
  app.get('/auth/login', (c) => handlers().login(c.req.raw));
  app.get('/auth/callback', (c) => handlers().callback(c.req.raw));
  app.get('/auth/logout', (c) => handlers().logout(c.req.raw));
  app.get('/me', async (c) => c.json({ user: (await handlers().user(c.req.raw)) ?? null }));
  app.get('/sid', async (c) => c.json({ sid: (await cookies.load(c.req.raw)).id }));
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  const baseUrl = await listenOnLoopback(server);
  const { provider, tokenCalls } = await startIntegrationProvider(`${baseUrl}/auth/callback`);
  const client = new IdClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: RP_KEYS.privateKeyPem,
    hostname: provider.baseUrl,
    redirectUri: `${baseUrl}/auth/callback`,
  });
  auth = createFetchLogin({
    client,
    session: kind === 'cookie' ? cookies : supplied.provide,
    logger: recorded.logger,
    loginPath: '/auth/login',
    scope: 'openid profile.name profile.nric_number',
  });
  return {
    baseUrl,
    provider,
    tokenCalls,
    log: recorded.text,
    close: async () => {
      await provider.close();
      await closeServer(server);
    },
  };
}

async function newBrowser(rp: HonoRp, kind: 'cookie' | 'caller'): Promise<Browser> {
  const browser = new Browser(rp.baseUrl);
  if (kind === 'caller') expect((await browser.get('/start')).status).toBe(302);
  return browser;
}

describe.each(['cookie', 'caller'] as const)('Hono with createFetchLogin (%s session)', (kind) => {
  let rp: HonoRp;
  beforeAll(async () => {
    rp = await startHonoRp(kind);
  });
  afterAll(async () => {
    await rp.close();
  });

  itKeepsTheSharedGuarantees(
    () => rp,
    () => newBrowser(rp, kind),
    { sessionKeptAtSignIn: kind === 'caller' },
  );

  it('signs a person in end to end and returns to the same-site returnTo', async () => {
    const browser = await newBrowser(rp, kind);
    const authorize = await startLogin(browser, '/auth/login?returnTo=%2Faccount%3Ftab%3D1');
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    const done = await browser.get((await approve(authorize)).href);
    expect(done.status).toBe(302);
    expect(done.location).toBe('/account?tab=1');
    const user = await me(browser);
    expect(user?.data['profile.name']).toBe(PERSONA['profile.name']);
    expect(user?.sub).toMatch(/\S/);
  });

  it('ends a refused sign-in on a clear page without internals', async () => {
    const browser = await newBrowser(rp, kind);
    const authorize = await startLogin(browser, '/auth/login');
    const iss = encodeURIComponent(`${authorize.origin}/v2`);
    const denied = await browser.get(
      `/auth/callback?error=access_denied&state=${authorize.searchParams.get('state') ?? ''}&iss=${iss}`,
    );
    expectFailurePage(denied, 401, /cancelled or refused/);
    expect(denied.text).toContain('href="/auth/login"');
    expectFailurePage(await browser.get('/auth/callback?code=abc'), 403, /Please start again/);
    expect(await me(browser)).toBeNull();
  });

  it('signs out', async () => {
    const browser = await newBrowser(rp, kind);
    await browser.get((await approve(await startLogin(browser, '/auth/login'))).href);
    expect(await me(browser)).not.toBeNull();
    // A sign-out another site sends the browser to is refused; the person stays signed in.
    expect((await browser.get('/auth/logout', { 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    expect((await browser.get('/auth/logout', { Origin: 'https://evil.example' })).status).toBe(403);
    expect(await me(browser)).not.toBeNull();
    expect((await browser.get('/auth/logout', { 'Sec-Fetch-Site': 'same-origin' })).location).toBe('/');
    expect(await me(browser)).toBeNull();
  });
});

describe('Hono with the cookie session: regeneration and the cookie itself', () => {
  let rp: HonoRp;
  beforeAll(async () => {
    rp = await startHonoRp('cookie');
  });
  afterAll(async () => {
    await rp.close();
  });

  it('starts a new session at sign-in and keeps the data sealed, HttpOnly and SameSite=Lax', async () => {
    const browser = new Browser(rp.baseUrl);
    const login = await browser.get('/auth/login');
    expect(login.setCookies[0]).toMatch(/^nd-id\.session=[\w.-]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const before = JSON.parse((await browser.get('/sid')).text) as { sid: string };
    const authorize = new URL(login.location as string);
    const back = await browser.get((await approve(authorize)).href);
    const after = JSON.parse((await browser.get('/sid')).text) as { sid: string };
    expect(after.sid).not.toBe(before.sid);
    const sealed = browser.jar.get('nd-id.session') ?? '';
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toContain(PERSONA['profile.name']);
    expect(back.setCookies.join('\n')).not.toContain(PERSONA['profile.name']);
  });

  it('treats an altered or foreign cookie as no session', async () => {
    const browser = new Browser(rp.baseUrl);
    const callback = await approve(await startLogin(browser, '/auth/login'));
    const sealed = browser.jar.get('nd-id.session') ?? '';
    const flipped = sealed.slice(0, 20) + (sealed[20] === 'A' ? 'B' : 'A') + sealed.slice(21);
    browser.jar.set('nd-id.session', flipped);
    expectFailurePage(await browser.get(callback.href), 403, /not started in this browser/);
    const other = createCookieSession({ secret: 'another-secret-another-secret-another-secret' });
    const foreign = await other.load(new Request('http://x/'));
    foreign.set('user', { sub: 'forged', data: {} });
    browser.jar.set(
      'nd-id.session',
      ((await other.commit(foreign, new Request('http://x/'))) ?? '').split(';')[0]?.split('=')[1] ?? '',
    );
    expect(await me(browser)).toBeNull();
  });
});
