/**
 * `ndIdFastify()`: login, callback and sign-out routes as a Fastify plugin, and the guards, on
 * `@fastify/session` or `@fastify/secure-session`. The routes translate to the login flow and the
 * sign-in core (`src/flow/finish-sign-in.ts`); every session rule is decided there.
 */
import { IdError } from '../errors.js';
import { checkBackchannelLogout, type BackchannelLogout } from '../flow/backchannel-logout.js';
import { stepUpMaxAge, stepUpRefusedPage, DEFAULT_LOGIN_PATH } from '../flow/access.js';
import { crossSiteRefusal, signOutRefusedPage } from '../flow/cross-site.js';
import type { RequestFacts } from '../flow/diagnose.js';
import {
  finishSignIn,
  priorSignIn,
  SESSION_CACHE_CONTROL,
  storeFailure,
  type SignInCore,
} from '../flow/finish-sign-in.js';
import {
  buildLoginFlow,
  type CompleteResult,
  type LoginFlow,
  type LoginFlowOptions,
  type LoginUser,
} from '../flow/login-flow.js';
import { optionError } from '../flow/options.js';
import { safeReturnTo } from '../flow/return-to.js';
import { defaultSessionPolicy, type SessionPolicy } from '../flow/session-policy.js';
import { readOnlySession, withoutRegeneration, type SignInSession } from '../flow/sign-in-session.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import {
  DEFAULT_FASTIFY_USER_KEY,
  header,
  ndIdFastifyGuards,
  sessionMissing,
  type NdIdFastifyGuards,
} from './fastify-guard.js';
import {
  sendFastifyFailure,
  sendFastifyHtml,
  sendFastifyPage,
  type FastifyReplyLike,
  type FastifyRequestLike,
} from './fastify-reply.js';
import { fastifySignInSession } from './fastify-session.js';
import { registerBackchannelLogout, type FastifyRouteScopeLike } from './fastify-backchannel.js';

/** A route handler as the plugin registers it. */
type Handler = (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>;

/** What the plugin uses of the Fastify instance it is registered on. */
export interface FastifyInstanceLike extends FastifyRouteScopeLike {
  get(path: string, handler: Handler): unknown;
  post(path: string, handler: Handler): unknown;
}

/** Options of {@link ndIdFastify}. */
export interface NdIdFastifyOptions extends LoginFlowOptions {
  /** The rules of signed-in sessions (lifetimes, sign-out everywhere), from `createSessionPolicy`. Default: the defaults. */
  sessions?: SessionPolicy;
  /** Where to go after sign-in when the login gave no `returnTo`. Default `'/'`. */
  successRedirect?: string;
  /** Where to go after sign-out. Default `'/'`. */
  logoutRedirect?: string;
  /** The login route as the app serves it (where the plugin is registered, plus `/login`), for the guards and failure pages. Default `'/auth/login'`. */
  loginPath?: string;
  /** Session key of the signed-in person. Default `'nd-id.user'`. */
  userKey?: string;
  /** What to keep in the session for the person. Default `{ sub, data, authTime, signedInAt }`; keep it small with a cookie session. */
  toSessionUser?: (user: LoginUser) => unknown;
  /** Show the diagnosis for the developer on failure pages. Default: when `NODE_ENV` is not `'production'`. */
  showDiagnosis?: boolean;
  /**
   * Back-channel logout: the provider POSTs logout tokens to `/backchannel-logout` below the
   * plugin's prefix (register it as `backchannel_logout_uri`): give `createBackchannelLogout({ client, sessions })`.
   */
  backchannelLogout?: BackchannelLogout;
}

/** The plugin, its guards and the flow underneath. */
export interface NdIdFastify extends NdIdFastifyGuards {
  /** The flow underneath. */
  readonly flow: LoginFlow;
  /** The session rules in force. */
  readonly sessions: SessionPolicy;
  /**
   * The plugin: `app.register(auth.plugin, { prefix: '/auth' })` serves `GET /login` (`?returnTo=`),
   * `GET /callback` and `POST /logout` below the prefix, and `POST /backchannel-logout` when
   * `backchannelLogout` is given.
   */
  plugin(instance: FastifyInstanceLike, options?: unknown): Promise<void>;
  /** The signed-in person of the request's session, or undefined (also when the policy has ended the session); writes nothing. */
  user(request: FastifyRequestLike): Promise<unknown>;
}

function checkPath(value: unknown, option: string, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || safeReturnTo(value) === undefined)
    throw optionError('ndIdFastify', option, `must be a same-site path like "${fallback}".`);
  return value;
}

