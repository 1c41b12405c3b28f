/**
 * Every way a sign-in can fail, through ndIdRouter against the real provider: the person sees a
 * small page (or the failureRedirect), never a stack trace, a secret or personal data.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Request } from 'express';
import session from 'express-session';
import { IdError } from '../../src/errors.js';
import type { NdIdUser, NdIdVerify, NdIdVerifyDone } from '../../src/passport/strategy.js';
import {
  approve,
  currentUser,
  expectSafePage,
  followCallback,
  PERSONA,
  startLogin,
  startRp,
  type Rp,
} from './harness.js';
import { freePort } from '../helpers/ports.js';

let rp: Rp | undefined;
afterEach(async () => {
  await rp?.close();
  rp = undefined;
});

/** A session store that keeps sessions but cannot destroy one: Passport's regenerate at login fails. */
class StoreFailingOnDestroy extends session.MemoryStore {
  override destroy(_sid: string, callback?: (err?: unknown) => void): void {
    setImmediate(() => callback?.(new Error('The session store is down.')));
  }
}

describe('callbacks that do not belong to this browser', () => {
  it('a callback with no login started shows a 403 page with a "Try again" link, and the service is never called', async () => {
    rp = await startRp();
    const res = await rp.browser().get('/auth/callback?code=anything&state=made-up');
    expectSafePage(res, 403);
    expect(res.text).toContain('<a class="primary" href="/auth/login">Try again</a>');
    expect(rp.tokenCalls()).toBe(0);
  });

  it("another browser's code and state pasted into the victim's browser are refused (403) and do not sign the victim in", async () => {
    rp = await startRp();
    const attacker = rp.browser();
    const victim = rp.browser();
    await startLogin(victim); // the victim has a login of their own in progress
    const attackersCallback = await approve(await startLogin(attacker));
    const res = await followCallback(victim, attackersCallback);
    expectSafePage(res, 403);
    expect(await currentUser(victim)).toBeNull();
    expect(rp.tokenCalls()).toBe(0);
  });

  it('a replayed callback is refused (403) and the code is redeemed only once', async () => {
    rp = await startRp();
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    expect((await followCallback(browser, callback)).status).toBe(302);
    // The person who signed in is sent on (the back button); anyone else is refused.
    expect((await followCallback(browser, callback)).status).toBe(302);
    const replay = await followCallback(rp.browser(), callback);
    expectSafePage(replay, 403);
    expect(rp.tokenCalls()).toBe(1);
  });

  it('a login completed after loginTtl shows an "expired" page and the service is not called', async () => {
    let now = Date.now();
    rp = await startRp({ clock: () => now, strategy: { loginTtl: 60_000 } });
    const browser = rp.browser();
    const authorize = await startLogin(browser);
    const callback = await approve(authorize);
    now += 60_001;
    const res = await followCallback(browser, callback);
    expectSafePage(res, 401);
    expect(res.text).toContain('expired');
    expect(rp.tokenCalls()).toBe(0);
    expect(await currentUser(browser)).toBeNull();
  });

  it('a person who refuses in the app (error=access_denied) sees a 401 page saying so', async () => {
    rp = await startRp();
    const browser = rp.browser();
    const authorize = await startLogin(browser);
    const state = authorize.searchParams.get('state') as string;
    // The provider's error redirects carry its iss (RFC 9207), as its code redirects do.
    const iss = encodeURIComponent(`${authorize.origin}/v2`);
    const res = await browser.get(`/auth/callback?error=access_denied&state=${encodeURIComponent(state)}&iss=${iss}`);
    expectSafePage(res, 401);
    expect(res.text).toMatch(/cancelled or refused/);
    expect(rp.tokenCalls()).toBe(0);
  });

  it('another provider error shows its code, with the description escaped', async () => {
    rp = await startRp();
    const browser = rp.browser();
    const authorize = await startLogin(browser);
    const state = authorize.searchParams.get('state') as string;
    const iss = encodeURIComponent(`${authorize.origin}/v2`);
    const res = await browser.get(
      `/auth/callback?error=temporarily_unavailable&error_description=${encodeURIComponent('<b>x</b>')}&state=${state}&iss=${iss}`,
    );
    expectSafePage(res, 401);
    expect(res.text).toContain('temporarily_unavailable');
    expect(res.text).not.toContain('<b>x</b>');
  });

  it('with failureRedirect, a failure redirects there instead of showing the page', async () => {
    rp = await startRp({ router: { failureRedirect: '/signin-failed' } });
    const res = await rp.browser().get('/auth/callback?code=x&state=y');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/signin-failed');
    expect(res.headers['content-length']).toBe('0');
  });
});

