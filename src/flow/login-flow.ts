/**
 * The framework-neutral login: `begin`/`start` keep a pending login in the session, `complete`
 * takes it out once on the callback and redeems it. Adapters only translate requests and outcomes.
 */
import { hash } from 'node:crypto';
import type {
  AuthorizationUrlParams,
  AuthorizationUrlResult,
  CallbackParams,
  CallbackResult,
  IdTokenClaims,
  PushedAuthorizationParams,
  PushedAuthorizationResult,
  UserinfoParams,
  UserinfoResult,
} from '../client/types.js';
import type { DpopKey, StoredDpopKey } from '../client/dpop.js';
import { checkContextMessage } from '../client/fapi-config.js';
import { checkAuthorizationParams, checkContextType } from '../client/client-options.js';
import type { Clock } from '../clock.js';
import { knownOAuthError } from '../client/oauth-error-codes.js';
import { IdError } from '../errors.js';
import { checkLogger, createLog, LOG_EVENTS, newReference, type Log, type Logger } from '../log.js';
import { classifyFailure } from './failure.js';
import {
  diagnoseCallback,
  diagnoseClockSkew,
  diagnoseCredentials,
  diagnoseExpired,
  diagnoseProvider,
  SESSION_MIDDLEWARE_MISSING,
  type RequestFacts,
} from './diagnose.js';
import { LoginLedger } from './login-ledger.js';
import { probeService, serviceNotAnswering, shouldProbe } from './provider-probe.js';
import { generateNonce, generatePkcePair, generateState } from '../pkce.js';
import { requestedAttributes, scopeList } from './attributes.js';
import { checkAbsoluteUrl, checkClock, checkInteger, checkMilliseconds, checkScope, optionError } from './options.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import {
  addPendingLogin,
  otherCallbacks,
  countPendingLogins,
  isBoundTo,
  isExpired,
  MAX_STATE_LENGTH,
  pendingStates,
  takePendingLogin,
  type LoginBinding,
  type PendingLogin,
} from './pending-logins.js';
import { processReplayStore, type ReplayStore } from './replay-store.js';
import { safeReturnTo } from './return-to.js';
import type { FlowSession } from './session.js';
import { inLoginCallback, inSpan, SPAN, serviceAttributes } from '../trace.js';

/** Prefix of the default session key; the key is `nd-id:<client id>` when the client id is known. */
export const DEFAULT_SESSION_KEY = 'nd-id';
/** Default scope requested. */
export const DEFAULT_FLOW_SCOPE = 'openid profile.name';
/** Default number of pending logins (tabs) kept per session. */
export const DEFAULT_MAX_PENDING_LOGINS = 5;
/** Default time a started login may take before its callback is refused: 10 minutes, in ms. */
export const DEFAULT_LOGIN_TTL_MS = 10 * 60 * 1000;

/** What the flow needs from a client; an `IdClient` is one. */
export interface LoginFlowClient {
  /** Builds the URL the browser is sent to (no network call). */
  authorizationUrl(params: AuthorizationUrlParams): AuthorizationUrlResult;
  /** Redeems the code and validates the ID token. */
  callback(params: CallbackParams): Promise<CallbackResult>;
  /** Reads and decrypts the person's attributes. */
  userinfo(params: UserinfoParams): Promise<UserinfoResult>;
  /** The service's issuer; pending logins are bound to it. */
  readonly issuer?: string;
  /** The app's client id; pending logins are bound to it, and the default session key names it. */
  readonly clientId?: string;
  /** `'fapi2'`: logins are pushed (PAR) and DPoP-bound, through the methods below (an `IdClient` has them). */
  readonly profile?: 'base' | 'fapi2';
  /** Checks the callback's `iss` (RFC 9207) before the rest of it is trusted. */
  checkAuthorizationResponse?(query: Record<string, unknown>): Promise<void>;
  /** FAPI 2.0: pushes the login's parameters and gives the URL with only `client_id` and `request_uri`. */
  pushAuthorizationRequest?(params: PushedAuthorizationParams): Promise<PushedAuthorizationResult>;
  /** FAPI 2.0: the DPoP key of a new login, and what to keep of it. */
  dpopKeyForLogin?(): Promise<{ key: DpopKey; stored?: StoredDpopKey }>;
  /** FAPI 2.0: the DPoP key of a login back from what was kept. */
  restoreDpopKey?(stored: StoredDpopKey | undefined): Promise<DpopKey>;
  /** Reads the provider's discovery document when it is not cached (before a login is started; free while cached). */
  discover?(): Promise<void>;
  /** Whether the provider publishes a userinfo endpoint; without one, a sign-in completes from the ID token alone. */
  hasUserinfoEndpoint?(): Promise<boolean>;
}

