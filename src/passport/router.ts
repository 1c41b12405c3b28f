/**
 * ndIdRouter(): `GET /login`, `GET /callback` and `POST /logout` for an Express app. The strategy
 * the app registers does the sign-in; the router adds routes, pages and redirects.
 */
import type passportModule from 'passport';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IdError } from '../errors.js';
import { checkOptionNames, ownOptions, optionErrorOf } from '../options-check.js';
import { crossSiteRefusal, signOutRefusedPage, type CrossSiteRefusal } from '../flow/cross-site.js';
import { classifyFailure } from '../flow/failure.js';
import { safeReturnTo } from '../flow/return-to.js';
import { loadPassport } from './load-passport.js';
import { backchannelLogoutRoute } from './backchannel-route.js';
import {
  checkBackchannelLogout,
  DEFAULT_BACKCHANNEL_LOGOUT_PATH,
  type BackchannelLogout,
} from '../flow/backchannel-logout.js';
import { routeMatcher } from './route-matcher.js';
import { sendFailurePage, type FailurePage } from './failure-page.js';
import { requestHost } from './request-host.js';
import { stepUpMaxAge, stepUpRefusedPage } from '../flow/access.js';
import { defaultSessionPolicy, type SessionPolicy } from '../flow/session-policy.js';
import { carryEntries, recordAfterRegeneration, sessionStoreFailed } from '../flow/finish-sign-in.js';
import { recordSession } from '../flow/session.js';
import { destroySession } from './require-sign-in.js';
import { FAILURE_PAGE_HEADERS } from '../flow/failure-page.js';
import {
  checkKeyPublisher,
  DEFAULT_JWKS_PATH,
  JWKS_HEADERS,
  jwksBody,
  type KeyPublisher,
} from '../flow/publish-keys.js';
import {
  ND_ID_STRATEGY_NAME,
  type NdIdAuthenticateOptions,
  type NdIdFailure,
  type NdIdInfo,
  type NdIdSuccessInfo,
} from './strategy.js';

/** What `afterCallback` may return: a (possibly enriched) user, `false`/`null` to refuse, or nothing to keep the user. */
export type NdIdAfterCallbackResult = Express.User | false | null | undefined;

/** Paths of the router's routes, relative to where it is mounted. `false` turns a route off. */
export interface NdIdRoutes {
  /** Default `'/login'`. */
  login?: string | false;
  /** Default `'/callback'`. Must match the path of the strategy's `callbackURL`. */
  callback?: string | false;
  /** Default `'/logout'` (POST only). */
  logout?: string | false;
  /** Default `'/jwks.json'`: the app's public keys, served only when `publishKeys` is given. */
  jwks?: string | false;
  /** Default `'/backchannel-logout'` (POST only): served only when `backchannelLogout` is given. */
  backchannelLogout?: string | false;
}

/** A failed sign-in as given to `renderFailure`: what to show, and what to log or link. */
export interface NdIdFailureView {
  /** HTTP status: 401/403 for the person's side, 5xx for the server's. */
  status: number;
  /** True for server-side problems (service down, misconfiguration, store down). */
  serverSide: boolean;
  /** The error code (`state_mismatch`, `provider_unreachable`, …). */
  code: string;
  /** Short heading. */
  title: string;
  /** One sentence for the person; no internals. */
  message: string;
  /** The reference id of the log line, to show so support can find it. */
  reference?: string;
  /** Where "try again" should point. */
  retryHref: string;
  /** Cause and fix for the developer: present only when `NODE_ENV` is not `production`. */
  diagnosis?: { code: string; cause: string; fix: string };
}

