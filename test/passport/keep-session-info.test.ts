/**
 * How a sign-in survives Passport's `req.logIn`, which replaces express-session's session: the
 * strategy writes the sign-in record beside the other tabs' logins before Passport signs the
 * person in, and Passport keeps both when told `keepSessionInfo: true` (the router tells it). The
 * strategy never replaces `req.logIn`; a sign-in Passport was not told to keep is refused with the
 * fix; nothing else of the session before the login carries over, whichever way the person signs in.
 * Real HTTP, real cookies, the bundled provider.
 */
import { createServer, type Server } from 'node:http';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterEach, describe, expect, it } from 'vitest';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { requireSignIn } from '../../src/passport/require-sign-in.js';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  approve,
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  closeServer,
  listenOnLoopback,
  PERSONA,
  recordingLogger,
  RP_KEYS,
  startIntegrationProvider,
  startLogin,
} from '../helpers/harness.js';
import { DEFAULT_PERSONAS } from '../helpers/provider.js';

const OTHER = DEFAULT_PERSONAS[1]!;

interface App {
  baseUrl: string;
  provider: StartedProvider;
  log: () => string;
  /** Whether `req.logIn` was still Passport's own when the app's callback ran (custom-callback apps). */
  logInUntouched: boolean[];
  close(): Promise<void>;
}

let running: App | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

type Mount = (app: Express, authenticator: passport.Authenticator, seen: boolean[]) => void;

async function startApp(mount: Mount): Promise<App> {
  const recorded = recordingLogger();
  const app = express();
  const server: Server = createServer(app);
  const baseUrl = await listenOnLoopback(server);
  const { provider } = await startIntegrationProvider(`${baseUrl}/auth/callback`);
  const sessions = createSessionPolicy({ logger: recorded.logger });
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  authenticator.use(
    new NdIdStrategy({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: RP_KEYS.privateKeyPem,
      hostname: provider.baseUrl,
      callbackURL: `${baseUrl}/auth/callback`,
      logger: recorded.logger,
      sessions,
    }),
  );
  app.use(session({ secret: 'keep-session-info-secret-0123456789', resave: false, saveUninitialized: false }));
  app.use(authenticator.session());
  const seen: boolean[] = [];
  // Data of the app's own, kept in the session before and after sign-in.
  app.post('/cart/:item', (req, res) => {
    (req.session as unknown as { cart?: string }).cart = req.params.item;
    res.json({ ok: true });
  });
  // The sign-in record as the session holds it (the default recordKey).
  app.get('/record', (req, res) => {
    res.json({ record: (req.session as unknown as Record<string, unknown>)['nd-id.signin'] ?? null });
  });
  mount(app, authenticator, seen);
  app.get('/account', requireSignIn({ sessions }), (req, res) => {
    res.json({
      name: (req.user as { data: Record<string, string> }).data['profile.name'],
      cart: (req.session as unknown as { cart?: string }).cart ?? null,
    });
  });
  return {
    baseUrl,
    provider,
    log: recorded.text,
    logInUntouched: seen,
    close: async () => {
      await provider.close();
      await closeServer(server);
    },
  };
}

/** Passport's routes as its documentation writes them, with the given options on the callback. */
function plainRoutes(callbackOptions: passport.AuthenticateOptions): Mount {
  return (app, authenticator) => {
    app.get('/auth/login', authenticator.authenticate('nd-id'));
    app.get('/auth/callback', authenticator.authenticate('nd-id', callbackOptions), (_req, res) => {
      res.redirect('/account');
    });
  };
}

/** A custom callback that calls `req.logIn` itself, noting whether it was still Passport's own. */
const customCallback: Mount = (app, authenticator, seen) => {
  app.get('/auth/login', authenticator.authenticate('nd-id'));
  app.get('/auth/callback', (req: Request, res: Response, next: NextFunction) => {
    const own = req.logIn;
    authenticator.authenticate('nd-id', { keepSessionInfo: true }, (err: unknown, user: Express.User | false) => {
      if (err) return next(err);
      if (!user) return res.status(401).end();
      seen.push(req.logIn === own);
      req.logIn(user, { session: true, keepSessionInfo: true }, (loginErr) =>
        loginErr ? next(loginErr) : res.redirect('/account'),
      );
    })(req, res, next);
  });
};

async function signIn(browser: Browser): Promise<number> {
  const callback = await approve(await startLogin(browser, '/auth/login'));
  return (await browser.get(callback.pathname + callback.search)).status;
}

async function account(browser: Browser): Promise<{ status: number; body: { name?: string; cart?: string | null } }> {
  const res = await browser.get('/account');
  return { status: res.status, body: res.status === 200 ? (JSON.parse(res.text) as { name: string }) : {} };
}