/** The default person kept in the session: no ID token claims (they stay out of a cookie session). */
function defaultSessionUser(user: LoginUser): unknown {
  return {
    sub: user.sub,
    data: user.data,
    ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
    signedInAt: user.signedInAt,
  };
}

/**
 * Creates the Fastify sign-in.
 *
 * ```ts
 * const auth = ndIdFastify({ client, sessions, successRedirect: '/account' });
 * await app.register(auth.plugin, { prefix: '/auth' });
 * app.get('/account', { preHandler: auth.requireSignIn() }, async (request) => auth.signedIn(request));
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function ndIdFastify(given: NdIdFastifyOptions): NdIdFastify {
  if (typeof given !== 'object' || given === null)
    throw optionError('ndIdFastify', 'options', 'must be an object with a client (new IdClient({ ... })).');
  checkOptionNames(given, 'ndIdFastify()');
  const options = ownOptions(given);
  const {
    sessions: _s,
    successRedirect: _sr,
    logoutRedirect: _lr,
    loginPath: _lp,
    userKey: _uk,
    toSessionUser: _tsu,
    showDiagnosis: _sd,
    backchannelLogout: _bcl,
    ...flowOptions
  } = options;
  const flow = buildLoginFlow(flowOptions, 'ndIdFastify');
  const policy = options.sessions ?? defaultSessionPolicy();
  if (typeof policy !== 'object' || policy === null || typeof policy.start !== 'function')
    throw optionError('ndIdFastify', 'sessions', 'must be createSessionPolicy({ ... }).');
  const successRedirect = checkPath(options.successRedirect, 'successRedirect', '/');
  const logoutRedirect = checkPath(options.logoutRedirect, 'logoutRedirect', '/');
  const loginPath = checkPath(options.loginPath, 'loginPath', DEFAULT_LOGIN_PATH);
  const userKey = options.userKey ?? DEFAULT_FASTIFY_USER_KEY;
  if (typeof userKey !== 'string' || userKey === '' || userKey === policy.recordKey || userKey === flow.sessionKey)
    throw optionError('ndIdFastify', 'userKey', 'must be a session key no other code uses, like "nd-id.user".');
  const toSessionUser = options.toSessionUser ?? defaultSessionUser;
  if (typeof toSessionUser !== 'function')
    throw optionError('ndIdFastify', 'toSessionUser', 'must be a function (user) => what to keep in the session.');
  const showDiagnosis = options.showDiagnosis ?? process.env.NODE_ENV !== 'production';
  const backchannel =
    options.backchannelLogout === undefined
      ? undefined
      : checkBackchannelLogout(options.backchannelLogout, 'ndIdFastify', 'backchannelLogout');
  const core: SignInCore = { flow, policy };
  const guards = ndIdFastifyGuards({ sessions: policy, loginPath, userKey });
  const pages = { retryHref: loginPath, showDiagnosis };
  const routes = fastifyRoutes({
    flow,
    core,
    userKey,
    toSessionUser,
    successRedirect,
    logoutRedirect,
    loginPath,
    pages,
  });

  return {
    flow,
    sessions: policy,
    ...guards,
    async plugin(instance) {
      instance.get('/login', routes.login);
      instance.get('/callback', routes.callback);
      instance.post('/logout', routes.logout);
      if (backchannel !== undefined) registerBackchannelLogout(instance, backchannel);
    },
    async user(request) {
      const session = fastifySignInSession(request);
      if (session === undefined) return undefined;
      let check: Awaited<ReturnType<SessionPolicy['check']>>;
      try {
        check = await policy.check(readOnlySession(session));
      } catch (err) {
        throw new IdError('session_store_unavailable', 'The sign-out store could not be read.', { cause: err });
      }
      return check.signedIn ? session.get(userKey) : undefined;
    },
  };
}

/** What the routes share. */
interface RouteContext {
  flow: LoginFlow;
  core: SignInCore;
  userKey: string;
  toSessionUser: (user: LoginUser) => unknown;
  successRedirect: string;
  logoutRedirect: string;
  loginPath: string;
  pages: { retryHref: string; showDiagnosis: boolean };
}

/** What the flow's diagnoses know of the request. */
function factsOf(request: FastifyRequestLike): RequestFacts {
  const cookie = header(request, 'cookie');
  return {
    host: header(request, 'host') ?? '',
    secure: request.protocol === 'https',
    cookieHeaderPresent: cookie !== undefined && cookie !== '',
  };
}

function queryOf(request: FastifyRequestLike): Record<string, unknown> {
  return typeof request.query === 'object' && request.query !== null ? (request.query as Record<string, unknown>) : {};
}

