/**
 * Sign-in through plain `passport.authenticate('nd-id')` routes (no ndIdRouter), over real HTTP
 * and real cookies: ndIdSession() makes `req.user` on an unguarded route answer nobody once the
 * session policy has ended the session. What every adapter guarantees (the record, step-up, other
 * tabs kept, no-store) is in test/adapters/cases.ts.
 */
import { describe, expect, it } from 'vitest';
import { Browser, MINUTE, OTHER_PERSONA, appsUnderTest, recordingLogger, startExpressApp } from './harness.js';

const apps = appsUnderTest((options) => startExpressApp({ ...options, routes: 'plain' }));
const { signedIn } = apps;

async function whoami(browser: Browser): Promise<{ user: { sub: string } | null; authenticated: boolean }> {
  return (await (await browser.request('/whoami')).json()) as { user: { sub: string } | null; authenticated: boolean };
}

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