/** Options of {@link createLoginFlow}. */
export interface LoginFlowOptions {
  /** The protocol client, e.g. `new IdClient({ ... })`. */
  client: LoginFlowClient;
  /** The registered callback URL, absolute. Default: the client's own `redirectUri`. */
  redirectUri?: string;
  /** Scopes requested, space-separated or an array; must include `openid`. Default `'openid profile.name'`. */
  scope?: string | string[];
  /** Session key under which pending logins are kept. Default `'nd-id:<clientId>'` (or `'nd-id'` when the client has no `clientId`). */
  sessionKey?: string;
  /** Most logins a session may have started and not finished (one per tab); the oldest is evicted first. Default 5. */
  maxPendingLogins?: number;
  /** How long a started login stays valid, **in milliseconds**. Default 600 000 (10 minutes). */
  loginTtl?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: Clock;
  /**
   * Where redeemed logins are remembered, so a callback completes at most once, also when replayed
   * concurrently. Default: in this process's memory; give a shared store (`createRedisReplayStore`)
   * when several instances serve the app.
   */
  replayStore?: ReplayStore;
  /**
   * Where to log (pino, console, Nest's Logger: anything with debug/info/warn/error). Default:
   * server-side failures to `console.error`, once per cause per minute; `DEBUG=passport-nd-id*` for the rest.
   */
  logger?: Logger;
  /** For diagnoses only: the ID-token clock tolerance of the client, in seconds. */
  clockTolerance?: number;
}

/** Per-login options of {@link LoginFlow.begin}. */
export interface BeginOptions {
  /** Same-site path to return to after login; anything unsafe is ignored. */
  returnTo?: string;
  /** Scopes for this login only; must include `openid`. */
  scope?: string | string[];
  /** What the adapter knows of the request (its host), to explain a callback that comes back elsewhere. */
  request?: RequestFacts;
  /**
   * Step-up: ask the service for a sign-in at most this many seconds old (`max_age`); the ID
   * token then carries `auth_time`, and {@link CompleteResult.maxAge} says it was asked.
   */
  maxAge?: number;
  /**
   * FAPI 2.0: the message the person sees on the approval screen for this login (at most 100
   * characters), e.g. "Sign in to pay invoice 2041". Default: the client's `authenticationContextMessage`.
   */
  authenticationContextMessage?: string;
  /** FAPI 2.0: the `authentication_context_type` sent beside the message, e.g. `APP_AUTHENTICATION_DEFAULT`. Default: the client's `authenticationContextType`. */
  authenticationContextType?: string;
  /**
   * Extra authorization parameters for this login (`acr_values`, `ui_locales`, `prompt`,
   * `login_hint`, a provider's own); they can never replace PKCE, `state`, `nonce`,
   * `redirect_uri`, `client_id` or `dpop_jkt` (refused with a TypeError).
   */
  authorizationParams?: Readonly<Record<string, string>>;
}

/** What {@link LoginFlow.begin} gives back. */
export interface BeginResult {
  /** Send the browser here (302). */
  redirectUrl: string;
  /** The state of this login (already kept in the session). */
  state: string;
}

/** The signed-in person. */
export interface LoginUser {
  /** The person's identifier for this client (pairwise). */
  sub: string;
  /**
   * The requested attributes the service returned, keyed by scope name, e.g. `{ 'profile.name': '...' }`.
   * Own keys only. Empty when the sign-in came from the ID token alone or from a provider's standard userinfo.
   */
  data: Record<string, string>;
  /** The validated ID token claims. */
  claims: IdTokenClaims;
  /** A provider's standard userinfo claims (its `sub` is the ID token's), when the login read one. */
  userinfo?: Record<string, unknown>;
  /** When the person authenticated on the phone (the ID token's `auth_time`), in ms since the epoch; absent when the token has none. */
  authTime?: number;
  /** When this sign-in completed (the session started), in ms since the epoch. */
  signedInAt: number;
}

/** What {@link LoginFlow.complete} resolves to. */
export interface CompleteResult {
  /** The signed-in person. */
  user: LoginUser;
  /** The safe return path given when the login started, if any. */
  returnTo?: string;
  /** The `max_age` this login was started with (a step-up), in seconds. */
  maxAge?: number;
}

/**
 * Why a callback's `state` was refused (`IdError.reason` of `state_mismatch`):
 * `state_missing` (no usable state in the callback), `no_pending_logins` (this session started
 * none), `unknown_state` (it started others, not this one), `binding_mismatch` (started for
 * another issuer, client or callback URL), `already_redeemed` (this login is being or was completed).
 */
export type StateMismatchReason =
  | 'state_missing'
  | 'no_pending_logins'
  | 'unknown_state'
  | 'binding_mismatch'
  | 'already_redeemed';

/** Restores pending logins captured by {@link LoginFlow.keepPendingLogins} into a (new) session. */
export type RestorePendingLogins = (session: FlowSession) => void;

