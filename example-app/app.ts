/**
 * The example relying party: a small Express site that signs people in with `passport-nd-id`.
 *
 * {@link createExampleApp} builds the app from explicit settings, so tests can start several
 * instances in one process or as child processes; `start.ts` reads the settings from the
 * environment.
 */
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import session from 'express-session';
import passport from 'passport';
import {
  createSessionPolicy,
  DEFAULT_LOGIN_TTL_MS,
  requireSignIn,
  NdIdStrategy,
  ndIdRouter,
  type NdIdUser,
} from 'passport-nd-id';
import { IdError, isProviderDown } from 'passport-nd-id/client';
import type { ProviderSettings } from './config.js';
import { createSessionStore, type MemoryStoreSettings, type SessionStore } from './sessions.js';
import { errorPage, homePage, notFoundPage, profilePage, unavailablePage, type ProfileUser } from './views.js';

/** How long a signed-in session lasts without being used again: 8 hours, in ms. */
export const SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;
/**
 * How long a session made only to start a login lasts: as long as the login may take. An
 * abandoned login then leaves its session in the store for minutes, not hours; signing in
 * regenerates the session, which brings back {@link SESSION_MAX_AGE_MS}.
 */
export const LOGIN_SESSION_MAX_AGE_MS = DEFAULT_LOGIN_TTL_MS;
/** Name of the session cookie over plain http (local development). */
export const SESSION_COOKIE_NAME = 'example-app.sid';
/**
 * Name of the session cookie over https: the `__Host-` prefix makes browsers accept it only
 * from this exact host, secure, with path `/` and no `Domain`, so a sibling subdomain cannot
 * plant ("toss") a session cookie for this app.
 */
export const HTTPS_SESSION_COOKIE_NAME = '__Host-example-app.sid';

/** The session cookie's name: `__Host-`-prefixed on https (browsers refuse the prefix on http). */
export function sessionCookieName(https: boolean): string {
  return https ? HTTPS_SESSION_COOKIE_NAME : SESSION_COOKIE_NAME;
}

/** Settings of {@link createExampleApp}. */
export interface ExampleAppConfig {
  /** How to reach the identity service. */
  provider: ProviderSettings;
  /** Secrets that sign the session cookie; the first signs, all verify. */
  sessionSecrets: string[];
  /** Redis URL for shared sessions; absent: in-memory sessions (one instance only). */
  redisUrl?: string;
  /** Express `trust proxy`; needed behind a TLS-terminating proxy. Default false. */
  trustProxy?: boolean | number | string;
  /** An express-session store to use instead of Redis or memory (for tests, or another backend). */
  store?: session.Store;
  /**
   * How long a started login stays valid, and how long a session made only to start one lives,
   * in ms. Default {@link LOGIN_SESSION_MAX_AGE_MS} (10 minutes).
   */
  loginTtlMs?: number;
  /** How long a signed-in session lasts without being used again, in ms. Default {@link SESSION_MAX_AGE_MS} (8 hours). */
  sessionMaxAgeMs?: number;
  /** Clock of the sign-in rules (lifetimes), in ms since the epoch. Default `Date.now`. */
  clock?: () => number;
  /** Bound, sweep interval and clock of the in-memory store (used without `redisUrl` and `store`). */
  memoryStore?: MemoryStoreSettings;
  /** Receives operational log lines (never secrets or personal data). Default: stderr. */
  log?: (line: string) => void;
}

/** A created example app. */
export interface ExampleApp {
  /** The Express app: listen on it. */
  app: Express;
  /** The session store in use. */
  sessions: SessionStore;
  /** Resolves once the session store is connected. */
  ready: Promise<void>;
  /** Release the session store connection. */
  close(): Promise<void>;
}

/** Wraps the real store so every failure of it is recognisable as "the session store is down". */
class GuardedStore extends session.Store {
  constructor(private readonly inner: session.Store) {
    super();
  }

  private static wrap(cb: ((err?: unknown, value?: unknown) => void) | undefined) {
    return (err?: unknown, value?: unknown): void => {
      if (!cb) return;
      if (err) cb(new IdError('session_store_unavailable', 'The session store cannot be reached.', { cause: err }));
      else cb(null, value);
    };
  }