describe("a sign-in through Passport's req.logIn", () => {
  it('plain passport.authenticate without keepSessionInfo: refused with the fix, and nobody is signed in', async () => {
    running = await startApp(plainRoutes({}));
    const browser = new Browser(running.baseUrl);
    expect(await signIn(browser)).toBe(500);
    expect((await account(browser)).status).not.toBe(200);
    const log = running.log();
    expect(log).toContain('"code":"configuration_invalid"');
    expect(log).toContain('session_info_not_kept');
    expect(log).toContain("passport.authenticate('nd-id', { keepSessionInfo: true })");
  });

  it('plain passport.authenticate with keepSessionInfo: the guard finds the sign-in record, and a second tab completes', async () => {
    running = await startApp(plainRoutes({ keepSessionInfo: true }));
    const browser = new Browser(running.baseUrl);
    const first = await approve(await startLogin(browser, '/auth/login'));
    const second = await approve(await startLogin(browser, '/auth/login'));
    const before = browser.jar.get('connect.sid');
    expect((await browser.get(second.pathname + second.search)).status).toBe(302);
    expect(browser.jar.get('connect.sid')).not.toBe(before); // a new session id at sign-in
    expect((await browser.get(first.pathname + first.search)).status).toBe(302);
    const signedIn = await account(browser);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.name).toBe(PERSONA['profile.name']);
    expect(running.log()).not.toContain('pending_login_lost_at_sign_in');
  });

  it("a custom callback calling req.logIn gets Passport's own method: the strategy replaces nothing", async () => {
    running = await startApp(customCallback);
    const browser = new Browser(running.baseUrl);
    expect(await signIn(browser)).toBe(302);
    expect(running.logInUntouched).toEqual([true]);
    expect((await account(browser)).body.name).toBe(PERSONA['profile.name']);
  });

  it('plain passport.authenticate with keepSessionInfo: nothing of the session before the login carries over, for anyone', async () => {
    running = await startApp(plainRoutes({ keepSessionInfo: true }));
    const browser = new Browser(running.baseUrl);
    // What a session held before the login (a planted session's secrets, say) is gone after it.
    expect((await browser.send('POST', '/cart/books')).status).toBe(200);
    expect(await signIn(browser)).toBe(302);
    expect((await account(browser)).body).toEqual({ name: PERSONA['profile.name'], cart: null });
    expect((await browser.send('POST', '/cart/pens')).status).toBe(200);
    expect(await signIn(browser)).toBe(302); // the same person again
    expect((await account(browser)).body).toEqual({ name: PERSONA['profile.name'], cart: null });

    expect((await browser.send('POST', '/cart/ink')).status).toBe(200);
    running.provider.provider.approveNext({ persona: OTHER.id });
    expect(await signIn(browser)).toBe(302);
    expect((await account(browser)).body).toEqual({ name: OTHER['profile.name'], cart: null });
  });

  it("the router keeps only the sign-in's own entries: the app's session data does not carry over, another tab's login does", async () => {
    running = await startApp((app, authenticator) => app.use('/auth', ndIdRouter({ passport: authenticator })));
    const browser = new Browser(running.baseUrl);
    expect((await browser.send('POST', '/cart/books')).status).toBe(200);
    const first = await approve(await startLogin(browser, '/auth/login'));
    const second = await approve(await startLogin(browser, '/auth/login'));
    expect((await browser.get(second.pathname + second.search)).status).toBe(302);
    expect((await account(browser)).body).toEqual({ name: PERSONA['profile.name'], cart: null });
    expect((await browser.get(first.pathname + first.search)).status).toBe(302);
    expect(running.log()).not.toContain('pending_login_lost_at_sign_in');
    expect(running.log().match(/Sign-in completed/g)).toHaveLength(2);
  });

  it("the router's afterCallback refusing the person leaves the session's sign-in record as it was", async () => {
    let refuse = true;
    running = await startApp((app, authenticator) =>
      app.use('/auth', ndIdRouter({ passport: authenticator, afterCallback: (_req, user) => (refuse ? false : user) })),
    );
    const browser = new Browser(running.baseUrl);
    const record = async (): Promise<unknown> =>
      (JSON.parse((await browser.get('/record')).text) as { record: unknown }).record;
    expect(await signIn(browser)).toBe(401);
    expect(await record()).toBeNull(); // refused: nothing recorded
    refuse = false;
    expect(await signIn(browser)).toBe(302);
    const kept = await record();
    expect(kept).toMatchObject({ signedInAt: expect.any(Number) });
    refuse = true;
    expect(await signIn(browser)).toBe(401);
    expect(await record()).toEqual(kept); // a refused second sign-in does not refresh it
  });

  it('the router records the sign-in on a session its regenerate keeps (the polyfill cookie sessions use)', async () => {
    running = await startApp((app, authenticator) => {
      app.use((req, _res, next) => {
        // As apps on a cookie session give Passport: a regenerate that keeps the session.
        (req.session as unknown as { regenerate: (cb: (err?: unknown) => void) => void }).regenerate = (cb) => cb();
        next();
      });
      app.use('/auth', ndIdRouter({ passport: authenticator }));
    });
    const browser = new Browser(running.baseUrl);
    expect(await signIn(browser)).toBe(302);
    const signedIn = await account(browser);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.name).toBe(PERSONA['profile.name']);
  });
});