/** The framework-neutral login flow. */
export interface LoginFlow {
  /** Session key under which pending logins are kept. */
  readonly sessionKey: string;
  /** Most pending logins kept per session. */
  readonly maxPendingLogins: number;
  /** Lifetime of a pending login, in ms. */
  readonly loginTtl: number;
  /** The issuer, client id and callback URL every login of this flow is bound to. */
  readonly binding: Readonly<LoginBinding>;
  /**
   * Starts a login: keeps its secrets in `session` and gives the URL to redirect to. Base
   * profile only (no network call); {@link LoginFlow.start} works in both.
   * @throws TypeError when `options.scope` is wrong, or the client speaks the fapi2 profile.
   */
  begin(session: FlowSession, options?: BeginOptions): BeginResult;
  /**
   * Starts a login in either profile: with a fapi2 client, makes the login's DPoP key, pushes the
   * parameters (PAR) and keeps the login (its DPoP key included) in `session`; otherwise as
   * {@link LoginFlow.begin}. Adapters use this.
   * @throws TypeError when an option is wrong; IdError when the service refuses the pushed request.
   */
  start(session: FlowSession, options?: BeginOptions): Promise<BeginResult>;
  /**
   * Completes a login from the callback's query (`code`, `state`, or `error`). Rejects with an
   * {@link IdError}; see `classifyFailure` for its status and sentence. When `session` has
   * `regenerate`, it is called after success and the other tabs' pending logins are carried over.
   * `request` may be a function: it is then called only when the login fails, to diagnose it.
   */
  complete(
    session: FlowSession,
    callbackQuery: Record<string, unknown>,
    request?: RequestFacts | (() => RequestFacts),
  ): Promise<CompleteResult>;
  /**
   * Gives a failed login's `err` a `reference` and, when known, a `diagnosis`, logs it and returns
   * it. `complete` does this itself; adapters call it for failures they find themselves.
   */
  report<E>(err: E, request?: RequestFacts): E;
  /** The flow's log, for adapters that log wiring problems of their own. */
  readonly log: Log;
  /**
   * Captures the pending logins of `session` (other tabs), for an adapter whose framework
   * regenerates the session at sign-in: call before, and call the result with the new session after.
   */
  keepPendingLogins(session: FlowSession): RestorePendingLogins;
  /**
   * Where a login this process completed (by the callback's `state`) was to return to, or
   * undefined; for sending on a signed-in person who replays a callback (back button).
   */
  completedLogin(state: unknown): { returnTo?: string } | undefined;
}

const STATE_MISMATCH_MESSAGE = 'This sign-in was not started in this browser, or was already used. Please start again.';

function stateMismatch(reason: StateMismatchReason): IdError {
  return new IdError('state_mismatch', STATE_MISMATCH_MESSAGE, { reason });
}

function firstString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The error for `?error=...`: `access_denied`, or `provider_error` with the service's code and description as cause. */
function providerError(query: Record<string, unknown>): IdError {
  const error = firstString(query.error) ?? '';
  if (error === 'access_denied') return new IdError('access_denied', 'Sign-in was cancelled or refused in the app.');
  // RFC 6749 error codes are printable ASCII; anything else is not echoed.
  const providerCode = /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(error) ? error : 'unknown_error';
  const rawDescription = firstString(query.error_description);
  const description =
    rawDescription === undefined ? undefined : rawDescription.replace(/[^\x20-\x7e]/g, '').slice(0, 200);
  return new IdError('provider_error', `The identity service could not complete the sign-in (${providerCode}).`, {
    cause: { error: providerCode, ...(description === undefined ? {} : { error_description: description }) },
  });
}

/** The service's OAuth error code behind a refused call (`invalid_client`, …): registered codes only, never its description. */
function oauthErrorOf(err: IdError): { oauthError?: string } {
  const error = knownOAuthError((err.cause as { error?: unknown } | null | undefined)?.error);
  return error === undefined ? {} : { oauthError: error };
}

/** A login's key in the replay store and the ledger: a hash, short and revealing nothing of the login. */
function loginKey(binding: LoginBinding, state: string): string {
  return hash('sha256', `${binding.issuer}\n${binding.clientId}\n${binding.redirectUri}\n${state}`, 'base64url');
}

/** The FAPI 2.0 methods of a fapi2 client, bound to it. */
type FapiMethods = NonNullable<ReturnType<typeof fapiMethods>>;

/** What every step of one flow shares: its options, resolved once, and its state. */
interface FlowContext {
  readonly options: LoginFlowOptions;
  readonly who: string;
  readonly client: LoginFlowClient;
  readonly fapi: FapiMethods | undefined;
  readonly discover: (() => Promise<void>) | undefined;
  readonly hasUserinfoEndpoint: (() => Promise<boolean>) | undefined;
  readonly clock: Clock;
  readonly defaultScope: string | string[];
  readonly redirectParam: { redirectUri?: string };
  readonly sessionKey: string;
  readonly maxPendingLogins: number;
  readonly loginTtl: number;
  readonly replayStore: ReplayStore;
  readonly binding: LoginBinding;
  readonly log: Log;
  readonly callbackHost: string | undefined;
  readonly ledger: LoginLedger;
  /** In development, until the service has answered once: whether it answers (see provider-probe.ts). */
  serviceAnswered: boolean;
  /** Whether a shared session key was logged (once per flow). */
  sharedKeyLogged: boolean;
}

/** The client of `options`, checked to be one. */
function flowClientOf(options: LoginFlowOptions, who: string): LoginFlowClient {
  if (typeof options !== 'object' || options === null) {
    throw optionError(who, 'options', 'must be an object with a client (new IdClient({ ... })).');
  }
  const client = options.client as Partial<LoginFlowClient> | null | undefined;
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof client.authorizationUrl !== 'function' ||
    typeof client.callback !== 'function' ||
    typeof client.userinfo !== 'function'
  ) {
    throw optionError(who, 'client', 'must be an IdClient (new IdClient({ ... })).');
  }
  return options.client;
}