  override get(sid: string, cb: (err: unknown, session?: session.SessionData | null) => void): void {
    this.inner.get(sid, GuardedStore.wrap(cb as (err?: unknown, value?: unknown) => void));
  }

  override set(sid: string, data: session.SessionData, cb?: (err?: unknown) => void): void {
    this.inner.set(sid, data, GuardedStore.wrap(cb));
  }

  override destroy(sid: string, cb?: (err?: unknown) => void): void {
    this.inner.destroy(sid, GuardedStore.wrap(cb));
  }

  override touch(sid: string, data: session.SessionData, cb?: () => void): void {
    if (this.inner.touch) this.inner.touch(sid, data, GuardedStore.wrap(cb as (err?: unknown) => void));
    else cb?.();
  }
}

function isStoreDown(err: unknown): boolean {
  return err instanceof IdError && err.code === 'session_store_unavailable';
}

function sendHtml(res: express.Response, status: number, html: string): void {
  res.status(status).type('html').set('Cache-Control', 'no-store').send(html);
}

/** The routes the example app serves, relative to its origin. */
export const ROUTES = Object.freeze({ login: '/auth/login', logout: '/auth/logout', profile: '/profile' });

/**
 * Build the example app.
 * @throws TypeError when a setting is unusable (the strategy checks its own options).
 */
