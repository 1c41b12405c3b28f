/**
 * Apps for the after-sign-in tests: an Express app (ndIdRouter + requireSignIn) and a fetch app
 * (createFetchLogin on node:http), each on loopback against a real provider whose movable clock
 * is also the app's clock; and a small browser with a cookie jar that follows nothing by itself.
 * Not a test file itself.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import session, { MemoryStore, type SessionData } from 'express-session';
import passport from 'passport';
import { startProvider, DEFAULT_PERSONAS, type StartedProvider } from '../helpers/provider.js';
import { NdIdStrategy, type NdIdAuthenticateOptions } from '../../src/passport/strategy.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { requireRecentSignIn, requireSignIn } from '../../src/passport/require-sign-in.js';
import { ndIdSession } from '../../src/passport/signed-in-session.js';
import { stepUpMaxAge } from '../../src/flow/access.js';
import { safeReturnTo } from '../../src/flow/return-to.js';
import { createSessionPolicy, type SessionPolicy, type SessionPolicyOptions } from '../../src/flow/session-policy.js';
import { createFetchLogin, type FetchLogin } from '../../src/adapters/fetch.js';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import type { Logger } from '../../src/log.js';
import { afterEach, expect } from 'vitest';
import { testKeyPair } from '../helpers/keys.js';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createMemoryReplayStore, type ReplayStore } from '../../src/flow/replay-store.js';

export const CLIENT_ID = 'sessions-rp';
export const CLIENT_SECRET = 'sessions-rp-secret-4b1d';
export const PERSONA = DEFAULT_PERSONAS[0]!;
export const OTHER_PERSONA = DEFAULT_PERSONAS[1]!;

/** A logger that keeps every event. */
export function recordingLogger(): { logger: Logger; events: Array<Record<string, unknown>> } {
  const events: Array<Record<string, unknown>> = [];
  const push = (event: unknown): void => {
    if (typeof event === 'object' && event !== null) events.push(event as Record<string, unknown>);
  };
  return { logger: { debug: push, info: push, warn: push, error: push }, events };
}

/** An express-session MemoryStore that counts writes and can tell whether a session is still kept. */
export class CountingStore extends MemoryStore {
  writes = 0;
  override set(sid: string, data: SessionData, cb?: (err?: unknown) => void): void {
    this.writes++;
    super.set(sid, data, cb);
  }
  has(sid: string): Promise<boolean> {
    return new Promise((resolve) => this.get(sid, (_err, data) => resolve(data !== null && data !== undefined)));
  }
}

/** What a test app exposes. */
export interface TestApp {
  baseUrl: string;
  provider: StartedProvider;
  sessions: SessionPolicy;
  close(): Promise<void>;
}

function listen(server: Server, port = 0): Promise<string> {
  return new Promise((resolve) =>
    server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Options of the test apps. */
export interface TestAppOptions {
  policy?: Omit<SessionPolicyOptions, 'clock'>;
  /** A provider already running (several app instances share it); its clock is the apps' clock. */
  provider?: StartedProvider;
  /** The express-session store. Default: a new CountingStore. */
  store?: CountingStore;
  /** Port to listen on. Default: any free one. */
  port?: number;
  /**
   * Express only. `'plain'`: sign-in through plain `passport.authenticate('nd-id')` routes (no
   * ndIdRouter), with `ndIdSession()` in place of `passport.session()`, and `/whoami` answering
   * `req.user` outside any guard. Default `'router'`.
   */
  routes?: 'router' | 'plain';
  /** Where used logout-token `jti`s are kept (share one between instances). Default: a new one per app. */
  replayStore?: ReplayStore;
  /** The provider's signing key (PEM), for a test that signs as the provider. Default: one from the pool. */
  signingKey?: string;
}

/** Starts a provider (autoApprove) whose client's callback is `callback`. */
export async function startTestProvider(callbacks: string[], signingKey?: string): Promise<StartedProvider> {
  return startProvider({
    ...(signingKey === undefined ? {} : { signingKey }),
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: callbacks,
        publicKey: testKeyPair('sessions').publicKeyPem,
      },
    ],
    autoApprove: true,
  });
}