/** The session key of the flow: the option, or `nd-id:<client id>`. */
function sessionKeyOf(options: LoginFlowOptions, clientId: string, who: string): string {
  const sessionKey =
    options.sessionKey ?? (clientId === '' ? DEFAULT_SESSION_KEY : `${DEFAULT_SESSION_KEY}:${clientId}`);
  if (typeof sessionKey !== 'string' || sessionKey === '' || sessionKey === 'passport' || sessionKey === 'cookie') {
    throw optionError(
      who,
      'sessionKey',
      'must be a non-empty string that no other code uses in the session (not "passport" or "cookie").',
    );
  }
  return sessionKey;
}

/** The replay store of the flow: the option, or this process's memory. */
function replayStoreOf(options: LoginFlowOptions, who: string): ReplayStore {
  const replayStore = options.replayStore ?? processReplayStore;
  if (typeof replayStore !== 'object' || replayStore === null || typeof replayStore.consume !== 'function') {
    throw optionError(
      who,
      'replayStore',
      'must have a consume(key, ttlMs) method resolving to true the first time (see createRedisReplayStore).',
    );
  }
  return replayStore;
}

/** Options resolution: every option checked, in order, and what the steps share. */
function resolveFlow(options: LoginFlowOptions, who: string): FlowContext {
  const flowClient = flowClientOf(options, who);
  const fapi = fapiMethods(flowClient, who);
  const discover = typeof flowClient.discover === 'function' ? flowClient.discover.bind(flowClient) : undefined;
  const hasUserinfoEndpoint =
    typeof flowClient.hasUserinfoEndpoint === 'function' ? flowClient.hasUserinfoEndpoint.bind(flowClient) : undefined;
  const clock = checkClock(options.clock, who);
  const redirectUri =
    options.redirectUri === undefined ? undefined : checkAbsoluteUrl(options.redirectUri, who, 'redirectUri');
  const defaultScope = options.scope === undefined ? DEFAULT_FLOW_SCOPE : checkScope(options.scope, who, 'scope');
  const clientId = typeof flowClient.clientId === 'string' ? flowClient.clientId : '';
  const sessionKey = sessionKeyOf(options, clientId, who);
  const maxPendingLogins = checkInteger(
    options.maxPendingLogins ?? DEFAULT_MAX_PENDING_LOGINS,
    1,
    100,
    who,
    'maxPendingLogins',
    'must be a whole number from 1 to 100 (how many tabs may log in at once).',
  );
  const loginTtl = checkMilliseconds(options.loginTtl ?? DEFAULT_LOGIN_TTL_MS, who, 'loginTtl', '10 minutes is 600000');
  const replayStore = replayStoreOf(options, who);
  const clientRedirect = (flowClient as { redirectUri?: unknown }).redirectUri;
  const binding: LoginBinding = Object.freeze({
    issuer: typeof flowClient.issuer === 'string' ? flowClient.issuer : '',
    clientId,
    redirectUri: redirectUri ?? (typeof clientRedirect === 'string' ? clientRedirect : ''),
  });
  return {
    options,
    who,
    client: flowClient,
    fapi,
    discover,
    hasUserinfoEndpoint,
    clock,
    defaultScope,
    redirectParam: redirectUri === undefined ? {} : { redirectUri },
    sessionKey,
    maxPendingLogins,
    loginTtl,
    replayStore,
    binding,
    log: createLog(checkLogger(options.logger, who), 'flow'),
    callbackHost: binding.redirectUri === '' ? undefined : new URL(binding.redirectUri).host,
    ledger: new LoginLedger(),
    serviceAnswered: false,
    sharedKeyLogged: false,
  };
}

/** Builds a flow; `who` names the caller in option errors. Adapters use it; apps call {@link createLoginFlow}. */
export function buildLoginFlow(options: LoginFlowOptions, who: string): LoginFlow {
  const flow = resolveFlow(options, who);
  const { sessionKey, maxPendingLogins, loginTtl, binding, log, ledger } = flow;
  // Each entry point is one span; the client's steps are its children.
  const traced = serviceAttributes(flow.client.issuer, flow.client.profile ?? 'base');
  return {
    sessionKey,
    maxPendingLogins,
    loginTtl,
    binding,
    log,
    begin: (session, beginOptions) => begin(flow, session, beginOptions),
    start: (session, beginOptions) => inSpan(SPAN.loginStart, traced, () => start(flow, session, beginOptions)),
    complete: (session, query, request) => inLoginCallback(traced, () => complete(flow, session, query, request)),
    keepPendingLogins: (session) => keepPendingLogins(flow, session),
    completedLogin(state) {
      if (typeof state !== 'string' || state === '' || state.length > MAX_STATE_LENGTH) return undefined;
      const record = ledger.lookup(loginKey(binding, state));
      if (record?.outcome !== 'completed') return undefined;
      return record.returnTo === undefined ? {} : { returnTo: record.returnTo };
    },
    report: (err, request) => report(flow, err, request),
  };
}

