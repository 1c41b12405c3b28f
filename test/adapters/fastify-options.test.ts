/**
 * ndIdFastify()'s options are checked when it is built, a route reached without a session plugin
 * says so (500, session_missing) rather than signing anyone in, as does a sign-in on a session
 * that cannot be regenerated, and its sign-out route ends the session and refuses another site,
 * over real HTTP and cookies.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { ndIdFastify, ndIdFastifyGuards } from '../../src/fastify.js';
import { testKeyPair } from '../helpers/keys.js';
import { appsUnderTest, Browser, recordingLogger } from '../sessions/harness.js';
import { startFastifyApp } from './fastify-app.js';

const client = new IdClient({
  clientId: 'app',
  clientSecret: 'app-secret',
  privateKey: testKeyPair('rp').privateKeyPem,
  hostname: 'https://id.example',
  redirectUri: 'https://app.example/auth/callback',
});
const loose = (value: Record<string, unknown>) => value as unknown as Parameters<typeof ndIdFastify>[0];

describe('ndIdFastify options', () => {
  it('refuses an unknown option, naming it (a session setting given here would otherwise be ignored)', () => {
    expect(() => ndIdFastify(loose({ client, idleTimeout: 60_000 }))).toThrow(/ndIdFastify\(\).*idleTimeout/);
  });

  it('refuses redirects and a login path that leave the site, and a userKey the flow uses', () => {
    expect(() => ndIdFastify({ client, successRedirect: 'https://evil.example/' })).toThrow(/successRedirect/);
    expect(() => ndIdFastify({ client, logoutRedirect: '//evil.example' })).toThrow(/logoutRedirect/);
    expect(() => ndIdFastify({ client, loginPath: 'auth/login' })).toThrow(/loginPath/);
    expect(() => ndIdFastify({ client, userKey: 'nd-id.signin' })).toThrow(/userKey/);
  });

  it('refuses a step-up guard without whole seconds, and unknown guard options', () => {
    const guards = ndIdFastifyGuards();
    expect(() => guards.requireRecentSignIn(-1)).toThrow(/whole number of seconds/);
    expect(() => guards.requireSignIn(loose({ loginpath: '/x' }) as never)).toThrow(/loginpath/);
  });
});

describe('ndIdFastify without a session plugin', () => {
  const app = Fastify();
  afterEach(async () => {
    await app.close();
  });

  it('answers the login route 500 (no store) and the guard the same, never signing anyone in', async () => {
    const auth = ndIdFastify({ client });
    await app.register(auth.plugin, { prefix: '/auth' });
    app.get('/account', { preHandler: auth.requireSignIn() }, async () => 'secret');
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    for (const path of ['/auth/login', '/account']) {
      const res = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(500);
      expect(res.headers.get('cache-control'), path).toContain('no-store');
      expect(await res.text(), path).not.toContain('secret');
    }
  });
});

/** The session id in @fastify/session's signed cookie (`sessionId=<id>.<signature>`). */
function sidOf(cookieHeader: string): string {
  const value = decodeURIComponent(/sessionId=([^;]+)/.exec(cookieHeader)?.[1] ?? '');
  return value.slice(0, value.lastIndexOf('.'));
}

describe.each(['session', 'secure-session'] as const)('ndIdFastify sign-out on @fastify/%s', (plugin) => {
  const apps = appsUnderTest((options) => startFastifyApp({ ...options, plugin }));

  it('ends the session (cookie cleared, or session deleted from its store); the log says so', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await apps.signedIn({ policy: { logger } });
    const copy = browser.cookieHeader();
    const res = await browser.request('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/signed-out');
    expect(res.headers.get('cache-control')).toContain('no-store');
    // The sealed cookie is cleared; a server-side session is deleted from its store (the plugin leaves its cookie).
    if (plugin === 'secure-session') expect(res.headers.getSetCookie().join()).toMatch(/Expires=Thu, 01 Jan 1970/i);
    else
      expect(
        await (
          app as unknown as { fastifyStore: { inner: { has(sid: string): Promise<boolean> } } }
        ).fastifyStore.inner.has(sidOf(copy)),
      ).toBe(false);
    expect((await browser.request('/account')).status).toBe(303);
    expect(events).toContainEqual(expect.objectContaining({ event: 'signed_out' }));
    if (plugin === 'session') {
      // Gone from the store, so an old copy of the cookie is nobody. (A copy of a sealed cookie
      // holds the whole session: it lives until its lifetimes end, or signOutEverywhere.)
      const replay = await fetch(`${app.baseUrl}/account`, { headers: { cookie: copy }, redirect: 'manual' });
      expect(replay.status).toBe(303);
    }
  });

  it('refuses a cross-site sign-out (403) and the person stays signed in', async () => {
    const { browser } = await apps.signedIn();
    const res = await browser.request('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } });
    expect(res.status).toBe(403);
    expect((await browser.request('/account')).status).toBe(200);
  });
});

describe('ndIdFastify on a session plugin whose sessions have no regenerate()', () => {
  const errors: Array<[Record<string, unknown>, string]> = [];
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (event: Record<string, unknown>, message: string) => errors.push([event, message]),
  };
  const apps = appsUnderTest((options) => startFastifyApp({ ...options, plugin: 'without-regenerate', logger }));

  it('refuses the sign-in (500, session_missing, saying what to register) rather than keep the session id', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const sessionId = async () => {
      await browser.request('/me');
      return browser.cookies.get('plain-sid');
    };
    const before = await sessionId();
    const res = await browser.signIn();
    expect(res.status).toBe(500);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(errors).toHaveLength(1);
    expect(errors[0]![0]).toMatchObject({ code: 'session_missing' });
    expect(errors[0]![1]).toMatch(/has no regenerate\(\).*register @fastify\/session or @fastify\/secure-session/);
    // Nobody is signed in under the session id the browser had before signing in.
    expect(await sessionId()).toBe(before);
    expect((await browser.request('/account')).status).toBe(303);
  });
});