describe('when the service or the app is not set up to answer', () => {
  it('the service being down shows a 502 page, not a stack trace', async () => {
    rp = await startRp({ hostname: `http://127.0.0.1:${await freePort()}`, timeout: 2000 });
    const browser = rp.browser();
    const authorize = await startLogin(browser);
    const state = authorize.searchParams.get('state') as string;
    const res = await browser.get(`/auth/callback?code=some-code&state=${encodeURIComponent(state)}`);
    expectSafePage(res, 502);
    expect(res.text).toMatch(/cannot be reached/);
    expect(res.text).toContain('Try again');
  });

  it("with errorPage: false, the service being down reaches the app's own error handler as an IdError", async () => {
    const seen: string[] = [];
    rp = await startRp({
      hostname: `http://127.0.0.1:${await freePort()}`,
      router: { errorPage: false },
      errorHandler: (err: unknown, _req, res, _next) => {
        seen.push(err instanceof IdError ? err.code : 'other');
        res.status(503).type('html').send('<p>Our own page</p>');
      },
    });
    const browser = rp.browser();
    const state = (await startLogin(browser)).searchParams.get('state') as string;
    const res = await browser.get(`/auth/callback?code=some-code&state=${encodeURIComponent(state)}`);
    expect(res.status).toBe(503);
    expect(res.text).toContain('Our own page');
    expect(seen).toEqual(['provider_unreachable']);
  });

  it('a wrong client secret shows a 5xx "Sign-in is unavailable" page, not "Sign-in failed", and never the secret', async () => {
    const wrongSecret = 'wrong-secret-never-shown-41c2';
    rp = await startRp({ clientSecret: wrongSecret });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 500);
    expect(res.text).toContain('Sign-in is unavailable');
    expect(res.text).not.toContain('Sign-in failed');
    expect(res.text).not.toContain(wrongSecret);
    expect(res.text).not.toContain('invalid_client');
    expect(rp.tokenCalls()).toBe(1);
    expect(await currentUser(browser)).toBeNull();
  });

  it("with failureRedirect and errorPage: false, a wrong client secret reaches the app's error handler, not failureRedirect", async () => {
    const seen: unknown[] = [];
    rp = await startRp({
      clientSecret: 'wrong-secret-never-shown-41c2',
      router: { errorPage: false, failureRedirect: '/signin-failed' },
      errorHandler: (err: unknown, _req, res, _next) => {
        seen.push(err);
        res.status(500).type('html').send('<p>Our own page</p>');
      },
    });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expect(res.status).toBe(500);
    expect(res.text).toContain('Our own page');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(IdError);
    expect(seen[0]).toMatchObject({ code: 'token_request_failed', cause: { error: 'invalid_client' } });
  });

  it('an unusable key set from the service (jwks_invalid) shows a 5xx page, not "Sign-in failed"', async () => {
    rp = await startRp();
    rp.provider.provider.faults.inject({ kind: 'status', status: 404 }, { endpoint: 'jwks', times: 1 });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 500);
    expect(res.text).toContain('Sign-in is unavailable');
    expect(res.text).not.toContain('Sign-in failed');
    expect(await currentUser(browser)).toBeNull();
  });

  it('a session store failing while signing in shows the 503 page and signs nobody in', async () => {
    rp = await startRp({ sessionStore: new StoreFailingOnDestroy() });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 503);
    expect(res.text).toContain('Sign-in is unavailable');
    expect(res.text).not.toContain('store is down');
    expect(await currentUser(browser)).toBeNull();
  });

  it('with errorPage: false, a session store failing while signing in reaches next(err) as session_store_unavailable', async () => {
    const seen: unknown[] = [];
    rp = await startRp({
      sessionStore: new StoreFailingOnDestroy(),
      router: { errorPage: false },
      errorHandler: (err: unknown, _req, res, _next) => {
        seen.push(err);
        res.status(503).type('html').send('<p>Our own page</p>');
      },
    });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expect(res.status).toBe(503);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(IdError);
    expect(seen[0]).toMatchObject({
      code: 'session_store_unavailable',
      cause: { message: 'The session store is down.' },
    });
  });

  it('without express-session, /login shows a 500 page telling the developer to mount express-session', async () => {
    rp = await startRp({ session: false });
    const res = await rp.browser().get('/auth/login');
    expectSafePage(res, 500);
    expect(res.text).toContain('express-session');
  });

  it('without express-session, /callback also shows that page', async () => {
    rp = await startRp({ session: false });
    const res = await rp.browser().get('/auth/callback?code=c&state=s');
    expectSafePage(res, 500);
    expect(res.text).toContain('express-session');
  });
});