/** Start, first step: the values of a new login and its options, checked. */
function prepare(flow: FlowContext, beginOptions: BeginOptions) {
  const { who } = flow;
  const scope =
    beginOptions.scope === undefined ? flow.defaultScope : checkScope(beginOptions.scope, who, 'scope of this login');
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const state = generateState();
  const nonce = generateNonce();
  const maxAge =
    beginOptions.maxAge === undefined
      ? undefined
      : checkInteger(
          beginOptions.maxAge,
          0,
          1e9,
          who,
          'maxAge',
          'must be a whole number of seconds (the step-up window), like 300.',
        );
  const extras = beginOptions.authorizationParams;
  if (extras !== undefined) checkAuthorizationParams(extras, `${who}: authorizationParams`);
  const params: AuthorizationUrlParams = {
    state,
    scope,
    nonce,
    codeChallenge,
    ...flow.redirectParam,
    ...(maxAge === undefined ? {} : { maxAge }),
    ...(extras === undefined ? {} : { authorizationParams: extras }),
  };
  return { scope, codeVerifier, state, nonce, maxAge, params };
}

/** Start, last step: keeps the started login in the session and the ledger. */
function keep(
  flow: FlowContext,
  session: FlowSession,
  beginOptions: BeginOptions,
  login: ReturnType<typeof prepare>,
  sentNonce: string | undefined,
  dpop: StoredDpopKey | undefined,
): void {
  const { binding, ledger, log, maxPendingLogins } = flow;
  const { state, maxAge } = login;
  const returnTo = safeReturnTo(beginOptions.returnTo);
  const pending: PendingLogin = {
    codeVerifier: login.codeVerifier,
    nonce: sentNonce ?? login.nonce,
    createdAt: flow.clock(),
    scope: scopeList(login.scope).join(' '),
    ...binding,
    ...(returnTo === undefined ? {} : { returnTo }),
    ...(maxAge === undefined ? {} : { maxAge }),
    ...(dpop === undefined ? {} : { dpop }),
  };
  if (!flow.sharedKeyLogged) noteSharedKey(flow, session, pending.createdAt);
  const evicted = addPendingLogin(session, flow.sessionKey, state, pending, {
    max: maxPendingLogins,
    ttl: flow.loginTtl,
    now: pending.createdAt,
  });
  ledger.started(loginKey(binding, state), beginOptions.request?.host ?? '', pending.createdAt, returnTo);
  for (const old of evicted) ledger.settle(loginKey(binding, old), 'evicted', pending.createdAt);
  if (log.debugEnabled)
    log.write(
      'debug',
      { event: LOG_EVENTS.loginStarted, tabs: evicted.length > 0 ? maxPendingLogins : undefined },
      'Login started',
    );
}

/**
 * Logs once when this session holds live logins under the flow's key for another callback URL:
 * two strategies sharing a `sessionKey` evict each other's logins. Read from the session itself,
 * so nothing is kept across flows.
 */
function noteSharedKey(flow: FlowContext, session: FlowSession, now: number): void {
  const { sessionKey, binding } = flow;
  const others = otherCallbacks(session, sessionKey, binding.redirectUri, { ttl: flow.loginTtl, now });
  if (others.length === 0) return;
  flow.sharedKeyLogged = true;
  flow.log.write(
    'warn',
    {
      event: LOG_EVENTS.wiringProblem,
      code: 'session_key_shared',
      sessionKey,
      callbackURLs: [binding.redirectUri, ...others].join(' '),
    },
    `This session holds logins under sessionKey "${sessionKey}" for another callbackURL (${others.join(', ')}; this one is ${binding.redirectUri}): two strategies sharing a sessionKey evict each other's logins. Give each strategy its own sessionKey.`,
  );
}

/** Start in the base profile, without a network call. */
function begin(flow: FlowContext, session: FlowSession, beginOptions: BeginOptions = {}): BeginResult {
  const { who } = flow;
  if (flow.fapi)
    throw optionError(
      who,
      'begin()',
      'cannot start a fapi2 login (its parameters are pushed first, a network call): use await flow.start(session, options).',
    );
  for (const name of ['authenticationContextMessage', 'authenticationContextType'] as const) {
    if (beginOptions[name] !== undefined) {
      throw optionError(
        who,
        name,
        "is sent only in the fapi2 profile; construct the IdClient with profile: 'fapi2', or remove it.",
      );
    }
  }
  const login = prepare(flow, beginOptions);
  const result = flow.client.authorizationUrl(login.params);
  keep(flow, session, beginOptions, login, result.nonce, undefined);
  return { redirectUrl: result.url, state: login.state };
}

/** Start, in either profile. */
function start(flow: FlowContext, session: FlowSession, beginOptions: BeginOptions = {}): Promise<BeginResult> {
  return flow.fapi ? startFapi(flow, flow.fapi, session, beginOptions) : startBase(flow, session, beginOptions);
}