export function createExampleApp(config: ExampleAppConfig): ExampleApp {
  const log = config.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const redirect = new URL(config.provider.redirectUri);
  const secure = redirect.protocol === 'https:';
  const loginTtlMs = config.loginTtlMs ?? LOGIN_SESSION_MAX_AGE_MS;
  const sessionMaxAgeMs = config.sessionMaxAgeMs ?? SESSION_MAX_AGE_MS;

  const sessions: SessionStore = config.store
    ? {
        kind: 'custom',
        store: config.store,
        isAvailable: () => true,
        ready: Promise.resolve(),
        close: async () => undefined,
      }
    : createSessionStore(config.redisUrl, log, config.memoryStore);
  // The library's defaults: 12 hours from sign-in, 30 minutes idle; with Redis, signing a person
  // out everywhere reaches every instance.
  const signInRules = createSessionPolicy({
    ...(sessions.signOutStore === undefined ? {} : { signOutStore: sessions.signOutStore }),
    ...(config.clock === undefined ? {} : { clock: config.clock }),
  });
  const authenticator = new passport.Passport();
  const strategy = new NdIdStrategy(
    {
      clientId: config.provider.clientId,
      privateKey: config.provider.privateKey,
      ...(config.provider.profile === 'fapi2'
        ? {
            profile: 'fapi2' as const,
            clientAssertionKey: config.provider.clientAssertionKey,
            ...(config.provider.idTokenDecryptionKey === undefined
              ? {}
              : { idTokenDecryptionKey: config.provider.idTokenDecryptionKey }),
            ...(config.provider.contextMessage === undefined
              ? {}
              : { authenticationContextMessage: config.provider.contextMessage }),
          }
        : { clientSecret: config.provider.clientSecret }),
      hostname: config.provider.hostname,
      callbackURL: config.provider.redirectUri,
      scope: config.provider.scope,
      loginTtl: loginTtlMs,
      // With Redis, instances share which logins were completed (a replayed callback redeems once).
      ...(sessions.replayStore === undefined ? {} : { replayStore: sessions.replayStore }),
    },
    // Keep only what the pages show: the pairwise sub and the decrypted attributes.
    async (user: NdIdUser): Promise<ProfileUser> => ({ sub: user.sub, data: user.data }),
  );
  authenticator.use(strategy);
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: ProfileUser, done) => done(null, user));

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy ?? false);

  app.use(((_req, res, next) => {
    res.set({
      'X-Content-Type-Options': 'nosniff',
      // Not "no-referrer": with it, browsers send `Origin: null` on same-site form posts, and
      // browsers without Sec-Fetch-Site could not prove a logout post is same-site.
      'Referrer-Policy': 'same-origin',
      'Content-Security-Policy':
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self' " +
        `${config.provider.hostname}; base-uri 'none'; frame-ancestors 'none'`,
    });
    next();
  }) satisfies RequestHandler);

  // While Redis is known to be down, answer 503 at once rather than half-working.
  app.use(((_req, res, next) => {
    if (sessions.isAvailable()) next();
    else sendHtml(res, 503, unavailablePage());
  }) satisfies RequestHandler);

  const sessionMiddleware = session({
    name: sessionCookieName(secure),
    secret: config.sessionSecrets,
    store: new GuardedStore(sessions.store),
    resave: false,
    saveUninitialized: false,
    cookie: { httpOnly: true, sameSite: 'lax', secure, maxAge: sessionMaxAgeMs, path: '/' },
  });
  app.use(((req, res, next) => {
    sessionMiddleware(req, res, (err?: unknown) => {
      // express-session reports a failed save at the end of a response after that response is
      // sent; Express would print it once per request. The person already has their page and
      // the store's outage is logged once by its own connection events.
      if (err !== undefined && res.headersSent && isStoreDown(err)) return;
      next(err);
    });
  }) satisfies RequestHandler);
  // express-session skips the session when its store reports a disconnect: treat that as down too.
  app.use(((req, res, next) => {
    if (req.session) next();
    else sendHtml(res, 503, unavailablePage());
  }) satisfies RequestHandler);
  app.use(authenticator.session());
  app.get(ROUTES.login, ((req, _res, next) => {
    if (!req.user) req.session.cookie.maxAge = loginTtlMs;
    next();
  }) satisfies RequestHandler);

  app.use(
    ndIdRouter({
      // This app's own Passport instance, so several apps can live in one process.
      passport: authenticator,
      routes: { login: ROUTES.login, callback: redirect.pathname, logout: ROUTES.logout, jwks: '/auth/jwks.json' },
      // FAPI 2.0: the app's public keys, for registration by jwks_uri.
      ...(config.provider.profile === 'fapi2' ? { publishKeys: strategy } : {}),
      successRedirect: ROUTES.profile,
      logoutRedirect: '/',
      sessionCookieName: sessionCookieName(secure),
      sessions: signInRules,
      // Server-side problems (service down, session store down) go to this app's error handler.
      errorPage: false,
    }),
  );

  app.get('/', (req, res) => {
    sendHtml(res, 200, homePage(req.user as ProfileUser | undefined));
  });
  app.get(
    ROUTES.profile,
    requireSignIn({ sessions: signInRules, loginPath: ROUTES.login, sessionCookieName: sessionCookieName(secure) }),
    (req, res) => sendHtml(res, 200, profilePage(req.user as ProfileUser)),
  );
  app.get('/favicon.ico', (_req, res) => {
    res.status(204).set('Cache-Control', 'public, max-age=86400').end();
  });
  app.use((_req, res) => sendHtml(res, 404, notFoundPage()));

  app.use(((err, _req, res, _next) => {
    if (res.headersSent) return;
    if (isStoreDown(err)) {
      // The store's own connection events are logged once per outage, not once per request.
      sendHtml(res, 503, unavailablePage());
      return;
    }
    if (isProviderDown(err)) {
      // The code names the problem; no URL, token or response body is logged.
      log(`Sign-in could not be completed: ${err.code}.`);
      sendHtml(
        res,
        err.code === 'provider_timeout' ? 504 : 502,
        errorPage(
          'Sign-in is unavailable',
          'The identity service could not be reached. Please try again in a few minutes.',
        ),
      );
      return;
    }
    if (err instanceof IdError) log(`Sign-in could not be completed: ${err.code}.`);
    else log(`Unexpected error: ${err instanceof Error ? err.name : typeof err}.`);
    sendHtml(res, 500, errorPage('Something went wrong', 'An unexpected error occurred. Please try again.'));
  }) satisfies ErrorRequestHandler);

  return {
    app,
    sessions,
    ready: sessions.ready,
    close: () => sessions.close(),
  };
}
