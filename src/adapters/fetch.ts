/**
 * Fetch-standard login handlers (`Request` in, `Response` out) for Hono, Next.js, Deno, Bun and
 * workers; they only translate to the login flow. The session is a sealed cookie or the app's own.
 */
import { IdError } from '../errors.js';
import { crossSiteRefusal, signOutRefusedPage } from '../flow/cross-site.js';
import { classifyFailure } from '../flow/failure.js';
import type { RequestFacts } from '../flow/diagnose.js';
import {
  buildLoginFlow,
  type CompleteResult,
  type LoginFlow,
  type LoginFlowOptions,
  type LoginUser,
} from '../flow/login-flow.js';
import { optionError } from '../flow/options.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import { safeReturnTo } from '../flow/return-to.js';
import { isFlowSession, type FlowSession } from '../flow/session.js';
import { FAILURE_PAGE_HEADERS, renderFailurePage } from '../flow/failure-page.js';
import { appendSessionCookie, readCookie, type CookieFlowSession, type CookieSessionStore } from './cookie-session.js';
import { DEFAULT_LOGIN_PATH, stepUpMaxAge, stepUpRefusedPage, type AccessOptions } from '../flow/access.js';
import { finishSignIn, priorSignIn, storeFailure } from '../flow/finish-sign-in.js';
import { readOnlySession, withoutRegeneration, type SignInSession } from '../flow/sign-in-session.js';
import { defaultSessionPolicy, type SessionCheck, type SessionPolicy } from '../flow/session-policy.js';
import { createFetchGuards, type SignedInHandler } from './fetch-guard.js';
import { JWKS_HEADERS, jwksBody, type KeyPublisher } from '../flow/publish-keys.js';

export type { SignedInHandler, SignedInRequest } from './fetch-guard.js';

/** A session the app supplies per request (it persists it itself), e.g. over its own store. */
export type FetchSessionProvider = (request: Request) => FlowSession | Promise<FlowSession>;

/** What the app stores about the signed-in person by default (no ID token claims: they stay out of the cookie). */
export interface FetchSessionUser {
  /** The person's identifier for this client. */
  sub: string;
  /** The requested attributes. */
  data: Record<string, string>;
  /** When the person authenticated on the phone (`auth_time`), in ms since the epoch, when the token said. */
  authTime?: number;
  /** When this sign-in completed, in ms since the epoch. */
  signedInAt?: number;
}

/** Options of {@link createFetchLogin}. */
export interface FetchLoginOptions extends LoginFlowOptions {
  /** Where sessions live: a sealed-cookie store from `createCookieSession`, or a function giving the request's session. */
  session: CookieSessionStore | FetchSessionProvider;
  /** Where to go after sign-in when the login gave no `returnTo`. Default `'/'`. */
  successRedirect?: string;
  /** Session key of the signed-in person. Default `'user'`. */
  userKey?: string;
  /**
   * What to keep in the session for the signed-in person. Default `{ sub, data }`. Return a
   * JSON-friendly value; with a cookie session, keep it small.
   */
  toSessionUser?: (user: LoginUser) => unknown;
  /** Path of the login route, for the failure page's "try again" link. Default: none. */
  loginPath?: string;
  /** Show the diagnosis for the developer on failure pages. Default: when `NODE_ENV` is not `'production'`. */
  showDiagnosis?: boolean;
  /** The rules of signed-in sessions (lifetimes, sign-out everywhere), from `createSessionPolicy`. Default: the defaults. */
  sessions?: SessionPolicy;
}

/** Per-login options of {@link FetchLogin.login}. */
export interface FetchLoginStartOptions {
  /** FAPI 2.0: the message the person sees on the approval screen for this login (at most 100 characters). */
  authenticationContextMessage?: string;
  /** FAPI 2.0: the `authentication_context_type` sent beside the message for this login. */
  authenticationContextType?: string;
  /** Extra authorization parameters for this login (`ui_locales`, `prompt`, `login_hint`, ...); never one the client sets itself. */
  authorizationParams?: Readonly<Record<string, string>>;
}

