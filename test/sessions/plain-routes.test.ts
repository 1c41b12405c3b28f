/**
 * Sign-in through plain `passport.authenticate('nd-id')` routes (no ndIdRouter), over real HTTP
 * and real cookies: the strategy alone gives the sign-in what the router's does (the record
 * requireSignIn() reads, step-up judgement, other tabs kept), and ndIdSession() makes `req.user`
 * on an unguarded route answer nobody once the session policy has ended the session.
 */
import { describe, expect, it } from 'vitest';
import { Browser, MINUTE, OTHER_PERSONA, appsUnderTest, recordingLogger, startExpressApp } from './harness.js';

const apps = appsUnderTest((options) => startExpressApp({ ...options, routes: 'plain' }));
const { signedIn } = apps;

async function whoami(browser: Browser): Promise<{ user: { sub: string } | null; authenticated: boolean }> {
  return (await (await browser.request('/whoami')).json()) as { user: { sub: string } | null; authenticated: boolean };
}

describe('plain passport.authenticate routes', () => {
  it('sign in so that requireSignIn() lets the person through, with the sign-in record', async () => {
    const { browser } = await signedIn();
    const res = await browser.request('/account');
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      user: { sub: string; signedInAt: number };
      signIn: { sub: string; signedInAt: number };
    };
    expect(body.signIn).toMatchObject({ sub: body.user.sub, signedInAt: body.user.signedInAt });
  });

  it('answer the login start and the callback with Cache-Control: no-store (both set session state)', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const start = await browser.request('/auth/login');
    expect(start.status).toBe(302);
    expect(start.headers.getSetCookie().length).toBeGreaterThan(0);
    expect(start.headers.get('cache-control')).toBe('no-store');
    const approved = (await fetch(start.headers.get('location')!, { redirect: 'manual' })).headers.get('location')!;
    const callback = await browser.request(approved);
    expect(callback.status).toBe(302);
    expect(callback.headers.get('cache-control')).toBe('no-store');
    expect((await browser.request('/account')).status).toBe(200);
  });

  it('keep a login started in another tab of the browser across the sign-in', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const first = (await browser.request('/auth/login')).headers.get('location')!;
    const second = (await browser.request('/auth/login')).headers.get('location')!;
    const approvedSecond = (await fetch(second, { redirect: 'manual' })).headers.get('location')!;
    const approvedFirst = (await fetch(first, { redirect: 'manual' })).headers.get('location')!;
    expect((await browser.request(approvedSecond)).status).toBe(302);
    const other = await browser.request(approvedFirst);
    expect(other.status).toBe(302);
    expect(other.headers.get('location')).toBe('/');
    expect((await browser.request('/account')).status).toBe(200);
  });

  it('step up: an older sign-in starts a login with max_age, and a fresh one lets the action through', async () => {
    const { app, browser } = await signedIn();
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toBe('/auth/login?returnTo=%2Ftransfer&maxAge=300');
    const done = await browser.signIn(refused.headers.get('location')!);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/transfer');
    expect((await browser.request('/transfer')).status).toBe(200);
  });

  it('step up: a different person coming back is refused (403) and the session is signed out', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { logger } });
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    app.provider.provider.approveNext({ persona: OTHER_PERSONA.id });
    const page = await browser.signIn(refused.headers.get('location')!);
    expect(page.status).toBe(403);
    expect((await browser.request('/account')).status).toBe(303);
    expect((await whoami(browser)).user).toBeNull();
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'other_person' }));
  });

  it('step up: an auth_time that comes back too old keeps the action refused, the person still signed in', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { logger } });
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    app.provider.provider.approveNext({ claims: { auth_time: -3600 } });
    expect((await browser.signIn(refused.headers.get('location')!)).status).toBe(403);
    expect(events).toContainEqual(expect.objectContaining({ event: 'step_up_refused', reason: 'not_recent' }));
    expect((await browser.request('/account')).status).toBe(200);
    expect((await browser.request('/transfer')).status).toBe(303);
  });
});

describe('req.user outside requireSignIn, with ndIdSession()', () => {
  it('names the person while the session lives', async () => {
    const { browser } = await signedIn();
    expect(await whoami(browser)).toMatchObject({ user: { sub: expect.any(String) }, authenticated: true });
  });

  it('is nobody after sign-out everywhere, and requireSignIn() says the session ended; others keep theirs', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { logger } });
    const other = new Browser(app.baseUrl);
    app.provider.provider.approveNext({ persona: OTHER_PERSONA.id });
    expect((await other.signIn()).status).toBe(302);
    const sub = (await whoami(browser)).user!.sub;
    const cookie = browser.cookieHeader();
    await app.sessions.signOutEverywhere(sub);
    expect(await whoami(browser)).toEqual({ user: null, authenticated: false });
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'signed_out_everywhere' }));
    // A copy of the old cookie names nobody either.
    const replay = await fetch(`${app.baseUrl}/whoami`, { headers: { cookie } });
    expect(((await replay.json()) as { user: unknown }).user).toBeNull();
    expect((await browser.request('/account')).status).toBe(303);
    expect((await whoami(other)).user).not.toBeNull();
  });

  it('is nobody once the idle timeout has passed', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { idleTimeout: 30 * MINUTE, logger } });
    app.provider.provider.advanceClock(31 * MINUTE);
    expect((await whoami(browser)).user).toBeNull();
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'idle_timeout' }));
  });

  it('is nobody once maxSessionAge has passed, on unguarded and guarded routes', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await signedIn({ policy: { maxSessionAge: 60 * MINUTE, idleTimeout: false, logger } });
    app.provider.provider.advanceClock(61 * MINUTE);
    expect((await whoami(browser)).user).toBeNull();
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'max_session_age' }));
    expect((await browser.request('/api/me')).status).toBe(401);
  });
});
