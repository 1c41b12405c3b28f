/**
 * No cache keeps a session: every response that sets or clears a session cookie, and every page a
 * sign-in guard lets through, says `Cache-Control: no-store` (a shared cache that kept one would
 * hand the session cookie, or the person's page, to the next visitor). Real HTTP on loopback,
 * real cookies, the provider's movable clock.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import { createFetchLogin } from '../../src/adapters/fetch.js';
import { IdClient } from '../../src/client/id-client.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import {
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  MINUTE,
  appsUnderTest,
  startExpressApp,
  startFetchApp,
  startTestProvider,
} from '../sessions/harness.js';

const COOKIE = 'nd-id.session';

describe('Express: requireSignIn', () => {
  const apps = appsUnderTest(startExpressApp);

  it('answers a signed-in person’s guarded page with Cache-Control: no-store, also when the session was touched', async () => {
    const { app, browser } = await apps.signedIn({ policy: { idleTimeout: 30 * MINUTE, touchInterval: MINUTE } });
    const page = await browser.request('/account');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    app.provider.provider.advanceClock(2 * MINUTE);
    const touched = await browser.request('/account');
    expect(touched.status).toBe(200);
    expect(touched.headers.get('cache-control')).toBe('no-store');
    const api = await browser.request('/api/me');
    expect(api.status).toBe(200);
    expect(api.headers.get('cache-control')).toBe('no-store');
  });

  it('answers the step-up guard’s page with no-store too', async () => {
    const { browser } = await apps.signedIn();
    const page = await browser.request('/transfer');
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
  });
});

describe('fetch handlers: the guard and the cookie session', () => {
  const apps = appsUnderTest(startFetchApp);

  it('answers a guarded page whose session was touched (a refreshed cookie) with Cache-Control: no-store', async () => {
    const { app, browser } = await apps.signedIn({ policy: { idleTimeout: 30 * MINUTE, touchInterval: MINUTE } });
    const quiet = await browser.request('/account');
    expect(quiet.status).toBe(200);
    expect(quiet.headers.getSetCookie()).toEqual([]);
    expect(quiet.headers.get('cache-control')).toBe('no-store');
    app.provider.provider.advanceClock(2 * MINUTE);
    const touched = await browser.request('/account');
    expect(touched.status).toBe(200);
    expect(touched.headers.getSetCookie().join()).toContain(`${COOKIE}=`);
    expect(touched.headers.get('cache-control')).toBe('no-store');
  });

  it('says no-store on every answer that sets or clears the session cookie: login, callback, sign-out, an ended session', async () => {
    const app = await apps.start({ policy: { maxSessionAge: 60 * MINUTE, idleTimeout: false } });
    const browser = new Browser(app.baseUrl);
    const login = await browser.request('/auth/login');
    expect(login.headers.getSetCookie().join()).toContain(`${COOKIE}=`);
    expect(login.headers.get('cache-control')).toBe('no-store');
    const approved = await fetch(login.headers.get('location')!, { redirect: 'manual' });
    const callback = await browser.request(approved.headers.get('location')!);
    expect(callback.status).toBe(302);
    expect(callback.headers.getSetCookie().join()).toContain(`${COOKIE}=`);
    expect(callback.headers.get('cache-control')).toBe('no-store');
    app.provider.provider.advanceClock(61 * MINUTE);
    const ended = await browser.request('/account');
    expect(ended.headers.getSetCookie().join()).toContain(`${COOKIE}=; Path=/; Max-Age=0`);
    expect(ended.headers.get('cache-control')).toBe('no-store');
    await browser.signIn();
    const out = await browser.request('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' } });
    expect(out.headers.getSetCookie().join()).toContain(`${COOKIE}=; Path=/; Max-Age=0`);
    expect(out.headers.get('cache-control')).toBe('no-store');
  });
});

describe('fetch handlers: a handler’s own Cache-Control', () => {
  let server: Server | undefined;
  let provider: StartedProvider | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    await provider?.close();
    server = undefined;
    provider = undefined;
  });

  /** A fetch app whose guarded `/cached` page asks to be cached publicly, and `/immutable` answers a Response.redirect (immutable headers). */
  async function start(): Promise<{ baseUrl: string; provider: StartedProvider }> {
    server = createServer();
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    provider = await startTestProvider([`${baseUrl}/auth/callback`]);
    const clock = provider.provider.clock;
    const keys = testKeyPair('sessions');
    const client = new IdClient({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: keys.privateKeyPem,
      hostname: provider.baseUrl,
      redirectUri: `${baseUrl}/auth/callback`,
      clock,
    });
    const sessions = createSessionPolicy({ idleTimeout: 30 * MINUTE, touchInterval: MINUTE, clock });
    const auth = createFetchLogin({
      client,
      clock,
      sessions,
      session: createCookieSession({ secret: 'cache-control-test-secret-0123456789abcdef', clock }),
    });
    const handle = async (request: Request): Promise<Response> => {
      const { pathname } = new URL(request.url);
      if (pathname === '/auth/login') return auth.login(request);
      if (pathname === '/auth/callback') return auth.callback(request);
      if (pathname === '/cached')
        return auth.requireSignIn(
          request,
          () => new Response('mine', { headers: { 'cache-control': 'public, max-age=3600' } }),
        );
      if (pathname === '/immutable')
        return auth.requireSignIn(request, () => Response.redirect(`${baseUrl}/cached`, 302));
      return new Response('not found', { status: 404 });
    };
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      void handle(new Request(`${baseUrl}${req.url}`, { headers })).then(async (response) => {
        res.statusCode = response.status;
        for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
        const cookies = response.headers.getSetCookie();
        if (cookies.length > 0) res.setHeader('set-cookie', cookies);
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
    return { baseUrl, provider };
  }

  it('keeps a handler’s own Cache-Control while no cookie goes out, and replaces it with no-store when the refreshed cookie does', async () => {
    const app = await start();
    const browser = new Browser(app.baseUrl);
    expect((await browser.signIn()).status).toBe(302);
    const quiet = await browser.request('/cached');
    expect(quiet.status).toBe(200);
    expect(quiet.headers.get('cache-control')).toBe('public, max-age=3600');
    app.provider.provider.advanceClock(2 * MINUTE);
    const touched = await browser.request('/cached');
    expect(touched.headers.getSetCookie().join()).toContain(`${COOKIE}=`);
    expect(touched.headers.get('cache-control')).toBe('no-store');
    app.provider.provider.advanceClock(2 * MINUTE);
    const redirect = await browser.request('/immutable');
    expect(redirect.status).toBe(302);
    expect(redirect.headers.getSetCookie().join()).toContain(`${COOKIE}=`);
    expect(redirect.headers.get('cache-control')).toBe('no-store');
  });
});