/** Answers a failure page with the routes' settings. */
function fail(c: RouteContext, reply: FastifyReplyLike, err: unknown): FastifyReplyLike {
  return sendFastifyFailure(reply, err, c.pages);
}

async function loginRoute(c: RouteContext, request: FastifyRequestLike, reply: FastifyReplyLike): Promise<unknown> {
  reply.header('cache-control', SESSION_CACHE_CONTROL);
  const session = fastifySignInSession(request);
  if (session === undefined) return fail(c, reply, c.flow.report(sessionMissing('ndIdFastify')));
  const query = queryOf(request);
  const returnTo = safeReturnTo(query.returnTo);
  const maxAge = stepUpMaxAge(query.maxAge);
  try {
    const { redirectUrl } = await c.flow.start(session, {
      ...(returnTo === undefined ? {} : { returnTo }),
      ...(maxAge === undefined ? {} : { maxAge }),
      request: factsOf(request),
    });
    return reply.redirect(redirectUrl, 302);
  } catch (err) {
    return fail(c, reply, c.flow.report(err, factsOf(request)));
  }
}

async function callbackRoute(c: RouteContext, request: FastifyRequestLike, reply: FastifyReplyLike): Promise<unknown> {
  reply.header('cache-control', SESSION_CACHE_CONTROL);
  const session = fastifySignInSession(request);
  if (session === undefined) return fail(c, reply, c.flow.report(sessionMissing('ndIdFastify')));
  const query = queryOf(request);
  // Read before the sign-in replaces the session: a step-up is judged against it.
  const prior = priorSignIn(c.core.policy, session);
  let result: CompleteResult;
  try {
    result = await c.flow.complete(withoutRegeneration(session), query, () => factsOf(request));
  } catch (err) {
    return refusedCallback(c, session, reply, query, err);
  }
  return finish(c, session, reply, result, prior);
}

/** A refused callback: a signed-in person replaying it (back button) is sent on; anyone else sees why. */
function refusedCallback(
  c: RouteContext,
  session: SignInSession,
  reply: FastifyReplyLike,
  query: Record<string, unknown>,
  err: unknown,
): unknown {
  if (err instanceof IdError && err.code === 'state_mismatch' && session.get(c.userKey) !== undefined) {
    const done = c.flow.completedLogin(query.state);
    return reply.redirect(safeReturnTo(done?.returnTo) ?? c.successRedirect, 302);
  }
  return fail(c, reply, err);
}

async function finish(
  c: RouteContext,
  session: SignInSession,
  reply: FastifyReplyLike,
  result: CompleteResult,
  prior: ReturnType<typeof priorSignIn>,
): Promise<unknown> {
  const signIn = { ...result.user, ...(result.maxAge === undefined ? {} : { maxAge: result.maxAge }) };
  try {
    const finished = await finishSignIn(c.core, session, signIn, prior, (fresh) =>
      fresh.set(c.userKey, c.toSessionUser(result.user)),
    );
    if (finished.kind === 'signed_in') return reply.redirect(safeReturnTo(result.returnTo) ?? c.successRedirect, 302);
    const retry = finished.outcome === 'other_person' ? c.loginPath : (safeReturnTo(result.returnTo) ?? '/');
    return sendFastifyHtml(reply, finished.status, stepUpRefusedPage(finished.outcome, retry));
  } catch (err) {
    return fail(c, reply, storeFailure(c.core, err, 'The session could not be saved.'));
  }
}

async function logoutRoute(c: RouteContext, request: FastifyRequestLike, reply: FastifyReplyLike): Promise<unknown> {
  reply.header('cache-control', SESSION_CACHE_CONTROL);
  const refusal = crossSiteRefusal({
    fetchSite: header(request, 'sec-fetch-site'),
    origin: header(request, 'origin'),
    host: header(request, 'host'),
    protocol: `${request.protocol}:`,
    method: request.method,
  });
  if (refusal !== undefined) return sendFastifyPage(reply, signOutRefusedPage(refusal, c.pages.showDiagnosis));
  const session = fastifySignInSession(request);
  if (session === undefined) return fail(c, reply, c.flow.report(sessionMissing('ndIdFastify')));
  try {
    await session.destroy();
  } catch (err) {
    return fail(c, reply, storeFailure(c.core, err, 'The session could not be ended in its store.'));
  }
  c.core.policy.signedOut();
  return reply.redirect(c.logoutRedirect, 303);
}

/** The three route handlers. */
function fastifyRoutes(c: RouteContext): { login: Handler; callback: Handler; logout: Handler } {
  return {
    login: (request, reply) => loginRoute(c, request, reply),
    callback: (request, reply) => callbackRoute(c, request, reply),
    logout: (request, reply) => logoutRoute(c, request, reply),
  };
}
