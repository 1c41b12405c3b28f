/**
 * After sign-in with the fetch-standard handlers and their sealed cookie session, over real HTTP
 * and real cookies against the provider with its movable clock.
 */
import { describe, expect, it } from 'vitest';
import type { SignOutStore } from '../../src/flow/sign-out-store.js';
import { Browser, MINUTE, appsUnderTest, recordingLogger, startFetchApp } from './harness.js';

const apps = appsUnderTest(startFetchApp);
const { signedIn } = apps;
const COOKIE = 'nd-id.session';

describe('requireSignIn (fetch)', () => {
  it('redirects a page request to the login route with returnTo, and answers an API request 401 JSON', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const page = await browser.request('/account?tab=2', { headers: { accept: 'text/html' } });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/auth/login?returnTo=%2Faccount%3Ftab%3D2');
    const api = await browser.request('/account', { headers: { accept: 'application/json' } });
    expect(api.status).toBe(401);
    expect(api.headers.get('location')).toBeNull();
    expect(api.headers.get('www-authenticate')).toBe(
      'Cookie realm="nd-id", form-action="/auth/login", error="sign_in_required"',
    );
    expect(((await api.json()) as { login: string }).login).toBe('/auth/login?returnTo=%2Faccount');
    expect((await browser.request('/api/me')).status).toBe(401);
  });

  it('runs the handler for a signed-in person, whose user carries authTime and the sign-in time', async () => {
    const { browser } = await signedIn();
    const res = await browser.request('/account');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { user: Record<string, unknown>; signIn: Record<string, unknown> };
    expect(body.user.authTime).toEqual(expect.any(Number));
    expect(body.user.signedInAt).toBe(body.signIn.signedInAt);
    expect(body.signIn.authTime).toBe(body.user.authTime);
  });
});

describe('session lifetimes (fetch)', () => {
  it('ends the session after maxSessionAge (cookie cleared), sends the person to sign in with returnTo, and logs why', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { maxSessionAge: 60 * MINUTE, idleTimeout: false, logger } });
    app.provider.provider.advanceClock(61 * MINUTE);
    const res = await browser.request('/account');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/auth/login?returnTo=%2Faccount');
    expect(res.headers.getSetCookie().join()).toContain(`${COOKIE}=; Path=/; Max-Age=0`);
    expect(browser.cookies.has(COOKIE)).toBe(false);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'max_session_age' }));
  });

  it('rolls the idle timeout with at most one cookie write per interval, and ends an idle session', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { idleTimeout: 30 * MINUTE, touchInterval: MINUTE, logger } });
    for (let i = 0; i < 3; i++) expect((await browser.request('/account')).headers.getSetCookie()).toEqual([]);
    for (let i = 0; i < 4; i++) {
      app.provider.provider.advanceClock(20 * MINUTE);
      const first = await browser.request('/account');
      expect(first.status).toBe(200);
      expect(first.headers.getSetCookie()).toHaveLength(1);
      expect((await browser.request('/account')).headers.getSetCookie()).toEqual([]);
    }
    app.provider.provider.advanceClock(31 * MINUTE);
    expect((await browser.request('/account')).status).toBe(303);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'idle_timeout' }));
  });
});

describe('step-up (fetch)', () => {
  it('refuses an ID token whose auth_time is after its iat (id_token_malformed), so a future auth_time cannot pass the step-up', async () => {
    const { app, browser } = await signedIn();
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    expect(refused.status).toBe(303);
    app.provider.provider.approveNext({ claims: { auth_time: 3600 } }); // an hour after iat
    const page = await browser.signIn(refused.headers.get('location')!);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('Sign-in failed');
    // The person is still signed in as before, and the action still asks for a fresh confirmation.
    expect((await browser.request('/account')).status).toBe(200);
    expect((await browser.request('/transfer')).status).toBe(303);
    app.provider.provider.advanceClock(30 * MINUTE);
    expect((await browser.request('/transfer')).status).toBe(303);
  });
});