/** Start in the base profile: the discovery document read (cached), and in development the service probed once. */
async function startBase(flow: FlowContext, session: FlowSession, beginOptions: BeginOptions): Promise<BeginResult> {
  const { discover } = flow;
  if (discover !== undefined) {
    // Cached after the first login: no request. A provider whose document cannot be used is never the person's doing.
    try {
      await discover();
    } catch (err) {
      throw report(flow, err, beginOptions.request);
    }
  }
  const started = begin(flow, session, beginOptions);
  const serviceUrl = flow.serviceAnswered ? undefined : new URL(started.redirectUrl);
  if (serviceUrl === undefined || !shouldProbe(serviceUrl)) return started;
  const problem = await probeService(serviceUrl);
  if (problem !== undefined) throw report(flow, serviceNotAnswering(serviceUrl, problem), beginOptions.request);
  flow.serviceAnswered = true;
  return started;
}

/** Start in the fapi2 profile: the login's DPoP key made and its parameters pushed (PAR). */
async function startFapi(
  flow: FlowContext,
  fapi: FapiMethods,
  session: FlowSession,
  beginOptions: BeginOptions,
): Promise<BeginResult> {
  const { who } = flow;
  const message =
    beginOptions.authenticationContextMessage === undefined
      ? undefined
      : checkContextMessage(beginOptions.authenticationContextMessage, `${who}: authenticationContextMessage`);
  const contextType =
    beginOptions.authenticationContextType === undefined
      ? undefined
      : checkContextType(beginOptions.authenticationContextType, `${who}: authenticationContextType`);
  const login = prepare(flow, beginOptions);
  let result: PushedAuthorizationResult;
  let dpop: Awaited<ReturnType<typeof fapi.dpopKeyForLogin>>;
  try {
    dpop = await fapi.dpopKeyForLogin();
    result = await fapi.pushAuthorizationRequest({
      ...login.params,
      dpopKey: dpop.key,
      ...(message === undefined ? {} : { authenticationContextMessage: message }),
      ...(contextType === undefined ? {} : { authenticationContextType: contextType }),
    });
  } catch (err) {
    // A refused push is never the person's doing: logged with a reference like a failed callback.
    throw report(flow, err, beginOptions.request);
  }
  keep(flow, session, beginOptions, login, result.nonce, dpop.stored);
  return { redirectUrl: result.url, state: login.state };
}

function keepPendingLogins(flow: FlowContext, session: FlowSession): RestorePendingLogins {
  const { sessionKey } = flow;
  const kept: unknown = session.get(sessionKey);
  return (target) => {
    if (kept !== undefined) target.set(sessionKey, kept);
  };
}

/** What `complete` learnt before it failed, for the diagnosis. */
interface Attempt {
  state?: string;
  pendingCount?: number;
  startedAt?: number;
  consumed?: boolean;
  /** The login's key (see loginKey), once it was consumed. */
  key?: string;
}

/** The outcome of a failure: a reference, a diagnosis when one is known, and a log line. */
function report<E>(flow: FlowContext, err: E, request: RequestFacts = {}, attempt: Attempt = {}): E {
  if (!(err instanceof IdError)) {
    flow.log.write(
      'error',
      { event: LOG_EVENTS.loginError, code: 'unexpected', reference: newReference() },
      'Sign-in failed with an unexpected error',
    );
    return err;
  }
  if (err.reference !== undefined) return err; // reported already
  err.reference = newReference();
  diagnose(flow, err, request, attempt);
  logFailure(flow, err);
  return err;
}

/** Gives `err` the diagnosis of what most likely went wrong, when one is known. */
function diagnose(flow: FlowContext, err: IdError, request: RequestFacts, attempt: Attempt): void {
  const { loginTtl } = flow;
  const now = flow.clock();
  if (err.code === 'state_mismatch') {
    err.diagnosis = diagnoseCallback({
      hasState: err.reason !== 'state_missing',
      cookieHeaderPresent: request.cookieHeaderPresent ?? false,
      sessionCookiePresent: request.sessionCookiePresent,
      sessionNotInStore: request.sessionNotInStore,
      cookie: request.cookie,
      secure: request.secure ?? false,
      forwardedProto: request.forwardedProto,
      host: request.host ?? '',
      callbackHost: flow.callbackHost,
      pendingForThisClient: attempt.pendingCount ?? 0,
      pendingForOtherClients: 0,
      stateBoundElsewhere: err.reason === 'binding_mismatch',
      ledger: attempt.state === undefined ? undefined : flow.ledger.lookup(loginKey(flow.binding, attempt.state)),
      loginTtl,
      sessionKey: flow.sessionKey,
      now,
    });
  } else if (err.code === 'session_missing') {
    err.diagnosis = { ...SESSION_MIDDLEWARE_MISSING };
  } else if (err.code === 'login_expired' && attempt.startedAt !== undefined) {
    err.diagnosis = diagnoseExpired(now - attempt.startedAt, loginTtl);
  } else if (
    err.code === 'id_token_expired' ||
    err.code === 'id_token_issued_in_future' ||
    err.code === 'id_token_not_yet_valid'
  ) {
    err.diagnosis = diagnoseClockSkew(err.clockSkewMs, flow.options.clockTolerance, err.code);
  } else {
    const credentials =
      diagnoseCredentials(err.code, oauthErrorOf(err).oauthError, flow.fapi !== undefined) ??
      diagnoseProvider(err.code, err.reason);
    if (credentials !== undefined) err.diagnosis = credentials;
  }
}