/**
 * The Express app: `/auth` (ndIdRouter, sign-out to `/signed-out`), `/account` (requireSignIn),
 * `/api/me` (requireSignIn, api), `/transfer` (requireRecentSignIn(300)).
 */
export async function startExpressApp(options: TestAppOptions = {}): Promise<TestApp & { store: CountingStore }> {
  const server = createServer();
  const baseUrl = await listen(server, options.port);
  const provider = options.provider ?? (await startTestProvider([`${baseUrl}/auth/callback`], options.signingKey));
  const clock = provider.provider.clock;
  const sessions = createSessionPolicy({ ...options.policy, clock });
  const store = options.store ?? new CountingStore();
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  const strategy = new NdIdStrategy({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: testKeyPair('sessions').privateKeyPem,
    hostname: provider.baseUrl,
    callbackURL: `${baseUrl}/auth/callback`,
    clock,
    ...(options.routes === 'plain' ? { sessions } : {}),
  });
  authenticator.use(strategy);
  const backchannelLogout = createBackchannelLogout({
    client: strategy,
    sessions,
    replayStore: options.replayStore ?? createMemoryReplayStore(),
  });
  const app: Express = express();
  app.use(session({ secret: 'sessions-test-secret', resave: false, saveUninitialized: false, store }));
  if (options.routes === 'plain') {
    app.use(ndIdSession({ passport: authenticator, sessions }));
    // Passport's own routes, as its documentation writes them: no ndIdRouter.
    app.get('/auth/login', (req, res, next) => {
      const returnTo = safeReturnTo(req.query.returnTo);
      const maxAge = stepUpMaxAge(req.query.maxAge);
      const options: NdIdAuthenticateOptions = {
        ...(returnTo === undefined ? {} : { returnTo }),
        ...(maxAge === undefined ? {} : { maxAge }),
      };
      authenticator.authenticate('nd-id', options)(req, res, next);
    });
    // keepSessionInfo: Passport keeps the sign-in record and the other tabs' logins the strategy wrote.
    app.get('/auth/callback', authenticator.authenticate('nd-id', { keepSessionInfo: true }), (req, res) => {
      res.redirect((req.authInfo as { returnTo?: string } | undefined)?.returnTo ?? '/');
    });
    app.post('/auth/logout', (req, res, next) =>
      req.logout((err) => (err ? next(err) : res.redirect(303, '/signed-out'))),
    );
    app.get('/whoami', (req, res) => {
      res.json({ user: req.user ?? null, authenticated: req.isAuthenticated() });
    });
  } else {
    app.use(authenticator.session());
    app.use(
      '/auth',
      ndIdRouter({ passport: authenticator, sessions, logoutRedirect: '/signed-out', backchannelLogout }),
    );
  }
  app.get('/account', requireSignIn({ sessions }), (req, res) => {
    res.json({ user: req.user, signIn: req.signIn });
  });
  app.get('/api/me', requireSignIn({ sessions, api: true }), (req, res) => {
    res.json({ user: req.user });
  });
  app.get('/transfer', requireRecentSignIn(300, { sessions }), (_req, res) => {
    res.send('transfer form');
  });
  app.get('/sid', (req, res) => {
    res.json({ sid: req.sessionID });
  });
  server.on('request', app);
  return {
    baseUrl,
    provider,
    sessions,
    store,
    close: async () => {
      await closeServer(server);
      if (options.provider === undefined) await provider.close();
    },
  };
}

/** Adapts a fetch handler to node:http. */
function serveFetch(
  handler: (request: Request) => Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const body =
        chunks.length === 0 || req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.concat(chunks);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      void handler(request).then(async (response) => {
        res.statusCode = response.status;
        for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
        const cookies = response.headers.getSetCookie();
        if (cookies.length > 0) res.setHeader('set-cookie', cookies);
        res.end(Buffer.from(await response.arrayBuffer()));
      });
    });
  };
}

/**
 * The fetch app: `/auth/login`, `/auth/callback`, `POST /auth/logout` (to `/signed-out`),
 * `/account` (requireSignIn), `/api/me` (api), `/transfer` (requireRecentSignIn(300)), `/me`
 * (unguarded `auth.user`).
 */