describe('verify callbacks through the router', () => {
  it('passReqToCallback gives the request to verify', async () => {
    rp = await startRp({
      strategy: { passReqToCallback: true },
      verify: (req: Request, user: NdIdUser, done: NdIdVerifyDone) =>
        done(null, { sub: user.sub, agent: req.get('x-test-agent') ?? null }),
    });
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    await browser.get(callback.pathname + callback.search).set('x-test-agent', 'tab-7');
    expect(await currentUser(browser)).toMatchObject({ agent: 'tab-7' });
  });

  it('an async verify can map the person to an app user, and sees the ID token claims', async () => {
    rp = await startRp({
      verify: async (user: NdIdUser) => ({
        id: `user:${user.sub}`,
        name: user.data['profile.name'],
        aud: user.claims.aud,
      }),
    });
    const browser = rp.browser();
    await followCallback(browser, await approve(await startLogin(browser)));
    expect(await currentUser(browser)).toMatchObject({ name: PERSONA['profile.name'], aud: 'rp-under-test' });
  });

  it('a verify wrapped in a rest-args function that returns a value and refuses through done signs nobody in', async () => {
    const verify = (_user: NdIdUser, done: NdIdVerifyDone) => {
      setImmediate(() => done(null, false, { message: 'This service is for staff only.' }));
      return { connection: 'db' };
    };
    rp = await startRp({ verify: ((...args: [NdIdUser, NdIdVerifyDone]) => verify(...args)) as unknown as NdIdVerify });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 401);
    expect(res.text).toContain('This service is for staff only.');
    expect(await currentUser(browser)).toBeNull();
  });

  it('verify refusing a user shows its message on a 401 page and signs nobody in', async () => {
    rp = await startRp({
      verify: (_user: NdIdUser, done: NdIdVerifyDone) =>
        done(null, false, { message: 'This service is for staff only.' }),
    });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 401);
    expect(res.text).toContain('This service is for staff only.');
    expect(await currentUser(browser)).toBeNull();
  });
});

describe('signing out', () => {
  let sessionCookie = '';
  async function signedIn(): Promise<ReturnType<Rp['browser']>> {
    rp = await startRp();
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    sessionCookie = (setCookie.find((c) => c.startsWith('connect.sid=')) ?? '').split(';')[0];
    expect(sessionCookie).toMatch(/^connect\.sid=s%3A/);
    expect(await currentUser(browser)).not.toBeNull();
    return browser;
  }

  it('POST /logout signs out, destroys the session, clears its cookie and redirects to logoutRedirect', async () => {
    const browser = await signedIn();
    const res = await browser.post('/auth/logout').set('Origin', rp!.baseUrl).set('Sec-Fetch-Site', 'same-origin');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/');
    expect(res.headers['content-length']).toBe('0');
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(setCookie.some((c) => /^connect\.sid=;/.test(c) && /Expires=Thu, 01 Jan 1970/.test(c))).toBe(true);
    expect(await currentUser(browser)).toBeNull();
  });

  it('the old session cookie no longer signs anyone in after logout', async () => {
    const browser = await signedIn();
    const stranger = rp!.browser();
    expect((await stranger.get('/me').set('Cookie', sessionCookie)).status).toBe(200);
    await browser.post('/auth/logout');
    expect((await stranger.get('/me').set('Cookie', sessionCookie)).status).toBe(401);
  });

  it.each([
    ['Sec-Fetch-Site: cross-site', { 'Sec-Fetch-Site': 'cross-site' }],
    ['an Origin of another site', { Origin: 'https://evil.example' }],
    ['Origin: null', { Origin: 'null' }],
  ])('a cross-site POST /logout (%s) is refused with 403 and the person stays signed in', async (_name, headers) => {
    const browser = await signedIn();
    const res = await browser.post('/auth/logout').set(headers);
    expectSafePage(res, 403);
    expect(await currentUser(browser)).not.toBeNull();
  });
});