describe('sign-out (fetch)', () => {
  it('clears the session cookie and redirects to the page given; a cross-site sign-out is refused', async () => {
    const { logger, events } = recordingLogger();
    const { browser } = await signedIn({ policy: { logger } });
    const cross = await browser.request('/auth/logout', {
      method: 'POST',
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(cross.status).toBe(403);
    expect((await browser.request('/account')).status).toBe(200);
    const res = await browser.request('/auth/logout', { method: 'POST', headers: { 'sec-fetch-site': 'same-origin' } });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/signed-out');
    expect(browser.cookies.has(COOKIE)).toBe(false);
    expect((await browser.request('/account')).status).toBe(303);
    expect(events).toContainEqual(expect.objectContaining({ event: 'signed_out' }));
  });

  it('signOutEverywhere ends every session of the person, even an old copy of the cookie', async () => {
    const { app, browser } = await signedIn();
    const copy = browser.cookieHeader();
    const me = ((await (await browser.request('/account')).json()) as { user: { sub: string } }).user.sub;
    await app.sessions.signOutEverywhere(me);
    expect((await browser.request('/account')).status).toBe(303);
    const replay = await fetch(`${app.baseUrl}/account`, { headers: { cookie: copy }, redirect: 'manual' });
    expect(replay.status).toBe(303);
  });
});

describe('auth.user (fetch) reads the person as the guards do', () => {
  /** The unguarded `/me` with the cookie header `cookie`: the person it reads, or null. */
  async function userWith(baseUrl: string, cookie: string): Promise<{ sub: string } | null> {
    const res = await fetch(`${baseUrl}/me`, { headers: { cookie } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { user: { sub: string } | null }).user;
  }

  it('gives nobody for a copy of the cookie once the person is signed out everywhere', async () => {
    const { app, browser } = await signedIn();
    const copy = browser.cookieHeader();
    const person = await userWith(app.baseUrl, copy);
    expect(person?.sub).toEqual(expect.any(String));
    await app.sessions.signOutEverywhere(person!.sub);
    expect(await userWith(app.baseUrl, copy)).toBeNull();
    expect((await fetch(`${app.baseUrl}/account`, { headers: { cookie: copy }, redirect: 'manual' })).status).toBe(303);
  });

  it('gives nobody after the idle timeout, and reading does not keep the session alive', async () => {
    const { app, browser } = await signedIn({ policy: { idleTimeout: 30 * MINUTE, touchInterval: MINUTE } });
    const copy = browser.cookieHeader();
    app.provider.provider.advanceClock(20 * MINUTE);
    expect(await userWith(app.baseUrl, copy)).not.toBeNull(); // an unguarded read is not activity...
    app.provider.provider.advanceClock(11 * MINUTE);
    expect(await userWith(app.baseUrl, copy)).toBeNull(); // ...so 31 minutes after sign-in the session has ended
    expect((await browser.request('/account')).status).toBe(303);
  });

  it('gives nobody after maxSessionAge, however active the session', async () => {
    const { app, browser } = await signedIn({ policy: { maxSessionAge: 60 * MINUTE, idleTimeout: false } });
    const copy = browser.cookieHeader();
    app.provider.provider.advanceClock(59 * MINUTE);
    expect(await userWith(app.baseUrl, copy)).not.toBeNull();
    app.provider.provider.advanceClock(2 * MINUTE);
    expect(await userWith(app.baseUrl, copy)).toBeNull();
  });

  it('rejects with session_store_unavailable, never the person, when the sign-out store cannot be read', async () => {
    const failing: SignOutStore = {
      signOutBefore: () => Promise.resolve(),
      signedOutBefore: () => Promise.reject(new Error('store down')),
    };
    const { app, browser } = await signedIn({ policy: { signOutStore: failing } });
    const request = new Request(`${app.baseUrl}/me`, { headers: { cookie: browser.cookieHeader() } });
    await expect(app.auth.user(request)).rejects.toMatchObject({ code: 'session_store_unavailable' });
  });
});