/** Options of {@link ndIdRouter}. */
export interface NdIdRouterOptions {
  /** Name the strategy was registered under. Default `'nd-id'`. */
  strategyName?: string;
  /**
   * The Passport instance the strategy is registered with; sign-in serializes the user with it.
   * Default: the `passport` module itself, loaded when the router is built.
   */
  passport?: passportModule.Authenticator;
  /** Route paths; any can be `false`. Defaults `/login`, `/callback`, `/logout`. */
  routes?: NdIdRoutes;
  /** Where to go after a login when no safe `returnTo` was given. Default `'/'`. */
  successRedirect?: string;
  /** Where to go when a login fails. Default: none, a small HTML 401/403 page is shown instead. */
  failureRedirect?: string;
  /** Where to go after logout. Default `'/'`. */
  logoutRedirect?: string;
  /** Name of the session cookie to clear at logout. Default `'connect.sid'` (express-session's default). */
  sessionCookieName?: string;
  /**
   * Runs after the strategy accepted a user and before the session is created. Return the user
   * (possibly enriched), `false`/`null` to refuse the login, or nothing to keep the user as is.
   */
  afterCallback?: (req: Request, user: Express.User) => NdIdAfterCallbackResult | Promise<NdIdAfterCallbackResult>;
  /**
   * On a server-side failure (service down, no session, session store, refused client
   * credentials, unusable key set): `true` shows a small HTML page (502/504, 503 or 500), `false`
   * passes the {@link IdError} to `next(err)`. Other errors always go to `next(err)`. Default `true`.
   */
  errorPage?: boolean;
  /**
   * Renders every failure page yourself (branding): called with what to show, the request and
   * the response, and must answer. Cannot be combined with `failureRedirect` or `errorPage`.
   */
  renderFailure?: (failure: NdIdFailureView, req: Request, res: Response) => void;
  /**
   * The rules of signed-in sessions (lifetimes, sign-out everywhere): give the same
   * `createSessionPolicy({ ... })` to the router and to `requireSignIn`. Default: the defaults.
   */
  sessions?: SessionPolicy;
  /**
   * FAPI 2.0: serve the app's public keys (`sig`, `enc`) at `GET {mount}/jwks.json`, for
   * registration by `jwks_uri`: give the `NdIdStrategy` (or `IdClient`) with `profile: 'fapi2'`.
   */
  publishKeys?: KeyPublisher;
  /**
   * FAPI 2.0: the message the person sees on the approval screen, per login: a string, or a
   * function of the login request (return undefined for the client's default). At most 100 characters.
   */
  authenticationContextMessage?: string | ((req: Request) => string | undefined);
  /**
   * Extra authorization parameters per login (`ui_locales`, `prompt`, `login_hint`, ...): an
   * object, or a function of the login request. Never one the client sets itself (PKCE, state, nonce, ...).
   */
  authorizationParams?:
    | Readonly<Record<string, string>>
    | ((req: Request) => Readonly<Record<string, string>> | undefined);
  /**
   * Back-channel logout: the provider POSTs logout tokens to `{mount}/backchannel-logout` (register
   * it as `backchannel_logout_uri`): give `createBackchannelLogout({ client, sessions })`.
   */
  backchannelLogout?: BackchannelLogout;
}

/** Default paths of the routes. */
export const DEFAULT_ROUTES = { login: '/login', callback: '/callback', logout: '/logout' } as const;

const optionError = optionErrorOf('ndIdRouter');

function checkPath(value: unknown, option: string, fallback: string): string | false {
  if (value === undefined) return fallback;
  if (value === false) return false;
  if (typeof value !== 'string' || !value.startsWith('/')) {
    throw optionError(option, `must be a path starting with "/" (like "${fallback}"), or false to turn the route off.`);
  }
  return value;
}

function checkUrl(value: unknown, option: string, fallback: string | undefined): string | undefined {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '') {
    throw optionError(option, 'must be a non-empty path or URL, like "/".');
  }
  return value;
}

/** Why a state-changing request is not provably from this site, or `undefined` (see {@link crossSiteRefusal}). */
function crossSiteRefusalOf(req: Request): CrossSiteRefusal | undefined {
  return crossSiteRefusal({
    fetchSite: req.get('sec-fetch-site'),
    origin: req.get('origin'),
    host: requestHost(req),
    method: req.method,
    protocol: `${req.protocol}:`,
  });
}

type SessionData = Record<string, unknown> & {
  cookie?: {
    path?: string;
    domain?: string;
    secure?: boolean | 'auto';
    sameSite?: boolean | 'lax' | 'strict' | 'none';
  };
  save(cb: (err?: unknown) => void): void;
  destroy(cb: (err?: unknown) => void): void;
};

