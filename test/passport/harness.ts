/**
 * A relying-party Express app using NdIdStrategy and ndIdRouter, wired to a real provider on
 * loopback, and helpers that walk a browser (a supertest agent with a cookie jar) through the
 * login. Not a test file itself.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Express } from 'express';
import session from 'express-session';
import passport from 'passport';
import request from 'supertest';
import { expect } from 'vitest';
import { startProvider, DEFAULT_PERSONAS, type StartedProvider } from '../helpers/provider.js';
import {
  NdIdStrategy,
  type NdIdStrategyBaseOptions,
  type NdIdStrategyOptions,
  type NdIdVerify,
  type NdIdVerifyWithRequest,
} from '../../src/passport/strategy.js';
import { ndIdRouter, type NdIdRouterOptions } from '../../src/passport/router.js';
import type { Clock } from '../../src/clock.js';
import { testKeyPair } from '../helpers/keys.js';

export const CLIENT_ID = 'rp-under-test';
export const CLIENT_SECRET = 'rp-secret-do-not-show-7f3a9c';
export const PERSONA = DEFAULT_PERSONAS[0];

/** Options of {@link startRp}. */
export interface RpOptions {
  /** Strategy options beyond the client fields and callbackURL. */
  strategy?: NdIdStrategyBaseOptions & { passReqToCallback?: boolean };
  verify?: NdIdVerify | NdIdVerifyWithRequest;
  /** Router options (passport is filled in). */
  router?: NdIdRouterOptions;
  /** Mount express-session. Default true. */
  session?: boolean;
  /** The session store. Default: express-session's MemoryStore. */
  sessionStore?: session.Store;
  /** The client secret the strategy sends. Default: the registered one. */
  clientSecret?: string;
  /** The private key the strategy decrypts with (PEM). Default: the one whose public key is registered. */
  privateKey?: string;
  /** Point the strategy at this origin instead of the provider (e.g. a closed port). */
  hostname?: string;
  /** Client HTTP timeout in ms. */
  timeout?: number;
  /** Clock of the strategy. */
  clock?: Clock;
  /** Build the app the way the design card shows: `app.use('/sso', passport.authenticate('nd-id'))`. */
  designCard?: boolean;
  /** Mount path of the router. Default '/auth'. */
  mount?: string;
  /** Path of the callback, relative to the app root. Default `${mount}/callback`. */
  callbackPath?: string;
  /** Cookie options of express-session. */
  sessionCookie?: session.CookieOptions;
  /** Mount passport.session(). Default true. */
  passportSession?: boolean;
  /** Mount the session() of this other Passport instance instead of the router's own. */
  sessionPassport?: passport.Authenticator;
  /** The app's own error handler, mounted last. Default: none (Express's). */
  errorHandler?: ErrorRequestHandler;
}

/** A running relying party and its provider. */
export interface Rp {
  baseUrl: string;
  provider: StartedProvider;
  /** Requests the provider received on its token endpoint. */
  tokenCalls: () => number;
  /** A new browser: a cookie jar against the app. */
  browser(): ReturnType<typeof request.agent>;
  close(): Promise<void>;
}

function listen(app: Express): Promise<Server> {
  const server = createServer(app);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** Starts a provider (autoApprove) and an RP app wired to it. */
export async function startRp(options: RpOptions = {}): Promise<Rp> {
  const keys = testKeyPair('rp');
  const mount = options.mount ?? '/auth';
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));

  const app = express();
  if (options.session !== false) {
    app.use(
      session({
        secret: 'test-session-secret',
        resave: false,
        saveUninitialized: false,
        ...(options.sessionStore === undefined ? {} : { store: options.sessionStore }),
        ...(options.sessionCookie === undefined ? {} : { cookie: options.sessionCookie }),
      }),
    );
  }
  if (options.session !== false && options.passportSession !== false)
    app.use((options.sessionPassport ?? authenticator).session());

  let callbackPath: string;
  if (options.designCard) {
    callbackPath = '/sso';
    app.use(
      '/sso',
      authenticator.authenticate('nd-id', {
        successRedirect: '/me',
        failureRedirect: '/failed',
        keepSessionInfo: true,
      }),
    );
    app.get('/failed', (_req, res) => {
      res.status(401).send('failed');
    });
  } else {
    callbackPath = options.callbackPath ?? `${mount}/callback`;
    app.use(mount, ndIdRouter({ passport: authenticator, ...options.router }));
  }
  app.get('/me', (req, res) => {
    if (req.user) res.json({ user: req.user });
    else res.status(401).json({ user: null });
  });
  app.get('/sid', (req, res) => {
    res.json({ sid: req.sessionID ?? null });
  });

  if (options.errorHandler) app.use(options.errorHandler);
  const server = await listen(app);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const callbackURL = `${baseUrl}${callbackPath}`;

  const provider = await startProvider({
    clients: [
      { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [callbackURL], publicKey: keys.publicKeyPem },
    ],
    autoApprove: true,
  });
  let tokenCalls = 0;
  provider.server.on('request', (req) => {
    if (req.url?.startsWith('/v2/oauth/token')) tokenCalls++;
  });

  const strategyOptions = {
    clientId: CLIENT_ID,
    clientSecret: options.clientSecret ?? CLIENT_SECRET,
    privateKey: options.privateKey ?? keys.privateKeyPem,
    hostname: options.hostname ?? provider.baseUrl,
    callbackURL,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...options.strategy,
  } as NdIdStrategyOptions;
  authenticator.use(new NdIdStrategy(strategyOptions, options.verify as NdIdVerify | undefined));

  return {
    baseUrl,
    provider,
    tokenCalls: () => tokenCalls,
    browser: () => request.agent(baseUrl),
    close: async () => {
      await provider.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

type Agent = ReturnType<typeof request.agent>;

/** Starts a login in `browser`; returns the authorization URL it was sent to. */
export async function startLogin(browser: Agent, path = '/auth/login'): Promise<URL> {
  const res = await browser.get(path);
  expect(res.status).toBe(302);
  const location = new URL(res.headers.location as string);
  expect(location.pathname).toBe('/v2/oauth/authorize');
  return location;
}

/** What the provider (autoApprove) redirects the browser to: the callback URL with code and state. */
export async function approve(authorizeUrl: URL): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.get('location') as string);
}

/** Follows a callback URL in `browser`. */
export function followCallback(browser: Agent, callbackUrl: URL) {
  return browser.get(callbackUrl.pathname + callbackUrl.search);
}

/** The session id the app sees for `browser`. */
export async function sessionId(browser: Agent): Promise<string | null> {
  const res = await browser.get('/sid');
  return (res.body as { sid: string | null }).sid;
}

/** The signed-in user of `browser`, or null. */
export async function currentUser(browser: Agent): Promise<Record<string, unknown> | null> {
  const res = await browser.get('/me');
  return (res.body as { user: Record<string, unknown> | null }).user;
}

/** Asserts the response is one of our HTML pages with no stack trace, secret or personal data. */
export function expectSafePage(
  res: { status: number; text: string; headers: Record<string, string> },
  status: number,
): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.text).not.toMatch(/\bat .+:\d+:\d+/); // stack frame
  expect(res.text).not.toMatch(/Error:/);
  expect(res.text).not.toContain(CLIENT_SECRET);
  expect(res.text).not.toContain('PRIVATE KEY');
  expect(res.text).not.toContain(PERSONA['profile.name']);
  expect(res.text).not.toContain(PERSONA['profile.nric_number']);
}