/** Logs a reported failure: an error when it is the server's, a warning when diagnosed, else debug. */
function logFailure(flow: FlowContext, err: IdError): void {
  const { log } = flow;
  const failure = classifyFailure(err);
  const event = {
    event: failure.serverSide
      ? LOG_EVENTS.loginError
      : err.diagnosis !== undefined
        ? LOG_EVENTS.callbackDiagnosed
        : LOG_EVENTS.loginRefused,
    code: err.code,
    reference: err.reference,
    status: failure.status,
    ...(err.reason === undefined ? {} : { reason: err.reason }),
    ...(err.status === undefined ? {} : { providerStatus: err.status }),
    ...oauthErrorOf(err),
    ...(err.diagnosis === undefined
      ? {}
      : { diagnosis: err.diagnosis.code, cause: err.diagnosis.cause, fix: err.diagnosis.fix }),
  };
  if (failure.serverSide) log.write('error', event, err.message);
  else if (err.diagnosis !== undefined) log.write('warn', event, err.diagnosis.cause);
  else log.write('debug', event, err.message);
}

async function complete(
  flow: FlowContext,
  session: FlowSession,
  query: Record<string, unknown>,
  request?: RequestFacts | (() => RequestFacts),
): Promise<CompleteResult> {
  const attempt: Attempt = {};
  try {
    return await redeem(flow, session, query, attempt);
  } catch (err) {
    if (attempt.consumed === true && attempt.key !== undefined) flow.ledger.settle(attempt.key, 'failed', flow.clock());
    // Facts are only read to diagnose a failure: an adapter may pass a function so a successful login never gathers them.
    throw report(flow, err, typeof request === 'function' ? request() : request, attempt);
  }
}

/** The callback's checks, its redemption, the session carried across, and the outcome. */
async function redeem(
  flow: FlowContext,
  session: FlowSession,
  query: Record<string, unknown>,
  attempt: Attempt,
): Promise<CompleteResult> {
  const taken = takeLogin(flow, session, query, attempt);
  const code = await claimLogin(flow, query, taken, attempt);
  const person = await readPerson(flow, taken.pending, code, query);
  await carryTabsAcross(flow, session, taken.pendingCount);
  const done = flow.clock();
  flow.ledger.settle(taken.key, 'completed', done);
  flow.log.write('info', { event: LOG_EVENTS.loginCompleted, ms: done - taken.pending.createdAt }, 'Sign-in completed');
  return outcome(person, taken.pending, done);
}

/** A pending login taken out of the session for the callback's state. */
interface TakenLogin {
  pending: PendingLogin;
  pendingCount: number;
  key: string;
  now: number;
}

/** The callback's checks, steps 1-4: its pending login taken out, bound to this flow, not expired. */
function takeLogin(
  flow: FlowContext,
  session: FlowSession,
  query: Record<string, unknown>,
  attempt: Attempt,
): TakenLogin {
  const { sessionKey, binding } = flow;
  const state = firstString(query.state);
  if (state === undefined || state === '') throw stateMismatch('state_missing');
  attempt.state = state;
  const pendingCount = countPendingLogins(session, sessionKey);
  attempt.pendingCount = pendingCount;
  const hadPending = pendingCount > 0;

  // 1. Take the pending login out first, so whatever happens next, this state cannot be used again.
  const pending = takePendingLogin(session, sessionKey, state);
  // 2. Nothing was started for this state in this session: the service is not called.
  if (pending === undefined) throw stateMismatch(hadPending ? 'unknown_state' : 'no_pending_logins');
  // 3. Started for another issuer, client or callback URL (RFC 9700 4.4.2, mix-up).
  if (!isBoundTo(pending, binding)) throw stateMismatch('binding_mismatch');
  attempt.startedAt = pending.createdAt;
  // 4. Too old.
  const now = flow.clock();
  if (isExpired(pending, flow.loginTtl, now)) {
    throw new IdError('login_expired', 'This sign-in took too long and has expired. Please start again.');
  }
  return { pending, pendingCount, key: loginKey(binding, state), now };
}

/** The callback's checks, steps 5-7: from this issuer, not an error, redeemed once; gives the code. */
async function claimLogin(
  flow: FlowContext,
  query: Record<string, unknown>,
  { pending, key, now }: TakenLogin,
  attempt: Attempt,
): Promise<string> {
  const { ledger } = flow;
  // 5. The response comes from this issuer (RFC 9207), before its error or its code is trusted.
  if (flow.client.checkAuthorizationResponse !== undefined) await flow.client.checkAuthorizationResponse(query);
  // 6. An error instead of a code: spend no replay key (strangers could fill the store with
  // cancelled logins); the pending login is gone already.
  if (query.error !== undefined) {
    ledger.settle(key, 'failed', now);
    throw providerError(query);
  }
  // 7. One redemption per login, also against concurrent replays that loaded the session before it was saved.
  let first: boolean;
  try {
    first = await flow.replayStore.consume(key, pending.createdAt + flow.loginTtl - now + 1000);
  } catch (err) {
    throw new IdError('session_store_unavailable', 'The store of completed sign-ins could not be reached.', {
      cause: err,
    });
  }
  if (!first) throw stateMismatch('already_redeemed');
  attempt.consumed = true;
  attempt.key = key;
  ledger.settle(key, 'in_progress', now);
  const code = firstString(query.code);
  if (code === undefined || code === '') {
    throw new IdError('provider_error', 'The identity service sent back no usable authorization code.');
  }
  return code;
}