/**
 * A redirect with an empty body: browsers never show `res.redirect`'s text, and with
 * express-session a body costs one more socket write on every sign-in.
 */
function redirectTo(res: Response, status: 302 | 303, location: string): void {
  res.location(location).status(status).set('Content-Length', '0').end();
}

function sessionOf(req: Request): SessionData | undefined {
  const session: unknown = (req as { session?: unknown }).session;
  return typeof session === 'object' && session !== null ? (session as SessionData) : undefined;
}

/**
 * Express middleware serving `GET /login` (accepts `?returnTo=`), `GET /callback` and
 * `POST /logout` below its mount path for the strategy named `strategyName`; other requests pass on.
 *
 * ```ts
 * app.use(session({ ... }));
 * app.use(passport.session());
 * passport.use(new NdIdStrategy({ ..., callbackURL: 'https://app.example/auth/callback' }));
 * app.use('/auth', ndIdRouter({ successRedirect: '/account' }));
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function ndIdRouter(options: NdIdRouterOptions = {}): RequestHandler {
  if (typeof options !== 'object' || options === null) throw optionError('options', 'must be an object (or left out).');
  checkOptionNames(options, 'ndIdRouter()');
  options = ownOptions(options);
  const router: RouterConfig = {
    ...routeOptions(options),
    ...pageOptions(options),
    ...loginOptions(options),
  };
  const { publisher } = router;
  // One plain middleware rather than an express.Router: its layer walk cost CPU on every login (docs/internals.md).
  const isLogin = routeMatcher(router.loginPath);
  const isCallback = routeMatcher(router.callbackPath);
  const isLogout = routeMatcher(router.logoutPath);
  const isJwks = routeMatcher(router.jwksPath);
  const isBackchannel = routeMatcher(router.backchannelPath);
  const backchannelRoute = router.backchannel === undefined ? undefined : backchannelLogoutRoute(router.backchannel);
  return function ndIdRoutes(req: Request, res: Response, next: NextFunction): void {
    const method = req.method;
    if (method === 'GET' || method === 'HEAD') {
      const path = req.path;
      if (isLogin(path) || isCallback(path)) return authenticateRoute(router, req, res, next);
      if (publisher !== undefined && isJwks(path)) {
        const body = jwksBody(publisher);
        if (body !== undefined) {
          res.set(JWKS_HEADERS).status(200).send(body);
          return;
        }
      }
    } else if (method === 'POST' && isLogout(req.path)) {
      return logoutRoute(router, req, res, next);
    } else if (method === 'POST' && backchannelRoute !== undefined && isBackchannel(req.path)) {
      return backchannelRoute(req, res, next);
    }
    next();
  };
}

/** The router's options, checked once: what each route and page reads. */
type RouterConfig = ReturnType<typeof routeOptions> & ReturnType<typeof pageOptions> & ReturnType<typeof loginOptions>;

