/**
 * The whole sign-in through ndIdRouter, in a browser with a cookie jar, against the real
 * provider on loopback (autoApprove mode).
 */
import { MemoryStore, type SessionData } from 'express-session';
import passport from 'passport';
import { afterEach, describe, expect, it } from 'vitest';
import {
  approve,
  currentUser,
  expectSafePage,
  followCallback,
  PERSONA,
  sessionId,
  startLogin,
  startRp,
  type Rp,
} from './harness.js';

let rp: Rp | undefined;
afterEach(async () => {
  await rp?.close();
  rp = undefined;
});

describe('signing in through the router', () => {
  it('signs the person in and req.user.data holds their decrypted attributes', async () => {
    rp = await startRp({ strategy: { scope: 'openid profile.name profile.nric_number' } });
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    const res = await followCallback(browser, callback);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/');
    // No "Found. Redirecting to" text: express-session then writes the answer in one piece.
    expect(res.headers['content-length']).toBe('0');
    const user = await currentUser(browser);
    expect(user).toEqual({
      sub: expect.any(String),
      data: { 'profile.name': PERSONA['profile.name'], 'profile.nric_number': PERSONA['profile.nric_number'] },
      claims: expect.objectContaining({ sub: expect.any(String), aud: expect.any(String) }),
      authTime: expect.any(Number),
      signedInAt: expect.any(Number),
    });
  });

  it('sends the person back to the page they asked for with ?returnTo=', async () => {
    rp = await startRp();
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser, '/auth/login?returnTo=%2Faccount%3Ftab%3D2'));
    const res = await followCallback(browser, callback);
    expect(res.headers.location).toBe('/account?tab=2');
  });

  it("saves the session with its sign-in record before the redirect, one write beside Passport's and express-session's", async () => {
    class CountingStore extends MemoryStore {
      writes = 0;
      override set(sid: string, session: SessionData, cb?: (err?: unknown) => void): void {
        this.writes++;
        super.set(sid, session, cb);
      }
    }
    const store = new CountingStore();
    rp = await startRp({ sessionStore: store });
    const browser = rp.browser();
    const alone = await approve(await startLogin(browser));
    let before = store.writes;
    expect((await followCallback(browser, alone)).status).toBe(302);
    // Passport's logIn saves the regenerated session; the router saves it with the sign-in record
    // before redirecting (express-session's own save finishes only after the redirect's headers
    // are out, too late for a browser sent to another instance); express-session saves it again
    // as it answers.
    expect(store.writes - before).toBe(3);
    expect(await currentUser(browser)).not.toBeNull();

    // A second tab's login still in progress is carried into the new session in the same write.
    const tabs = [await startLogin(browser), await startLogin(browser)];
    const callbacks = [await approve(tabs[0]!), await approve(tabs[1]!)];
    before = store.writes;
    expect((await followCallback(browser, callbacks[0]!)).status).toBe(302);
    expect(store.writes - before).toBe(3);
    const second = await followCallback(browser, callbacks[1]!);
    expect(second.status).toBe(302);
    expect(second.headers.location).toBe('/');
  });

  it('has the sign-in record in the store when the redirect after sign-in arrives, however slow the store', async () => {
    // Each write takes 300 ms. The property a second instance relies on, end to end. It holds
    // through the router's own save before the redirect; express-session's save as the response
    // ends also finishes before the headers of a redirect without a body, so this test alone would
    // not notice that save gone: the write count above does.
    class SlowStore extends MemoryStore {
      slow = false;
      override set(sid: string, session: SessionData, cb?: (err?: unknown) => void): void {
        if (this.slow) setTimeout(() => super.set(sid, session, cb), 300);
        else super.set(sid, session, cb);
      }
    }
    const store = new SlowStore();
    rp = await startRp({ sessionStore: store });
    const login = await fetch(`${rp.baseUrl}/auth/login`, { redirect: 'manual' });
    const cookie = login.headers.getSetCookie()[0]!.split(';')[0]!;
    const callback = await approve(new URL(login.headers.get('location')!));
    store.slow = true;
    // Only the headers are awaited: a browser follows a redirect as soon as it has them.
    const answer = await fetch(`${rp.baseUrl}${callback.pathname}${callback.search}`, {
      redirect: 'manual',
      headers: { cookie },
    });
    expect(answer.status).toBe(302);
    const sid = decodeURIComponent(answer.headers.getSetCookie()[0]!.split(';')[0]!.split('=')[1]!)
      .slice(2)
      .split('.')[0]!;
    const saved = await new Promise<SessionData | null | undefined>((resolve) =>
      store.get(sid, (_err, session) => resolve(session)),
    );
    expect(saved).toHaveProperty(['nd-id.signin', 'sub']);
    await answer.arrayBuffer();
  });

  it('gives the browser a new session id at login (no session fixation)', async () => {
    rp = await startRp();
    const browser = rp.browser();
    const authorize = await startLogin(browser);
    const before = await sessionId(browser);
    expect(before).toEqual(expect.any(String));
    await followCallback(browser, await approve(authorize));
    const after = await sessionId(browser);
    expect(after).toEqual(expect.any(String));
    expect(after).not.toBe(before);
    expect(await currentUser(browser)).not.toBeNull();
  });

  it.each([
    ['B then A', [1, 0]],
    ['A then B', [0, 1]],
  ])('lets two tabs of one browser both sign in, completing %s', async (_name, order) => {
    rp = await startRp({ router: { successRedirect: '/done' } });
    const browser = rp.browser();
    const tabs = [
      await startLogin(browser, '/auth/login?returnTo=/tab-a'),
      await startLogin(browser, '/auth/login?returnTo=/tab-b'),
    ];
    const callbacks = [await approve(tabs[0]), await approve(tabs[1])];
    const first = await followCallback(browser, callbacks[order[0]]);
    const second = await followCallback(browser, callbacks[order[1]]);
    expect(first.headers.location).toBe(order[0] === 0 ? '/tab-a' : '/tab-b');
    expect(second.status).toBe(302);
    expect(second.headers.location).toBe(order[1] === 0 ? '/tab-a' : '/tab-b');
    expect(await currentUser(browser)).not.toBeNull();
  });

  it.each([
    ['protocol-relative URL', '//evil.example/'],
    ['slash backslash', '/\\evil.example'],
    ['absolute URL with a scheme', 'https://evil.example/'],
    ['javascript: URL', 'javascript:alert(1)'],
    ['control character', '/ok\r\nLocation: https://evil.example'],
    ['double slash inside the path', '/a//evil.example'],
    ['relative path', 'account'],
    ['over-long path', '/' + 'a'.repeat(3000)],
  ])('ignores an open-redirect returnTo (%s) and sends the person to successRedirect', async (_name, returnTo) => {
    rp = await startRp({ router: { successRedirect: '/home' } });
    const browser = rp.browser();
    const authorize = await startLogin(browser, `/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
    const res = await followCallback(browser, await approve(authorize));
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/home');
  });

  it('keeps at most maxPendingLogins logins per session: the oldest is evicted and fails, the newest works', async () => {
    rp = await startRp({ strategy: { maxPendingLogins: 2 } });
    const browser = rp.browser();
    const oldest = await startLogin(browser);
    const middle = await startLogin(browser);
    const newest = await startLogin(browser);
    const evicted = await followCallback(browser, await approve(oldest));
    expectSafePage(evicted, 403);
    expect(rp.tokenCalls()).toBe(0);
    expect((await followCallback(browser, await approve(newest))).status).toBe(302);
    expect((await followCallback(browser, await approve(middle))).status).toBe(302);
  });

  it('runs afterCallback, which can enrich the user', async () => {
    rp = await startRp({
      router: { afterCallback: (_req, user) => ({ ...(user as object), role: 'member' }) },
    });
    const browser = rp.browser();
    await followCallback(browser, await approve(await startLogin(browser)));
    expect(await currentUser(browser)).toMatchObject({
      role: 'member',
      data: { 'profile.name': PERSONA['profile.name'] },
    });
  });

  it('lets afterCallback refuse the user: a 401 page, and nobody is signed in', async () => {
    rp = await startRp({ router: { afterCallback: async () => false } });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 401);
    expect(await currentUser(browser)).toBeNull();
  });

  it('works with the routes renamed, and a route turned off answers 404', async () => {
    rp = await startRp({
      mount: '/id',
      callbackPath: '/id/return',
      router: { routes: { login: '/start', callback: '/return', logout: false } },
    });
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser, '/id/start'));
    expect(callback.pathname).toBe('/id/return');
    expect((await followCallback(browser, callback)).status).toBe(302);
    expect((await browser.post('/id/logout')).status).toBe(404);
  });

  it('matches its routes as Express does (any case, one trailing slash) and passes every other request on', async () => {
    rp = await startRp();
    const browser = rp.browser();
    for (const path of ['/auth/login/', '/auth/LOGIN']) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(302);
      expect(new URL(res.headers.location as string).pathname).toBe('/v2/oauth/authorize');
    }
    // Not its routes, or not their methods: the app's own 404.
    expect((await browser.get('/auth/login/extra')).status).toBe(404);
    expect((await browser.post('/auth/login')).status).toBe(404);
    expect((await browser.get('/auth/logout')).status).toBe(404);
    expect((await browser.get('/auth')).status).toBe(404);
    // A route written with a trailing slash matches without one, as in Express.
    await rp.close();
    rp = await startRp({ router: { routes: { login: '/start/' } } });
    expect((await rp.browser().get('/auth/start')).status).toBe(302);
    // The router signs in with its own Passport instance's serializer, even when the app mounted
    // another instance's session() ahead of it (as passport.authenticate does).
    await rp.close();
    const appPassport = new passport.Passport();
    appPassport.serializeUser((_user, done) => done(null, { via: 'the app instance' }));
    appPassport.deserializeUser((user: Express.User, done) => done(null, user));
    rp = await startRp({ sessionPassport: appPassport });
    const mixed = rp.browser();
    expect((await followCallback(mixed, await approve(await startLogin(mixed)))).status).toBe(302);
    expect(await currentUser(mixed)).toMatchObject({ sub: expect.any(String) });
    // Without passport.session() (so no req.logIn yet), a login still completes through passport.authenticate.
    await rp.close();
    rp = await startRp({ passportSession: false });
    const other = rp.browser();
    expect((await followCallback(other, await approve(await startLogin(other)))).status).toBe(302);
  });
});

describe('the design card usage', () => {
  it('app.use(path, passport.authenticate("nd-id")) starts and completes a login on one path', async () => {
    rp = await startRp({ designCard: true });
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser, '/sso'));
    expect(callback.pathname).toBe('/sso');
    const res = await followCallback(browser, callback);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/me');
    expect(await currentUser(browser)).toMatchObject({ data: { 'profile.name': PERSONA['profile.name'] } });
  });

  it('a failed callback goes to failureRedirect', async () => {
    rp = await startRp({ designCard: true });
    const res = await rp.browser().get('/sso?code=abc&state=forged');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/failed');
  });
});