/** The handler pair and a few helpers. */
export interface FetchLogin {
  /** The flow underneath. */
  readonly flow: LoginFlow;
  /**
   * GET login: starts a login (`?returnTo=/path` optional) and redirects to the service. In the
   * fapi2 profile the login is pushed first (PAR); `options.authenticationContextMessage` is
   * shown to the person on the approval screen (at most 100 characters).
   */
  login(request: Request, options?: FetchLoginStartOptions): Promise<Response>;
  /**
   * GET jwks: the app's public keys (`sig`, `enc`) as a JWKS for registration by `jwks_uri`
   * (`application/jwk-set+json`); 404 when the client speaks the base profile.
   */
  jwks(request?: Request): Response;
  /** GET callback: completes the login, regenerates the session, keeps the person and redirects; a failure page otherwise. */
  callback(request: Request): Promise<Response>;
  /**
   * The signed-in person in the request's session, or `undefined` (also when the policy has ended
   * the session). Neither extends nor clears it, having no response for a cookie; the guards do.
   * Rejects with `session_store_unavailable` when the sign-out store cannot be read.
   */
  user(request: Request): Promise<unknown>;
  /**
   * Signs out (the cookie session is cleared) and redirects to `redirectTo` (a same-site path,
   * default `'/'`). Route it as POST: a POST is refused only when it comes from another site; a
   * GET is also refused (403, `signout_fetch_metadata_missing`) without `Sec-Fetch-Site`.
   */
  logout(request: Request, redirectTo?: string): Promise<Response>;
  /**
   * Runs `handler` for a signed-in person and answers its response; otherwise a redirect to the
   * login route (`loginPath`, default `/auth/login`) with `returnTo`, or 401 JSON for an API
   * request (by `Accept`, or `api: true`). Ends sessions past `maxSessionAge` or `idleTimeout`.
   */
  requireSignIn(request: Request, handler: SignedInHandler, options?: AccessOptions): Promise<Response>;
  /** As {@link requireSignIn}, and the person must have authenticated within `seconds`, else a step-up login (`max_age`) starts. */
  requireRecentSignIn(
    request: Request,
    seconds: number,
    handler: SignedInHandler,
    options?: AccessOptions,
  ): Promise<Response>;
}

function isCookieStore(value: unknown): value is CookieSessionStore {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CookieSessionStore).load === 'function' &&
    typeof (value as CookieSessionStore).commit === 'function'
  );
}

/**
 * Creates the fetch-standard login handlers.
 *
 * ```ts
 * const auth = createFetchLogin({ client, session: createCookieSession({ secret }) });
 * app.get('/auth/login', (c) => auth.login(c.req.raw));
 * app.get('/auth/callback', (c) => auth.callback(c.req.raw));
 * ```
 * @throws TypeError naming the option when an option is missing or wrong.
 */
export function createFetchLogin(options: FetchLoginOptions): FetchLogin {
  const who = 'createFetchLogin';
  if (typeof options !== 'object' || options === null) {
    throw optionError(who, 'options', 'must be an object with a client and a session.');
  }
  checkOptionNames(options, 'createFetchLogin()');
  options = ownOptions(options);
  const app = resolveFetchLogin(options, who);
  const { flow } = app;
  const guards = createFetchGuards({
    policy: app.policy,
    userKey: app.userKey,
    loginPath: app.loginPath ?? DEFAULT_LOGIN_PATH,
    sessionOf: (request) => sessionOf(app, request),
    commit: (session, request, headers) => commit(app, session, request, headers),
    signInSession: (session) => signInSession(app, session),
    failurePage: (err) => failurePage(app, flow.report(err)),
  });
  const client = options.client as unknown as KeyPublisher & { profile?: unknown };
  return {
    flow,
    login: (request, startOptions) => login(app, request, startOptions),
    jwks: () => jwks(client),
    callback: (request) => callback(app, request),
    user: (request) => user(app, request),
    logout: (request, redirectTo) => logout(app, request, redirectTo),
    requireSignIn: guards.requireSignIn,
    requireRecentSignIn: guards.requireRecentSignIn,
  };
}

/** What the handlers share: the checked options, the flow and the session policy. */
type FetchApp = ReturnType<typeof resolveFetchLogin>;

/** Options resolution, the session: where it lives, and what of the person is kept in it. */
function sessionOptions(options: FetchLoginOptions, who: string) {
  const store = isCookieStore(options.session) ? options.session : undefined;
  const provide = typeof options.session === 'function' ? options.session : undefined;
  if (store === undefined && provide === undefined) {
    throw optionError(
      who,
      'session',
      'must be createCookieSession({ secret }) or a function (request) => session with get/set/delete.',
    );
  }
  const successRedirect = options.successRedirect ?? '/';
  if (safeReturnTo(successRedirect) === undefined)
    throw optionError(who, 'successRedirect', 'must be a same-site path, like "/account".');
  const userKey = options.userKey ?? 'user';
  if (typeof userKey !== 'string' || userKey === '')
    throw optionError(who, 'userKey', 'must be a non-empty string, like "user".');
  const toSessionUser =
    options.toSessionUser ??
    ((user: LoginUser): FetchSessionUser => ({
      sub: user.sub,
      data: user.data,
      ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
      signedInAt: user.signedInAt,
    }));
  if (typeof toSessionUser !== 'function')
    throw optionError(who, 'toSessionUser', 'must be a function (user) => value to keep.');
  return { store, provide, successRedirect, userKey, toSessionUser };
}