/** Options resolution, the routes: the strategy, the Passport instance and the paths. */
function routeOptions(options: NdIdRouterOptions) {
  const strategyName = options.strategyName ?? ND_ID_STRATEGY_NAME;
  if (typeof strategyName !== 'string' || strategyName === '') {
    throw optionError(
      'strategyName',
      'must be the non-empty name the strategy was registered under (default "nd-id").',
    );
  }
  const passport = options.passport ?? loadPassport('ndIdRouter');
  if (typeof passport !== 'object' || passport === null || typeof passport.authenticate !== 'function') {
    throw optionError('passport', 'must be a Passport instance (the passport module, or new passport.Passport()).');
  }
  if (options.routes !== undefined && (typeof options.routes !== 'object' || options.routes === null)) {
    throw optionError('routes', 'must be an object like { login: "/login", callback: "/callback", logout: false }.');
  }
  const loginPath = checkPath(options.routes?.login, 'routes.login', DEFAULT_ROUTES.login);
  const callbackPath = checkPath(options.routes?.callback, 'routes.callback', DEFAULT_ROUTES.callback);
  const logoutPath = checkPath(options.routes?.logout, 'routes.logout', DEFAULT_ROUTES.logout);
  const publisher =
    options.publishKeys === undefined ? undefined : checkKeyPublisher(options.publishKeys, 'ndIdRouter', 'publishKeys');
  const jwksPath = publisher === undefined ? false : checkPath(options.routes?.jwks, 'routes.jwks', DEFAULT_JWKS_PATH);
  const backchannel =
    options.backchannelLogout === undefined
      ? undefined
      : checkBackchannelLogout(options.backchannelLogout, 'ndIdRouter', 'backchannelLogout');
  const backchannelPath =
    backchannel === undefined
      ? false
      : checkPath(options.routes?.backchannelLogout, 'routes.backchannelLogout', DEFAULT_BACKCHANNEL_LOGOUT_PATH);
  const contextMessage = options.authenticationContextMessage;
  if (contextMessage !== undefined && typeof contextMessage !== 'string' && typeof contextMessage !== 'function') {
    throw optionError(
      'authenticationContextMessage',
      'must be a string of at most 100 characters, or a function (req) returning one.',
    );
  }
  const extraParams = options.authorizationParams;
  if (
    extraParams !== undefined &&
    (typeof extraParams !== 'object' || extraParams === null) &&
    typeof extraParams !== 'function'
  ) {
    throw optionError(
      'authorizationParams',
      'must be an object of parameter names and string values, or a function (req) returning one.',
    );
  }
  return {
    strategyName,
    passport,
    loginPath,
    callbackPath,
    logoutPath,
    publisher,
    jwksPath,
    backchannel,
    backchannelPath,
    contextMessage,
    extraParams,
  };
}

/** Options resolution, the pages: where to go, which cookie to clear, how failures are shown. */
function pageOptions(options: NdIdRouterOptions) {
  const successRedirect = checkUrl(options.successRedirect, 'successRedirect', '/') as string;
  const failureRedirect = checkUrl(options.failureRedirect, 'failureRedirect', undefined);
  const logoutRedirect = checkUrl(options.logoutRedirect, 'logoutRedirect', '/') as string;
  const sessionCookieName = options.sessionCookieName ?? 'connect.sid';
  if (typeof sessionCookieName !== 'string' || sessionCookieName === '') {
    throw optionError(
      'sessionCookieName',
      'must be the name of the session cookie (express-session\'s "name" option; default "connect.sid").',
    );
  }
  const errorPage = options.errorPage ?? true;
  if (typeof errorPage !== 'boolean')
    throw optionError('errorPage', 'must be true (show a page) or false (pass errors to next).');
  const renderFailure = options.renderFailure;
  if (renderFailure !== undefined && typeof renderFailure !== 'function') {
    throw optionError('renderFailure', 'must be a function (failure, req, res) that sends the page.');
  }
  if (renderFailure !== undefined && failureRedirect !== undefined) {
    throw optionError(
      'renderFailure',
      'and failureRedirect cannot both be given: one shows a page, the other redirects. Keep one.',
    );
  }
  if (renderFailure !== undefined && options.errorPage !== undefined) {
    throw optionError(
      'renderFailure',
      'and errorPage cannot both be given: renderFailure renders the server-side failures too. Keep one.',
    );
  }
  return { successRedirect, failureRedirect, logoutRedirect, sessionCookieName, errorPage, renderFailure };
}

/** Options resolution, the sign-in: the session policy and the app's check of each new user. */
function loginOptions(options: NdIdRouterOptions) {
  const sessions = options.sessions ?? defaultSessionPolicy();
  if (typeof sessions !== 'object' || sessions === null || typeof sessions.start !== 'function') {
    throw optionError('sessions', 'must be createSessionPolicy({ ... }), the same one given to requireSignIn.');
  }
  const afterCallback = options.afterCallback;
  if (afterCallback !== undefined && typeof afterCallback !== 'function') {
    throw optionError(
      'afterCallback',
      'must be a function (req, user) returning the user, false to refuse, or a promise of either.',
    );
  }
  return { sessions, afterCallback };
}

function retryHref(router: RouterConfig, req: Request): string {
  return router.loginPath === false ? '/' : `${req.baseUrl}${router.loginPath}`;
}

