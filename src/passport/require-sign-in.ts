/** Express guards for routes that need a signed-in person, over the sign-in record the strategy keeps. */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IdError } from '../errors.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import {
  checkAccessOptions,
  refuseAccess,
  refusalReason,
  type AccessOptions,
  type AccessRefusalReason,
} from '../flow/access.js';
import { decideAccess } from '../flow/access-check.js';
import { SESSION_CACHE_CONTROL } from '../flow/finish-sign-in.js';
import type { SignInSession } from '../flow/sign-in-session.js';
import { defaultSessionPolicy, type SessionPolicy, type SignInRecord } from '../flow/session-policy.js';
import { sessionEndedOn } from './signed-in-session.js';

/** Options of {@link requireSignIn} and {@link requireRecentSignIn}. */
export interface RequireSignInOptions extends AccessOptions {
  /** The session rules; give the same one to `ndIdRouter({ sessions })`. Default: the defaults (12 h, 30 min idle). */
  sessions?: SessionPolicy;
  /** Name of the session cookie to clear when a session is ended. Default `'connect.sid'`. */
  sessionCookieName?: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `requireSignIn()`: the sign-in record of this session (who, when signed in, when authenticated). */
      signIn?: SignInRecord;
    }
  }
}

type ExpressSession = Record<string, unknown> & {
  cookie?: { path?: string; domain?: string };
  destroy(cb: (err?: unknown) => void): void;
};

function sessionOf(req: Request): ExpressSession | undefined {
  const session: unknown = (req as { session?: unknown }).session;
  return typeof session === 'object' && session !== null ? (session as ExpressSession) : undefined;
}

/** Destroys the session in its store and clears its cookie. */
export function destroySession(req: Request, res: Response, cookieName: string, done: (err?: unknown) => void): void {
  const session = sessionOf(req);
  if (session === undefined) return done();
  const cookie = session.cookie ?? {};
  session.destroy((err) => {
    if (err)
      return done(
        new IdError('session_store_unavailable', 'The session could not be ended in its store.', { cause: err }),
      );
    res.clearCookie(cookieName, {
      path: cookie.path ?? '/',
      ...(cookie.domain === undefined ? {} : { domain: cookie.domain }),
    });
    done();
  });
}

/** express-session's session as the guard core speaks to it (Express saves it as it answers); a class, as it is made per request. */
class GuardSession implements SignInSession {
  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly session: ExpressSession,
    private readonly cookieName: string,
  ) {}
  get(key: string): unknown {
    return Object.hasOwn(this.session, key) ? this.session[key] : undefined;
  }
  set(key: string, value: unknown): void {
    this.session[key] = value;
  }
  delete(key: string): void {
    delete this.session[key];
  }
  regenerate(): Promise<void> {
    return Promise.reject(new Error('A guard never regenerates the session.'));
  }
  save(): Promise<void> {
    return Promise.resolve();
  }
  destroy(): Promise<void> {
    return new Promise<void>((resolve, reject) =>
      destroySession(this.req, this.res, this.cookieName, (err) => (err ? reject(err) : resolve())),
    );
  }
}

function guard(given: RequireSignInOptions | undefined, seconds: number | undefined, who: string): RequestHandler {
  const options = ownOptions(given);
  const access = checkAccessOptions(options, who);
  checkOptionNames(options, 'requireSignIn()');
  const policy = options?.sessions ?? defaultSessionPolicy();
  if (typeof policy !== 'object' || policy === null || typeof policy.check !== 'function') {
    throw new TypeError(`${who}: sessions must be createSessionPolicy({ ... }), the same one given to ndIdRouter.`);
  }
  const cookieName = options?.sessionCookieName ?? 'connect.sid';
  if (typeof cookieName !== 'string' || cookieName === '')
    throw new TypeError(`${who}: sessionCookieName must be the session cookie's name (default "connect.sid").`);

  function refuse(req: Request, res: Response, reason: AccessRefusalReason, maxAge?: number): void {
    const answer = refuseAccess(access, { url: req.originalUrl, accept: req.get('accept') }, reason, maxAge);
    res.set('Cache-Control', SESSION_CACHE_CONTROL);
    if (answer.kind === 'redirect') return res.redirect(303, answer.location);
    res.status(answer.status).set('WWW-Authenticate', answer.wwwAuthenticate).json(answer.body);
  }

  return function requireSignInGuard(req: Request, res: Response, next: NextFunction): void {
    const session = sessionOf(req);
    if (session === undefined) {
      return next(
        new IdError(
          'session_missing',
          `${who} needs a session: mount express-session (app.use(session({ ... }))) before it.`,
        ),
      );
    }
    const endedEarlier = sessionEndedOn(req);
    if (endedEarlier !== undefined) {
      return destroySession(req, res, cookieName, (err) =>
        err ? next(err) : refuse(req, res, refusalReason(endedEarlier), seconds),
      );
    }
    // A record without a Passport user (logged out with req.logout, or passport.session() missing) is not a sign-in.
    const hasUser = typeof req.isAuthenticated !== 'function' || req.isAuthenticated();
    decideAccess(policy, new GuardSession(req, res, session, cookieName), {
      hasUser,
      ...(seconds === undefined ? {} : { recentSeconds: seconds }),
    }).then((decision) => {
      if (decision.kind === 'refuse') return refuse(req, res, decision.reason, seconds);
      req.signIn = decision.record;
      // A page behind a sign-in is the person's, and may carry the session's refreshed cookie: no cache keeps it.
      res.set('Cache-Control', SESSION_CACHE_CONTROL);
      next();
    }, next);
  };
}

/**
 * Lets signed-in requests through (with `req.signIn` set) and ends sessions past their lifetime;
 * a page request is redirected to the login route, an API request (by `Accept`, or `api: true`)
 * gets 401 JSON with a `WWW-Authenticate` challenge.
 *
 * ```ts
 * app.get('/account', requireSignIn(), (req, res) => res.send(`Hello ${req.user.sub}`));
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function requireSignIn(options?: RequireSignInOptions): RequestHandler {
  return guard(options, undefined, 'requireSignIn');
}

/**
 * As {@link requireSignIn}, and the person must have authenticated within the last `seconds`;
 * otherwise a new login starts with `max_age=seconds` (step-up) and comes back here.
 *
 * ```ts
 * app.post('/transfer', requireRecentSignIn(300), transfer);
 * ```
 * @throws TypeError when `seconds` is not a whole number of seconds, or an option is wrong.
 */
export function requireRecentSignIn(seconds: number, options?: RequireSignInOptions): RequestHandler {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 1e9) {
    throw new TypeError('requireRecentSignIn: seconds must be a whole number of seconds, like 300 (5 minutes).');
  }
  return guard(options, seconds, 'requireRecentSignIn');
}