/** Options resolution: the session's, the pages', the flow's and the session policy's, in that order. */
function resolveFetchLogin(options: FetchLoginOptions, who: string) {
  const session = sessionOptions(options, who);
  const loginPath = options.loginPath === undefined ? undefined : safeReturnTo(options.loginPath);
  if (options.loginPath !== undefined && loginPath === undefined)
    throw optionError(who, 'loginPath', 'must be a same-site path, like "/auth/login".');
  const showDiagnosis = options.showDiagnosis ?? process.env.NODE_ENV !== 'production';
  const flow = buildLoginFlow(options, who);
  if (flow.sessionKey === session.userKey)
    throw optionError(who, 'userKey', `must differ from the flow's sessionKey ("${flow.sessionKey}").`);
  const policy = options.sessions ?? defaultSessionPolicy();
  if (typeof policy !== 'object' || policy === null || typeof policy.check !== 'function') {
    throw optionError(who, 'sessions', 'must be createSessionPolicy({ ... }).');
  }
  return { ...session, loginPath, showDiagnosis, flow, policy };
}

async function sessionOf(app: FetchApp, request: Request): Promise<FlowSession> {
  if (app.store !== undefined) return app.store.load(request);
  const session = await (app.provide as FetchSessionProvider)(request);
  if (!isFlowSession(session)) {
    throw new IdError('session_missing', 'The session function gave no session with get, set and delete.');
  }
  return session;
}

/** Adds the session cookie (when the store is ours and the session changed) to `headers`. */
async function commit(app: FetchApp, session: FlowSession, request: Request, headers: Headers): Promise<void> {
  if (app.store === undefined) return;
  const cookie = await app.store.commit(session as CookieFlowSession, request);
  if (cookie !== undefined) appendSessionCookie(headers, cookie);
}

function facts(app: FetchApp, request: Request): RequestFacts {
  const { store } = app;
  const url = new URL(request.url);
  const cookieHeader = request.headers.get('cookie');
  return {
    host: request.headers.get('host') ?? url.host,
    secure: url.protocol === 'https:',
    cookieHeaderPresent: cookieHeader !== null && cookieHeader !== '',
    ...(store === undefined ? {} : { sessionCookiePresent: readCookie(cookieHeader, store.cookieName) !== undefined }),
  };
}

function redirect(location: string, headers: Headers = new Headers()): Response {
  headers.set('location', location);
  headers.set('cache-control', 'no-store');
  return new Response(null, { status: 302, headers });
}

function failurePage(app: FetchApp, err: unknown): Response {
  const failure = classifyFailure(err);
  const idError = err instanceof IdError ? err : undefined;
  const diagnosis = app.showDiagnosis ? idError?.diagnosis : undefined;
  const html = renderFailurePage({
    status: failure.status,
    title: failure.serverSide ? 'Sign-in is unavailable' : 'Sign-in failed',
    message: failure.message,
    ...(app.loginPath === undefined ? {} : { retryHref: app.loginPath }),
    ...(idError?.reference === undefined ? {} : { reference: idError.reference }),
    ...(diagnosis === undefined
      ? {}
      : { developer: { code: diagnosis.code, cause: diagnosis.cause, fix: diagnosis.fix } }),
  });
  return new Response(html, { status: failure.status, headers: FAILURE_PAGE_HEADERS });
}

async function login(app: FetchApp, request: Request, startOptions: FetchLoginStartOptions = {}): Promise<Response> {
  try {
    const session = await sessionOf(app, request);
    const url = new URL(request.url);
    const returnTo = url.searchParams.get('returnTo') ?? undefined;
    const maxAge = stepUpMaxAge(url.searchParams.get('maxAge'));
    const message = startOptions.authenticationContextMessage;
    const { redirectUrl } = await app.flow.start(session, {
      ...(returnTo === undefined ? {} : { returnTo }),
      ...(maxAge === undefined ? {} : { maxAge }),
      ...(message === undefined ? {} : { authenticationContextMessage: message }),
      ...(startOptions.authenticationContextType === undefined
        ? {}
        : { authenticationContextType: startOptions.authenticationContextType }),
      ...(startOptions.authorizationParams === undefined
        ? {}
        : { authorizationParams: startOptions.authorizationParams }),
      request: facts(app, request),
    });
    const headers = new Headers();
    await commit(app, session, request, headers);
    return redirect(redirectUrl, headers);
  } catch (err) {
    return failurePage(app, app.flow.report(err, facts(app, request)));
  }
}