export async function startFetchApp(options: TestAppOptions = {}): Promise<TestApp & { auth: FetchLogin }> {
  const server = createServer();
  const baseUrl = await listen(server, options.port);
  const provider = options.provider ?? (await startTestProvider([`${baseUrl}/auth/callback`], options.signingKey));
  const clock = provider.provider.clock;
  const sessions = createSessionPolicy({ ...options.policy, clock });
  const client = new (await import('../../src/client/id-client.js')).IdClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: testKeyPair('sessions').privateKeyPem,
    hostname: provider.baseUrl,
    redirectUri: `${baseUrl}/auth/callback`,
    clock,
  });
  const replayStore = options.replayStore ?? createMemoryReplayStore();
  const auth = createFetchLogin({
    client,
    clock,
    session: createCookieSession({ secret: 'sessions-test-cookie-secret-0123456789abcdef', clock }),
    loginPath: '/auth/login',
    sessions,
    replayStore,
  });
  const backchannelLogout = createBackchannelLogout({ client, sessions, replayStore });
  const handler = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname === '/auth/login') return auth.login(request);
    if (pathname === '/auth/callback') return auth.callback(request);
    if (pathname === '/auth/logout' && request.method === 'POST') return auth.logout(request, '/signed-out');
    if (pathname === '/auth/backchannel-logout') return backchannelLogout.fetch(request);
    if (pathname === '/account')
      return auth.requireSignIn(request, ({ user, signIn }) => Response.json({ user, signIn }));
    if (pathname === '/api/me')
      return auth.requireSignIn(request, ({ user }) => Response.json({ user }), { api: true });
    if (pathname === '/transfer') return auth.requireRecentSignIn(request, 300, () => new Response('transfer form'));
    // Unguarded, as the Hono and Next.js recipes read the person.
    if (pathname === '/me') return Response.json({ user: (await auth.user(request)) ?? null });
    return new Response('not found', { status: 404 });
  };
  server.on('request', serveFetch(handler));
  return {
    baseUrl,
    provider,
    sessions,
    auth,
    close: async () => {
      await closeServer(server);
      if (options.provider === undefined) await provider.close();
    },
  };
}

/** A browser: a cookie jar over fetch, following no redirect by itself. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async request(path: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0 && url.startsWith(this.baseUrl)) headers.cookie = this.cookieHeader();
    const res = await fetch(url, { method: init.method ?? 'GET', headers, redirect: 'manual' });
    if (url.startsWith(this.baseUrl)) {
      for (const line of res.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        const expired = /max-age=0|expires=thu, 01 jan 1970/i.test(line);
        if (expired || value === '') this.cookies.delete(name);
        else this.cookies.set(name, value);
      }
    }
    return res;
  }

  /**
   * Signs in through `loginPath` (the provider approves at once, or as queued with approveNext)
   * and returns the callback's answer.
   */
  async signIn(loginPath = '/auth/login'): Promise<Response> {
    const start = await this.request(loginPath);
    if (start.status !== 302) throw new Error(`login answered ${start.status}`);
    const authorize = start.headers.get('location')!;
    const approved = await fetch(authorize, { redirect: 'manual' });
    const callback = approved.headers.get('location');
    if (callback === null) throw new Error(`provider answered ${approved.status}: ${await approved.text()}`);
    return this.request(callback);
  }
}

/**
 * The app of each test, closed after it: `start(options)` starts one, `signedIn(options)` starts
 * one and signs a browser in through it. Call at the top of a test file.
 */
export function appsUnderTest<A extends TestApp>(start: (options?: TestAppOptions) => Promise<A>) {
  let current: A | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return {
    async start(options: TestAppOptions = {}): Promise<A> {
      current = await start(options);
      return current;
    },
    async signedIn(options: TestAppOptions = {}): Promise<{ app: A; browser: Browser }> {
      const app = (current = await start(options));
      const browser = new Browser(app.baseUrl);
      const res = await browser.signIn();
      expect(res.status).toBe(302);
      return { app, browser };
    },
  };
}

/** One minute, in ms. */
export const MINUTE = 60 * 1000;