/** Redemption, step 8: the code exchanged and the requested attributes read. */
async function readPerson(flow: FlowContext, pending: PendingLogin, code: string, query: Record<string, unknown>) {
  const { client, fapi, hasUserinfoEndpoint, log } = flow;
  // In the fapi2 profile both calls carry proofs of the login's DPoP key, and the callback's iss was checked.
  const dpopKey = fapi ? { dpopKey: await fapi.restoreDpopKey(pending.dpop) } : {};
  const iss = typeof query.iss === 'string' ? { iss: query.iss } : {};
  const tokens = await client.callback({
    code,
    nonce: pending.nonce,
    codeVerifier: pending.codeVerifier,
    ...flow.redirectParam,
    ...iss,
    ...dpopKey,
  });
  // The ID token alone signs the person in when no attribute was asked for, or the provider has no userinfo.
  const scope = pending.scope ?? flow.defaultScope;
  const wantsAttributes = scopeList(scope).some((s) => s !== 'openid');
  const readUserinfo = wantsAttributes && (hasUserinfoEndpoint === undefined || (await hasUserinfoEndpoint()));
  const info: UserinfoResult = readUserinfo
    ? await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken, ...dpopKey })
    : { sub: tokens.sub, data: {} };
  const { data, dropped } = requestedAttributes(info.data, scope);
  if (dropped.length > 0 && log.debugEnabled) {
    // Names only, never values.
    log.write(
      'debug',
      { event: LOG_EVENTS.attributesDropped, attributes: dropped },
      'Attributes that were not requested were dropped',
    );
  }
  return { tokens, info, data };
}

/** The other tabs' pending logins, carried across the session's regeneration. */
async function carryTabsAcross(flow: FlowContext, session: FlowSession, pendingCount: number): Promise<void> {
  if (pendingCount > 1) {
    // Other tabs are still signing in: should a session regeneration drop them, their callbacks can say why.
    const at = flow.clock();
    for (const other of pendingStates(session, flow.sessionKey)) {
      flow.ledger.siblingSignedIn(loginKey(flow.binding, other), at);
    }
  }
  if (session.regenerate !== undefined) {
    const restore = keepPendingLogins(flow, session);
    await session.regenerate();
    restore(session);
  }
}

/** The outcome: the signed-in person, and where the login was to return to. */
function outcome(
  { tokens, info, data }: Awaited<ReturnType<typeof readPerson>>,
  pending: PendingLogin,
  done: number,
): CompleteResult {
  const authTime =
    typeof tokens.claims.auth_time === 'number' && Number.isFinite(tokens.claims.auth_time)
      ? tokens.claims.auth_time * 1000
      : undefined;
  return {
    user: {
      sub: info.sub,
      data,
      claims: tokens.claims,
      ...(info.claims === undefined ? {} : { userinfo: info.claims }),
      ...(authTime === undefined ? {} : { authTime }),
      signedInAt: done,
    },
    ...(pending.returnTo === undefined ? {} : { returnTo: pending.returnTo }),
    ...(pending.maxAge === undefined ? {} : { maxAge: pending.maxAge }),
  };
}

/** The FAPI 2.0 methods of a client that speaks the profile, or undefined for a base-profile client. */
function fapiMethods(client: LoginFlowClient, who: string) {
  if (client.profile !== 'fapi2') return undefined;
  const { pushAuthorizationRequest, dpopKeyForLogin, restoreDpopKey } = client;
  if (
    typeof pushAuthorizationRequest !== 'function' ||
    typeof dpopKeyForLogin !== 'function' ||
    typeof restoreDpopKey !== 'function'
  ) {
    throw optionError(
      who,
      'client',
      "speaks the fapi2 profile but lacks pushAuthorizationRequest, dpopKeyForLogin or restoreDpopKey; give an IdClient constructed with profile: 'fapi2'.",
    );
  }
  return {
    pushAuthorizationRequest: pushAuthorizationRequest.bind(client),
    dpopKeyForLogin: dpopKeyForLogin.bind(client),
    restoreDpopKey: restoreDpopKey.bind(client),
  };
}

/**
 * Creates the framework-neutral login flow over `client`.
 *
 * ```ts
 * const flow = createLoginFlow({ client: new IdClient({ ... }), redirectUri: 'https://app.example/auth/callback' });
 * const { redirectUrl } = await flow.start(session, { returnTo: '/account' }); // GET /login
 * const { user, returnTo } = await flow.complete(session, query);           // GET /callback
 * ```
 * @throws TypeError naming the option when an option is missing or wrong.
 */
export function createLoginFlow(options: LoginFlowOptions): LoginFlow {
  checkOptionNames(options, 'createLoginFlow()');
  options = ownOptions(options);
  return buildLoginFlow(options, 'createLoginFlow');
}