async function callback(app: FetchApp, request: Request): Promise<Response> {
  const { flow, policy } = app;
  const requestFacts = facts(app, request);
  let session: FlowSession;
  try {
    session = await sessionOf(app, request);
  } catch (err) {
    return failurePage(app, flow.report(err, requestFacts));
  }
  const query = Object.fromEntries(new URL(request.url).searchParams);
  let result: CompleteResult;
  const headers = new Headers();
  // Read before the sign-in replaces the session: a step-up is judged against it.
  const prior = priorSignIn(policy, session);
  try {
    result = await flow.complete(withoutRegeneration(session), query, requestFacts);
  } catch (err) {
    return refusedCallback(app, session, request, query, err, headers);
  }
  try {
    const finished = await finishSignIn(
      { flow, policy },
      signInSession(app, session),
      { ...result.user, ...(result.maxAge === undefined ? {} : { maxAge: result.maxAge }) },
      prior,
      (fresh) => fresh.set(app.userKey, app.toSessionUser(result.user)),
    );
    await commit(app, session, request, headers);
    if (finished.kind === 'signed_in') return redirect(safeReturnTo(result.returnTo) ?? app.successRedirect, headers);
    for (const [name, value] of Object.entries(FAILURE_PAGE_HEADERS)) headers.set(name, value);
    const retry =
      finished.outcome === 'other_person' ? (app.loginPath ?? DEFAULT_LOGIN_PATH) : (result.returnTo ?? '/');
    return new Response(stepUpRefusedPage(finished.outcome, retry), { status: 403, headers });
  } catch (err) {
    return failurePage(app, storeFailure({ flow, policy }, err, 'The session could not be saved.'));
  }
}

/** A callback the flow refused: the pending login's removal is kept; a signed-in replay (back button) is sent on. */
async function refusedCallback(
  app: FetchApp,
  session: FlowSession,
  request: Request,
  query: Record<string, string>,
  err: unknown,
  headers: Headers,
): Promise<Response> {
  try {
    await commit(app, session, request, headers);
  } catch {
    // A session too large to write fails the same way below; the failure page is what matters.
  }
  const signedInReplay =
    err instanceof IdError && err.code === 'state_mismatch' && session.get(app.userKey) !== undefined;
  if (signedInReplay) {
    const done = app.flow.completedLogin(query.state);
    return redirect(safeReturnTo(done?.returnTo) ?? app.successRedirect, headers);
  }
  const response = failurePage(app, err);
  for (const cookie of headers.getSetCookie()) response.headers.append('set-cookie', cookie);
  return response;
}

/** The request's session as the sign-in core speaks to it; it is committed to the cookie afterwards. */
function signInSession(app: FetchApp, session: FlowSession): SignInSession {
  return {
    get: (key) => session.get(key),
    set: (key, value) => session.set(key, value),
    delete: (key) => session.delete(key),
    regenerate: async () => {
      await session.regenerate?.();
    },
    save: async () => undefined,
    destroy: async () => end(app, session),
  };
}

/** The person, read as the guards read it: a session the policy has ended (or never started) has nobody. */
async function user(app: FetchApp, request: Request): Promise<unknown> {
  const session = await sessionOf(app, request);
  let result: SessionCheck;
  try {
    // A read-only view: reading the person does not write "last seen" (only guarded routes do).
    result = await app.policy.check(readOnlySession(session));
  } catch (err) {
    throw new IdError('session_store_unavailable', 'The sign-out store could not be read.', { cause: err });
  }
  return result.signedIn ? session.get(app.userKey) : undefined;
}

async function logout(app: FetchApp, request: Request, redirectTo = '/'): Promise<Response> {
  const h = request.headers;
  const refusal = crossSiteRefusal({
    fetchSite: h.get('sec-fetch-site') ?? undefined,
    origin: h.get('origin') ?? undefined,
    host: h.get('host') ?? new URL(request.url).host,
    protocol: new URL(request.url).protocol,
    method: request.method,
  });
  if (refusal !== undefined) {
    return new Response(renderFailurePage(signOutRefusedPage(refusal, app.showDiagnosis)), {
      status: 403,
      headers: FAILURE_PAGE_HEADERS,
    });
  }
  const session = await sessionOf(app, request);
  const headers = new Headers();
  end(app, session);
  app.policy.signedOut();
  await commit(app, session, request, headers);
  return redirect(safeReturnTo(redirectTo) ?? '/', headers);
}

/** Ends the session: a cookie session is destroyed; an app-supplied one loses the person and the sign-in record. */
function end(app: FetchApp, session: FlowSession): void {
  if (app.store !== undefined) (session as CookieFlowSession).destroy();
  else {
    session.delete(app.userKey);
    session.delete(app.policy.recordKey);
  }
}

function jwks(client: KeyPublisher & { profile?: unknown }): Response {
  // In the base profile publicJwks() throws: there is nothing to publish, so the route is absent.
  const body = client.profile === 'fapi2' ? jwksBody(client) : undefined;
  if (body === undefined)
    return new Response('Not found', { status: 404, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  return new Response(body, { status: 200, headers: JWKS_HEADERS });
}
