/**
 * After sign-in with the Express router, over real HTTP and real cookies against the provider
 * with its movable clock: protected routes, session lifetimes, step-up and sign-out.
 */
import { describe, expect, it } from 'vitest';
import { Browser, OTHER_PERSONA, MINUTE, appsUnderTest, recordingLogger, startExpressApp } from './harness.js';

const apps = appsUnderTest(startExpressApp);
const { signedIn } = apps;

async function sidOf(browser: Browser): Promise<string> {
  return ((await (await browser.request('/sid')).json()) as { sid: string }).sid;
}

describe('requireSignIn (Express)', () => {
  it('sends a page request to the login route with returnTo of the current URL', async () => {
    const app = await apps.start();
    const res = await new Browser(app.baseUrl).request('/account?tab=2', { headers: { accept: 'text/html' } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/auth/login?returnTo=%2Faccount%3Ftab%3D2');
  });

  it('answers an API request 401 JSON with a WWW-Authenticate challenge and no redirect', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const byAccept = await browser.request('/account', { headers: { accept: 'application/json' } });
    expect(byAccept.status).toBe(401);
    expect(byAccept.headers.get('location')).toBeNull();
    expect(byAccept.headers.get('www-authenticate')).toBe(
      'Cookie realm="nd-id", form-action="/auth/login", error="sign_in_required"',
    );
    expect(await byAccept.json()).toEqual({
      error: 'sign_in_required',
      message: 'Sign in to continue.',
      login: '/auth/login?returnTo=%2Faccount',
    });
    const byOption = await browser.request('/api/me', { headers: { accept: 'text/html' } });
    expect(byOption.status).toBe(401);
  });

  it('lets a signed-in person through, with authTime and the sign-in time on the user and the record', async () => {
    const { app, browser } = await signedIn();
    const res = await browser.request('/account');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user: Record<string, unknown>; signIn: Record<string, unknown> };
    const now = app.provider.provider.clock();
    expect(body.user.authTime).toEqual(expect.any(Number));
    // In milliseconds, from this sign-in: not later than now, and not from another day or unit.
    expect(body.user.authTime as number).toBeLessThanOrEqual(now);
    expect(now - (body.user.authTime as number)).toBeLessThan(60_000);
    expect(body.user.signedInAt).toEqual(body.signIn.signedInAt);
    expect(body.signIn).toMatchObject({ sub: body.user.sub, authTime: body.user.authTime });
  });

  it('does not take a returnTo that leaves the site', async () => {
    const app = await apps.start();
    const res = await new Browser(app.baseUrl).request('//evil.example/account');
    // Express routes "//evil.example/account" nowhere: the guard never sees it; a safe path is kept verbatim.
    expect(res.headers.get('location') ?? '').not.toContain('evil.example');
  });
});

describe('session lifetimes (Express)', () => {
  it('ends the session after maxSessionAge, in the store, and sends the person to sign in with returnTo; the log says why', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { maxSessionAge: 60 * MINUTE, idleTimeout: false, logger } });
    const sid = await sidOf(browser);
    expect(await app.store.has(sid)).toBe(true);
    app.provider.provider.advanceClock(59 * MINUTE);
    expect((await browser.request('/account')).status).toBe(200);
    app.provider.provider.advanceClock(2 * MINUTE);
    const cookie = browser.cookieHeader();
    const res = await browser.request('/account?x=1');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/auth/login?returnTo=%2Faccount%3Fx%3D1');
    expect(await app.store.has(sid)).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'max_session_age' }));
    expect(JSON.stringify(events)).not.toContain(OTHER_PERSONA['profile.name']);
    // The old cookie, sent again, is not a session any more.
    const replay = await fetch(`${app.baseUrl}/account`, { headers: { cookie }, redirect: 'manual' });
    expect(replay.status).toBe(303);
  });

  it('rolls the idle timeout on activity with at most one session write per interval, and ends an idle session', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { idleTimeout: 30 * MINUTE, touchInterval: MINUTE, logger } });
    const before = app.store.writes;
    for (let i = 0; i < 5; i++) expect((await browser.request('/account')).status).toBe(200);
    expect(app.store.writes - before).toBe(0);
    // Active for 100 minutes, a request every 20: never idle for 30.
    for (let i = 0; i < 5; i++) {
      app.provider.provider.advanceClock(20 * MINUTE);
      const writes = app.store.writes;
      expect((await browser.request('/account')).status).toBe(200);
      expect((await browser.request('/account')).status).toBe(200);
      expect(app.store.writes - writes).toBe(1);
    }
    app.provider.provider.advanceClock(31 * MINUTE);
    const res = await browser.request('/account');
    expect(res.status).toBe(303);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'idle_timeout' }));
  });

  it('keeps a session whose limits are both off', async () => {
    const { app, browser } = await signedIn({ policy: { maxSessionAge: false, idleTimeout: false } });
    app.provider.provider.advanceClock(30 * 24 * 60 * MINUTE);
    expect((await browser.request('/account')).status).toBe(200);
  });

  it('applies the documented defaults: 12 hours absolute, 30 minutes idle', async () => {
    const { app, browser } = await signedIn();
    app.provider.provider.advanceClock(29 * MINUTE);
    expect((await browser.request('/account')).status).toBe(200);
    app.provider.provider.advanceClock(31 * MINUTE);
    expect((await browser.request('/account')).status).toBe(303);
    const second = new Browser(app.baseUrl);
    expect((await second.signIn()).status).toBe(302);
    for (let i = 0; i < 24; i++) {
      app.provider.provider.advanceClock(29 * MINUTE);
      expect((await second.request('/account')).status).toBe(200);
    }
    app.provider.provider.advanceClock(29 * MINUTE); // 12 h 25 min after sign-in
    expect((await second.request('/account')).status).toBe(303);
  });
});

describe('step-up (Express)', () => {
  it('sends max_age to the service', async () => {
    const { browser } = await signedIn();
    const start = await browser.request('/auth/login?returnTo=%2Ftransfer&maxAge=300');
    expect(new URL(start.headers.get('location')!).searchParams.get('max_age')).toBe('300');
  });
});

describe('sign-out (Express)', () => {
  it('ends the session in the store, clears the cookie and redirects to the configured page; the log says so', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { logger } });
    const sid = await sidOf(browser);
    const cookie = browser.cookieHeader();
    const res = await browser.request('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/signed-out');
    expect(res.headers.getSetCookie().join()).toMatch(/connect\.sid=;.*Expires=Thu, 01 Jan 1970/);
    expect(await app.store.has(sid)).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ event: 'signed_out' }));
    const replay = await fetch(`${app.baseUrl}/account`, { headers: { cookie }, redirect: 'manual' });
    expect(replay.status).toBe(303);
  });

  it('refuses a cross-site sign-out', async () => {
    const { browser } = await signedIn();
    const res = await browser.request('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'cross-site' } });
    expect(res.status).toBe(403);
    expect((await browser.request('/account')).status).toBe(200);
  });
});