/** Shows the page for a failure: the app's renderFailure, or ours. */
function show(router: RouterConfig, req: Request, res: Response, view: NdIdFailureView): void {
  if (router.renderFailure !== undefined) return router.renderFailure(view, req, res);
  const page: FailurePage = {
    status: view.status,
    title: view.title,
    message: view.message,
    retryHref: view.retryHref,
  };
  if (view.reference !== undefined) page.reference = view.reference;
  if (view.diagnosis !== undefined) page.developer = view.diagnosis;
  sendFailurePage(res, page);
}

function forDeveloper(diagnosis: NdIdFailureView['diagnosis']): { diagnosis?: NdIdFailureView['diagnosis'] } {
  return diagnosis === undefined || process.env.NODE_ENV === 'production' ? {} : { diagnosis };
}

function sendError(router: RouterConfig, err: unknown, req: Request, res: Response, next: NextFunction): void {
  if ((!router.errorPage && router.renderFailure === undefined) || !(err instanceof IdError)) return next(err);
  const failure = classifyFailure(err);
  show(router, req, res, {
    status: failure.serverSide ? failure.status : 500,
    serverSide: true,
    code: err.code,
    title: 'Sign-in is unavailable',
    message: failure.serverSide
      ? failure.message
      : 'Sign-in could not be completed because of a problem on this site. Please try again later.',
    retryHref: retryHref(router, req),
    ...(err.reference === undefined ? {} : { reference: err.reference }),
    ...forDeveloper(err.diagnosis),
  });
}

function sendFailure(
  router: RouterConfig,
  req: Request,
  res: Response,
  failure: NdIdInfo | undefined,
  status: number | undefined,
): void {
  if (router.failureRedirect !== undefined) return redirectTo(res, 302, router.failureRedirect);
  const message = typeof failure?.message === 'string' && failure.message !== '' ? failure.message : 'Sign-in failed.';
  const f = (failure ?? {}) as Partial<NdIdFailure>;
  show(router, req, res, {
    status: status === 403 ? 403 : 401,
    serverSide: false,
    code: typeof f.code === 'string' ? f.code : 'user_refused',
    title: 'Sign-in failed',
    message,
    retryHref: retryHref(router, req),
    ...(typeof f.reference === 'string' ? { reference: f.reference } : {}),
    ...forDeveloper(f.diagnosis),
  });
}

/** A step-up login the strategy refused: the action stays refused; a different person's ends the session. */
function sendStepUpRefusal(
  router: RouterConfig,
  req: Request,
  res: Response,
  next: NextFunction,
  failure: NdIdFailure,
): void {
  const otherPerson = failure.code === 'step_up_other_person';
  const href = otherPerson ? retryHref(router, req) : (safeReturnTo(failure.returnTo) ?? router.successRedirect);
  const send = (): void => {
    res
      .status(403)
      .set(FAILURE_PAGE_HEADERS)
      .send(stepUpRefusedPage(otherPerson ? 'other_person' : 'not_recent', href));
  };
  if (!otherPerson) return send();
  destroySession(req, res, router.sessionCookieName, (err) => (err ? next(err) : send()));
}

async function logIn(
  router: RouterConfig,
  req: Request,
  res: Response,
  next: NextFunction,
  accepted: Express.User,
  info: NdIdSuccessInfo,
): Promise<void> {
  let user: Express.User = accepted;
  if (router.afterCallback !== undefined) {
    const result = await router.afterCallback(req, accepted);
    if (result === false || result === null) {
      const refused: NdIdFailure = { message: 'Your account may not sign in here.', code: 'user_refused' };
      return sendFailure(router, req, res, refused, 401);
    }
    if (result !== undefined) user = result;
  }
  // Passport replaces the session (keeping none of it): the other tabs' logins are copied into the
  // new one and the sign-in recorded there, saved before this redirect.
  const before = sessionOf(req);
  const failed = (err: unknown): void =>
    sendError(
      router,
      sessionStoreFailed(router.sessions.log, err, 'The session store failed while signing in.'),
      req,
      res,
      next,
    );
  req.logIn(user, { session: true }, (err: unknown) => {
    if (err) return failed(err);
    const after = sessionOf(req);
    if (after === undefined) return done(router, res, info);
    // A session that was not replaced (a regenerate that keeps it) is both before and after.
    const previous = recordSession(before ?? after);
    const entries = info.sessionEntries ?? [];
    if (info.signIn === undefined) carryEntries(previous, recordSession(after), entries);
    else recordAfterRegeneration(router.sessions, previous, recordSession(after), entries, info.signIn);
    after.save((saveErr) => (saveErr ? failed(saveErr) : done(router, res, info)));
  });
}

/** The redirect after a sign-in: the login's `returnTo`, or `successRedirect`. */
function done(router: RouterConfig, res: Response, info: NdIdSuccessInfo): void {
  redirectTo(res, 302, safeReturnTo(info.returnTo) ?? router.successRedirect);
}

/** Login and callback share one handler (the strategy tells them apart); built per request, as its callback needs this request. */
function authenticateRoute(router: RouterConfig, req: Request, res: Response, next: NextFunction): void {
  res.set('Cache-Control', 'no-store');
  const { contextMessage, extraParams, callbackPath } = router;
  const returnTo = safeReturnTo(req.query.returnTo);
  const maxAge = stepUpMaxAge(req.query.maxAge);
  const message = typeof contextMessage === 'function' ? contextMessage(req) : contextMessage;
  const params = typeof extraParams === 'function' ? extraParams(req) : extraParams;
  const authOptions: NdIdAuthenticateOptions = {
    sessionCookieName: router.sessionCookieName,
    successRedirect: router.successRedirect,
    sessions: router.sessions,
    wiring: {
      callbackRoute: callbackPath === false ? false : `${req.baseUrl}${callbackPath}`,
    },
    ...(message === undefined ? {} : { authenticationContextMessage: message }),
    ...(params === undefined ? {} : { authorizationParams: params }),
    ...(returnTo === undefined ? {} : { returnTo }),
    ...(maxAge === undefined ? {} : { maxAge }),
  };
  const outcome = (err: unknown, user?: Express.User | false | null, info?: unknown, status?: unknown): void => {
    if (err) return sendError(router, err, req, res, next);
    if (!user) {
      const failure = typeof info === 'object' && info !== null ? (info as NdIdFailure) : undefined;
      if (failure?.code === 'step_up_not_recent' || failure?.code === 'step_up_other_person')
        return sendStepUpRefusal(router, req, res, next, failure);
      return sendFailure(router, req, res, failure, typeof status === 'number' ? status : undefined);
    }
    const successInfo = typeof info === 'object' && info !== null ? (info as NdIdSuccessInfo) : {};
    logIn(router, req, res, next, user, successInfo).catch(next);
  };
  const handler = router.passport.authenticate(router.strategyName, authOptions, outcome) as (
    req: Request,
    res: Response,
    next: NextFunction,
  ) => void;
  handler(req, res, next);
}

function logoutRoute(router: RouterConfig, req: Request, res: Response, next: NextFunction): void {
  const { logoutRedirect, sessionCookieName } = router;
  const refusal = crossSiteRefusalOf(req);
  if (refusal !== undefined)
    return sendFailurePage(res, signOutRefusedPage(refusal, process.env.NODE_ENV !== 'production'));
  if (sessionOf(req) === undefined) {
    return sendError(
      router,
      new IdError(
        'session_missing',
        'Sign-out needs a session: mount express-session (app.use(session({ ... }))) before ndIdRouter().',
      ),
      req,
      res,
      next,
    );
  }
  const destroy = (): void => {
    const session = sessionOf(req);
    if (session === undefined) {
      redirectTo(res, 303, logoutRedirect);
      return;
    }
    router.sessions.signedOut();
    const cookie = session.cookie ?? {};
    session.destroy((err) => {
      if (err) return next(err);
      res.clearCookie(sessionCookieName, {
        path: cookie.path ?? '/',
        ...(cookie.domain === undefined ? {} : { domain: cookie.domain }),
      });
      res.set('Cache-Control', 'no-store');
      redirectTo(res, 303, logoutRedirect);
    });
  };
  if (typeof req.logout === 'function') {
    req.logout((err: unknown) => {
      if (err) return next(err);
      destroy();
    });
  } else {
    destroy();
  }
}
