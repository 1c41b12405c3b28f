/**
 * NdIdStrategy, the Passport strategy `'nd-id'`: a request without `code` or `error` starts a
 * login, one with either completes it. Everything a sign-in needs happens here, so a plain
 * `passport.authenticate('nd-id')` route gets what `ndIdRouter()` gets.
 */
import type { AuthenticateOptions } from 'passport';
import type { Request } from 'express';
import { DEFAULT_CLOCK_TOLERANCE_S, IdClient } from '../client/id-client.js';
import type { IdClientOptions } from '../client/types.js';
import type { PublicJwks } from '../client/fapi-config.js';
import { systemClock, type Clock } from '../clock.js';
import { IdError, type IdErrorCode } from '../errors.js';
import { classifyFailure } from '../flow/failure.js';
import { defaultUser } from '../flow/default-user.js';
import {
  buildLoginFlow,
  DEFAULT_FLOW_SCOPE,
  type LoginFlow,
  type LoginFlowClient,
  type LoginUser,
} from '../flow/login-flow.js';
import { checkAbsoluteUrl as checkUrl, checkMilliseconds } from '../flow/options.js';
import { checkOptionNames, ownOptions, optionErrorOf } from '../options-check.js';
import type { ReplayStore } from '../flow/replay-store.js';
import { safeReturnTo } from '../flow/return-to.js';
import { recordSession, type FlowSession } from '../flow/session.js';
import { defaultSessionPolicy, type SessionPolicy } from '../flow/session-policy.js';
import type { Logger } from '../log.js';
import { hostOf, requestFacts } from './request-facts.js';
import { expressSignInSession, isRegeneratedByPassport } from './sign-in.js';
import {
  priorSignIn,
  recordForFrameworkSignIn,
  refuseStepUp,
  signInEntries,
  type SignInCore,
  type StepUpRefusal,
  type StepUpRefusalCode,
} from '../flow/finish-sign-in.js';
import { PassportStrategyBase } from './strategy-base.js';
import { WiringChecks } from './wiring.js';
import { runVerify, type NdIdInfo, type NdIdVerify, type NdIdVerifyWithRequest, type VerifyOutcome } from './verify.js';

export type { NdIdInfo, NdIdVerify, NdIdVerifyAnswer, NdIdVerifyDone, NdIdVerifyWithRequest } from './verify.js';

export { DEFAULT_SESSION_KEY, DEFAULT_MAX_PENDING_LOGINS, DEFAULT_LOGIN_TTL_MS } from '../flow/login-flow.js';

/** The strategy's Passport name. */
export const ND_ID_STRATEGY_NAME = 'nd-id';
/** Default scope requested. */
export const DEFAULT_STRATEGY_SCOPE = DEFAULT_FLOW_SCOPE;
/** Default time the verify callback may take to answer: 1 minute, in ms. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 60 * 1000;

/** What the strategy needs from a client; an {@link IdClient} is one (its `issuer` and `clientId` bind each login). */
export type NdIdClientLike = LoginFlowClient;

/** The signed-in person, as given to the verify callback; `data` holds only requested attributes. */
export type NdIdUser = LoginUser;

/**
 * `req.user` when no verify callback is given: `{ sub, data, claims, userinfo?, authTime?, signedInAt }`.
 * What each provider shape puts where:
 * - the service of the spec: `data` holds the decrypted attributes by scope name; no `userinfo`;
 * - a provider's standard JSON userinfo: its claims in `userinfo`, `data` empty;
 * - a userinfo JWT (signed, or signed then encrypted, e.g. Myinfo v5's `person_info`): its
 *   verified payload in `userinfo`;
 * - a sign-in from the ID token alone (only `openid` asked, or no userinfo endpoint): no `userinfo`.
 * `claims` and `signedInAt` are optional only because a session written by an earlier version lacks them.
 */
export type NdIdDefaultUser = Pick<NdIdUser, 'sub' | 'data'> &
  Partial<Pick<NdIdUser, 'claims' | 'userinfo' | 'authTime' | 'signedInAt'>>;

/** The challenge passed to Passport's `fail`: a stable code and a sentence for the user. */
export interface NdIdFailure extends NdIdInfo {
  message: string;
  /** The error code; a refused step-up login has its own two. */
  code: IdErrorCode | StepUpRefusalCode;
  /** A refused step-up login: the return path it was started with, when one was given. */
  returnTo?: string;
  /** The reference id of the log line about this failure. */
  reference?: string;
  /** The most likely cause and fix, for the developer (never shown in production by the router). */
  diagnosis?: { code: string; cause: string; fix: string };
}

/** Options shared by both ways of giving the client. */
export interface NdIdStrategyBaseOptions {
  /** The registered callback URL, absolute (e.g. `https://rp.example/auth/callback`). Required unless `client` already has one. */
  callbackURL?: string;
  /** Alias of `callbackURL`. */
  redirectUri?: string;
  /** Scopes requested, space-separated or an array; must include `openid`. Default `'openid profile.name'`. */
  scope?: string | string[];
  /** Session key under which pending logins are kept. Default `'nd-id:<clientId>'` (`'nd-id'` for a client without `clientId`). */
  sessionKey?: string;
  /** Most logins a session may have started and not finished (one per tab); the oldest is evicted first. Default 5. */
  maxPendingLogins?: number;
  /** How long a started login stays valid, **in milliseconds**. Default 600 000 (10 minutes). */
  loginTtl?: number;
  /**
   * How long the verify callback may take to call `done` or resolve to a user, **in
   * milliseconds**; after that the login ends with an error. Default 60 000 (1 minute).
   */
  verifyTimeout?: number;
  /** Clock in ms since the epoch; also given to the client built from the fields. Default `Date.now`. */
  clock?: Clock;
  /** Where redeemed logins are remembered (one redemption per login). Default: in this process's memory. */
  replayStore?: ReplayStore;
  /**
   * The rules of signed-in sessions: where the sign-in record is kept and how step-up logins are
   * judged. Give the same `createSessionPolicy({ ... })` as to `requireSignIn`. Default: the defaults.
   */
  sessions?: SessionPolicy;
  /**
   * Where to log: pino, console, Nest's Logger (debug/info/warn/error methods); also given to
   * the client built from the fields. Default: server-side failures to `console.error` once per
   * cause per minute, everything else with `DEBUG=passport-nd-id*`.
   */
  logger?: Logger;
}

/** Build the client from its fields (every {@link IdClientOptions} field but `redirectUri`, which is `callbackURL`). */
export type NdIdStrategyClientFields = Omit<IdClientOptions, 'redirectUri'> & { client?: undefined };

/** Use a ready client. */
export interface NdIdStrategyReadyClient {
  client: NdIdClientLike;
}

/**
 * The registered callback URL, required by the types when the strategy builds its client from
 * the fields (as `callbackURL`, or its alias `redirectUri`).
 */
export type NdIdStrategyCallbackUrl =
  | { callbackURL: string; redirectUri?: string }
  | { redirectUri: string; callbackURL?: string };

/** Options of {@link NdIdStrategy} when the verify callback does not take the request. */
export type NdIdStrategyOptions = NdIdStrategyBaseOptions &
  ((NdIdStrategyClientFields & NdIdStrategyCallbackUrl) | NdIdStrategyReadyClient) & { passReqToCallback?: false };

/** Options of {@link NdIdStrategy} when the verify callback takes the request first. */
export type NdIdStrategyOptionsWithRequest = NdIdStrategyBaseOptions &
  ((NdIdStrategyClientFields & NdIdStrategyCallbackUrl) | NdIdStrategyReadyClient) & { passReqToCallback: true };

/** Where an app mounted its sign-in routes, for the checks that need it (`ndIdRouter()` gives it). */
export interface NdIdRouteWiring {
  /** The callback route as mounted (like `/auth/callback`), or `false` when the app serves it itself. */
  callbackRoute: string | false;
}

/** Per-call options: `passport.authenticate('nd-id', { returnTo, scope })`. */
export interface NdIdAuthenticateOptions extends AuthenticateOptions {
  /** Where the routes are mounted: a login that could never come back is refused (`ndIdRouter()` gives it). */
  wiring?: NdIdRouteWiring;
  /** The session rules for this call; default the strategy's `sessions` option. */
  sessions?: SessionPolicy;
  /** Same-site path to return to after login; anything unsafe is ignored. */
  returnTo?: string;
  /** Scopes for this login only. */
  scope?: string | string[];
  /** Name of the session cookie, for diagnoses of failed callbacks (the router passes its `sessionCookieName`). Default `'connect.sid'`. */
  sessionCookieName?: string;
  /** Step-up: ask for a sign-in at most this many seconds old (`max_age`). */
  maxAge?: number;
  /** FAPI 2.0: the message the person sees on the approval screen for this login (at most 100 characters). */
  authenticationContextMessage?: string;
  /** FAPI 2.0: the `authentication_context_type` sent beside the message for this login. */
  authenticationContextType?: string;
  /** Extra authorization parameters for this login (`ui_locales`, `prompt`, `login_hint`, ...); never one the client sets itself. */
  authorizationParams?: Readonly<Record<string, string>>;
}

/** What `success` passes on as `info` (it becomes `req.authInfo` with plain `passport.authenticate`). */
export interface NdIdSuccessInfo {
  /** The sanitized return path given when the login started, if any. */
  returnTo?: string;
  /** The completed sign-in, for the session record: who, when, when authenticated, and the step-up `maxAge` it was started with. */
  signIn?: { sub: string; signedInAt: number; authTime?: number; maxAge?: number; sid?: string; iss?: string };
  /**
   * The session entries the sign-in keeps (other tabs' logins, and the sign-in record unless the
   * router records it itself): what a caller of `req.logIn` without `keepSessionInfo` copies into
   * the new session (`ndIdLogIn()` does).
   */
  sessionEntries?: readonly string[];
}

/** Passport's fail challenge for a refused login: code, sentence, and the service's own error code and description when it sent one. */
function failureOf(err: IdError, message: string): NdIdFailure {
  const failure: NdIdFailure = { message, code: err.code };
  if (err.code === 'provider_error' && typeof err.cause === 'object' && err.cause !== null) {
    const cause = err.cause as { error?: unknown; error_description?: unknown };
    if (typeof cause.error === 'string') failure.error = cause.error;
    if (typeof cause.error_description === 'string') failure.errorDescription = cause.error_description;
  }
  if (err.reason !== undefined) failure.reason = err.reason;
  if (err.reference !== undefined) failure.reference = err.reference;
  if (err.diagnosis !== undefined) failure.diagnosis = err.diagnosis;
  return failure;
}

const optionError = optionErrorOf('NdIdStrategy');

/** Whether the request carries a signed-in person (Passport's `req.isAuthenticated()`, or a `req.user`). */
function isSignedIn(req: Request): boolean {
  const check = (req as { isAuthenticated?: unknown }).isAuthenticated;
  if (typeof check === 'function') return (check as () => unknown).call(req) === true;
  return (req as { user?: unknown }).user != null;
}

/** A session object with its own `get(key)` and `set(key, value)` methods (Fastify's session plugins). */
interface MethodSessionLike {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
}

/**
 * A {@link FlowSession} over a get/set session (`@fastify/secure-session`, `@fastify/session`),
 * where plain property writes are not saved and `delete()` ends the session: a key is removed by
 * setting `undefined`. `undefined` for any other session.
 */
function methodSession(session: object): FlowSession | undefined {
  const s = session as Partial<MethodSessionLike>;
  if (typeof s.get !== 'function' || typeof s.set !== 'function') return undefined;
  const target = session as MethodSessionLike;
  return {
    get: (key) => target.get(key),
    set: (key, value) => target.set(key, value),
    delete: (key) => target.set(key, undefined),
  };
}

/**
 * The Passport strategy for the national digital identity service.
 *
 * ```ts
 * import passport from 'passport';
 * import { NdIdStrategy, type NdIdUser } from 'passport-nd-id';
 *
 * declare function findOrCreate(user: NdIdUser): Promise<Express.User>;
 *
 * passport.use(
 *   new NdIdStrategy(
 *     {
 *       hostname: 'https://id.example',
 *       clientId: 'my-app',
 *       clientSecret: process.env.ND_ID_CLIENT_SECRET ?? '',
 *       privateKey: process.env.ND_ID_PRIVATE_KEY ?? '',
 *       callbackURL: 'https://app.example/auth/callback',
 *     },
 *     async (user) => findOrCreate(user),
 *   ),
 * );
 * ```
 *
 * Outcomes: a started login redirects; a completed one calls `success(user, { returnTo })`; an
 * unknown or reused `state` fails with `state_mismatch` (403); other refusals fail with their
 * {@link IdErrorCode} (401); a missing session, an unreachable service, an unusable key set or
 * refused client credentials is an `error`.
 *
 * At a completed login the strategy writes the sign-in record `requireSignIn()` reads beside the
 * other tabs' logins, and Passport's `req.logIn` keeps both in the new session: pass
 * `keepSessionInfo: true` (`ndIdRouter()` does), or the sign-in is refused with the fix. A step-up
 * login (`maxAge`) from an earlier sign-in fails with `step_up_not_recent` (403); a different person
 * with `step_up_other_person` (403), signed out. With `@fastify/passport`, pass `clearSessionIgnoreFields: [strategy.sessionKey]` to keep other
 * tabs' logins. A signed-in person replaying a callback (back button) is redirected, not failed.
 */
export class NdIdStrategy extends PassportStrategyBase {
  /** The name Passport knows the strategy by: `'nd-id'` (or the name given to `passport.use(name, strategy)`). */
  override name: string = ND_ID_STRATEGY_NAME;
  /** Session key under which pending logins are kept. */
  readonly sessionKey: string;
  /** Most pending logins kept per session. */
  readonly maxPendingLogins: number;
  /** Lifetime of a pending login, in ms. */
  readonly loginTtl: number;
  /** Longest wait for the verify callback's answer, in ms. */
  readonly verifyTimeout: number;

  /** The framework-neutral login flow this strategy adapts to Passport. */
  readonly flow: LoginFlow;
  /** The rules of signed-in sessions this strategy writes the sign-in record for. */
  readonly sessions: SessionPolicy;

  private readonly wiring = new WiringChecks();

  private readonly client: NdIdClientLike & {
    publicJwks?: () => PublicJwks;
    logoutTokenChecks?: IdClient['logoutTokenChecks'];
  };
  private readonly passReqToCallback: boolean;
  private readonly verify: NdIdVerify | NdIdVerifyWithRequest | undefined;

  /**
   * @param options the client (fields or a ready `client`), `callbackURL` and tuning options.
   * @param verify optional; turns the signed-in person into your user, or refuses them.
   * @throws TypeError naming the option when an option is missing or wrong.
   */
  constructor(options: NdIdStrategyOptionsWithRequest, verify?: NdIdVerifyWithRequest);
  constructor(options: NdIdStrategyOptions, verify?: NdIdVerify);
  constructor(
    options: NdIdStrategyOptions | NdIdStrategyOptionsWithRequest,
    verify?: NdIdVerify | NdIdVerifyWithRequest,
  ) {
    super();
    options = checkStrategyArguments(options, verify);
    const callbackUrl = callbackUrlOf(options);
    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw optionError('clock', 'must be a function returning the time in ms since the epoch.');
    }
    const clock = options.clock ?? systemClock;
    const client = options.client !== undefined ? readyClient(options) : clientFromFields(options, callbackUrl, clock);

    this.client = client;
    this.flow = strategyFlow(options, client, clock, callbackUrl);
    this.sessionKey = this.flow.sessionKey;
    this.maxPendingLogins = this.flow.maxPendingLogins;
    this.loginTtl = this.flow.loginTtl;

    this.verifyTimeout = checkMilliseconds(
      options.verifyTimeout ?? DEFAULT_VERIFY_TIMEOUT_MS,
      'NdIdStrategy',
      'verifyTimeout',
      '1 minute is 60000',
    );

    const sessions = options.sessions ?? defaultSessionPolicy();
    if (typeof sessions !== 'object' || sessions === null || typeof sessions.start !== 'function') {
      throw optionError('sessions', 'must be createSessionPolicy({ ... }), the same one given to requireSignIn.');
    }
    this.sessions = sessions;
    this.passReqToCallback = options.passReqToCallback === true;
    this.verify = verify;
  }

  /**
   * Starts a login, or completes one when the query has `code` or `error`.
   * Per-call options: `returnTo` and `scope`.
   */
  override authenticate(req: Request, options: NdIdAuthenticateOptions = {}): void {
    const query = (req.query ?? {}) as Record<string, unknown>;
    const isCallback = query.code !== undefined || query.error !== undefined;
    // Both ends of a login set or carry session state; no shared cache may keep either answer,
    // whoever sends it (this strategy's redirect, Passport's success redirect or the app's page).
    noStore(req);
    const refused = this.checkWiring(req, options, isCallback);
    if (refused !== undefined)
      return this.error(this.flow.report(refused, requestFacts(req, options.sessionCookieName)));
    if (isCallback) {
      // completeLogin reports through success/fail/error; a throw from one of those (a bug in a
      // later handler) must still reach Express rather than become an unhandled rejection.
      this.completeLogin(req, query, options).catch((err: unknown) => {
        this.error(err instanceof Error ? err : new Error('The sign-in could not be completed.'));
      });
    } else {
      this.startLogin(req, options).catch((err: unknown) => {
        this.error(err instanceof Error ? err : new Error('Could not start the sign-in.'));
      });
    }
  }

  /**
   * The app's public keys (`sig` and `enc`) as a JWKS, when the client speaks the fapi2 profile
   * (`IdClient.publicJwks()`); undefined otherwise. `ndIdRouter({ publishKeys: strategy })` serves it.
   */
  publicJwks(): PublicJwks | undefined {
    return this.client.profile === 'fapi2' && typeof this.client.publicJwks === 'function'
      ? this.client.publicJwks()
      : undefined;
  }

  /**
   * What the client checks back-channel logout tokens against (`IdClient.logoutTokenChecks`), for
   * `createBackchannelLogout({ client: strategy, sessions })`.
   * @throws TypeError when the strategy's client has no such checks (not an IdClient).
   */
  logoutTokenChecks(): ReturnType<IdClient['logoutTokenChecks']> {
    if (typeof this.client.logoutTokenChecks !== 'function')
      throw new TypeError('NdIdStrategy: its client cannot check logout tokens; give an IdClient.');
    return this.client.logoutTokenChecks();
  }

  /** Wiring mistakes seen from this request: logged once each; one that makes the login impossible is returned. */
  private checkWiring(req: Request, options: NdIdAuthenticateOptions, isCallback: boolean): IdError | undefined {
    this.wiring.sessionRestored(req, this.flow.log);
    const wiring = options.wiring;
    if (wiring === undefined) return undefined;
    if (isCallback || this.wiring.callbackRouteMatches(this, wiring.callbackRoute)) return undefined;
    const misrouted = new IdError(
      'configuration_invalid',
      'The sign-in routes are mounted where the service cannot return to.',
    );
    misrouted.diagnosis = {
      code: 'callback_route_mismatch',
      cause: `The router's callback route is ${wiring.callbackRoute === false ? req.baseUrl : wiring.callbackRoute}, but callbackURL sends the service back elsewhere.`,
      fix: 'Mount the router where callbackURL points, or set routes.callback to match it.',
    };
    return misrouted;
  }

  private sessionOf(req: Request): FlowSession | undefined {
    const session: unknown = (req as { session?: unknown }).session;
    if (typeof session !== 'object' || session === null) return undefined;
    return methodSession(session) ?? recordSession(session as Record<string, unknown>);
  }

  private sessionMissing(): IdError {
    return new IdError(
      'session_missing',
      "Sign-in needs a session, and this request has none: mount express-session (app.use(session({ ... }))) before passport.authenticate('nd-id') and ndIdRouter().",
    );
  }

  private async startLogin(req: Request, options: NdIdAuthenticateOptions): Promise<void> {
    const session = this.sessionOf(req);
    if (session === undefined) return this.error(this.flow.report(this.sessionMissing()));
    let redirectUrl: string;
    try {
      ({ redirectUrl } = await this.flow.start(session, {
        ...(options.returnTo === undefined ? {} : { returnTo: options.returnTo }),
        ...(options.scope === undefined ? {} : { scope: options.scope }),
        ...(options.maxAge === undefined ? {} : { maxAge: options.maxAge }),
        ...(options.authenticationContextMessage === undefined
          ? {}
          : { authenticationContextMessage: options.authenticationContextMessage }),
        ...(options.authenticationContextType === undefined
          ? {}
          : { authenticationContextType: options.authenticationContextType }),
        ...(options.authorizationParams === undefined ? {} : { authorizationParams: options.authorizationParams }),
        request: { host: hostOf(req) },
      }));
    } catch (err) {
      return this.error(err instanceof Error ? err : new Error('Could not build the authorization URL.'));
    }
    this.redirect(redirectUrl);
  }

  private async completeLogin(
    req: Request,
    query: Record<string, unknown>,
    options: NdIdAuthenticateOptions,
  ): Promise<void> {
    const cookieName = options.sessionCookieName;
    const session = this.sessionOf(req);
    if (session === undefined)
      return this.error(this.flow.report(this.sessionMissing(), requestFacts(req, cookieName)));

    const policy = options.sessions ?? this.sessions;
    // Read before the sign-in replaces the session: a step-up is judged against it.
    const prior = priorSignIn(policy, session);
    let user: NdIdUser;
    let returnTo: string | undefined;
    let maxAge: number | undefined;
    try {
      ({ user, returnTo, maxAge } = await this.flow.complete(session, query, () => requestFacts(req, cookieName)));
    } catch (err) {
      const failure = classifyFailure(err);
      if (failure.serverSide || !(err instanceof IdError)) {
        return this.error(err instanceof Error ? err : new Error('The sign-in could not be completed.'));
      }
      // A person already signed in who replays a callback (the back button) is sent on their way,
      // not shown a failure: nothing was signed in, and their session is left as it is.
      if (err.code === 'state_mismatch' && isSignedIn(req)) {
        const done = this.flow.completedLogin(query.state);
        return this.redirect(safeReturnTo(done?.returnTo) ?? options.successRedirect ?? '/');
      }
      return this.fail(failureOf(err, failure.message), failure.status);
    }

    let outcome: VerifyOutcome;
    try {
      outcome = await runVerify(
        this.verify,
        this.passReqToCallback ? [req, user] : [user],
        this.verifyTimeout,
        defaultUser(user),
      );
    } catch (err) {
      return this.error(
        err instanceof Error ? err : new Error('The verify callback failed with a value that is not an Error.'),
      );
    }
    if (outcome.user === false) {
      const info = outcome.info;
      const details: NdIdInfo = typeof info === 'object' && info !== null ? info : {};
      const message =
        typeof info === 'string'
          ? info
          : typeof details.message === 'string'
            ? details.message
            : 'Your account may not sign in here.';
      return this.fail({ ...details, message, code: 'user_refused' } satisfies NdIdFailure, 401);
    }
    const signIn: NonNullable<NdIdSuccessInfo['signIn']> = {
      sub: user.sub,
      signedInAt: user.signedInAt,
      ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
      ...(maxAge === undefined ? {} : { maxAge }),
      // The provider's session, so a back-channel logout by sid finds this sign-in.
      ...(typeof user.claims.sid === 'string' ? { sid: user.claims.sid } : {}),
      // Its provider, so a logout token of another provider naming the same sub or sid does not find it.
      ...(typeof user.claims.iss === 'string' ? { iss: user.claims.iss } : {}),
    };
    const core: SignInCore = { flow: this.flow, policy };
    const signInSession = expressSignInSession(req, session, cookieName ?? 'connect.sid');
    let refusal: StepUpRefusal | undefined;
    let entries: string[] | undefined;
    try {
      refusal = await refuseStepUp(core, signInSession, signIn, prior);
      // With session: false, Passport signs nobody into the session, so there is no sign-in to record.
      if (refusal === undefined && options.session !== false) {
        const lost = sessionInfoNotKept(req, options);
        if (lost !== undefined) return this.error(this.flow.report(lost, requestFacts(req, cookieName)));
        this.wiring.cookieWillBeSaved(req, this.flow.log);
        // The router records the sign-in itself once it has signed the person in (its afterCallback may refuse first).
        if (options.wiring !== undefined) entries = [this.flow.sessionKey];
        else {
          await recordForFrameworkSignIn(core, signInSession, signIn);
          entries = signInEntries(core);
        }
      }
    } catch (err) {
      return this.error(err instanceof Error ? err : new Error('The sign-in could not be completed.'));
    }
    if (refusal !== undefined) {
      const failure: NdIdFailure = { message: refusal.message, code: refusal.code };
      return this.fail(returnTo === undefined ? failure : { ...failure, returnTo }, refusal.status);
    }
    const successInfo: NdIdSuccessInfo = {
      ...(returnTo === undefined ? {} : { returnTo }),
      signIn,
      ...(entries === undefined ? {} : { sessionEntries: entries }),
    };
    this.success(outcome.user, successInfo);
  }
}

/**
 * Passport's `req.logIn` replaces express-session's session and, unless told `keepSessionInfo:
 * true`, keeps nothing of it: not the sign-in record the guards read, nor the other tabs' logins.
 * The strategy writes both before Passport signs the person in, so it refuses a sign-in Passport
 * was not told to keep, unless the router calls it (`wiring`: it copies `sessionEntries` itself).
 * A get/set session keeps them by `clearSessionIgnoreFields`.
 */
function sessionInfoNotKept(req: Request, options: NdIdAuthenticateOptions): IdError | undefined {
  if (options.keepSessionInfo === true || options.wiring !== undefined || !isRegeneratedByPassport(req))
    return undefined;
  const err = new IdError(
    'configuration_invalid',
    'Passport is not told to keep the sign-in when it replaces the session: the person could not stay signed in.',
  );
  err.diagnosis = {
    code: 'session_info_not_kept',
    cause:
      "Passport's req.logIn replaces the session and keeps none of it without keepSessionInfo: true, so the sign-in record the guards read and the logins other tabs have in progress would be lost.",
    fix: "Pass keepSessionInfo: true: passport.authenticate('nd-id', { keepSessionInfo: true }) (and to req.logIn when a callback of yours calls it); NestJS: PassportModule.register({ session: true, keepSessionInfo: true }). Or use ndIdRouter(), which keeps the sign-in itself.",
  };
  return err;
}

/** The options a strategy is constructed with, either form. */
type AnyStrategyOptions = NdIdStrategyOptions | NdIdStrategyOptionsWithRequest;

/** Options resolution, first step: the options an object of known names (copied), `verify` a function. */
function checkStrategyArguments(
  options: AnyStrategyOptions,
  verify: NdIdVerify | NdIdVerifyWithRequest | undefined,
): AnyStrategyOptions {
  if (typeof options !== 'object' || options === null) {
    throw optionError(
      'options',
      'must be an object with clientId, clientSecret, privateKey and callbackURL (or a ready client).',
    );
  }
  checkOptionNames(options, 'new NdIdStrategy()');
  options = ownOptions(options);
  if (verify !== undefined && typeof verify !== 'function') {
    throw optionError(
      'verify',
      'must be a function (user, done), (req, user, done) or async (user) => user; or leave it out.',
    );
  }
  if (options.passReqToCallback !== undefined && typeof options.passReqToCallback !== 'boolean') {
    throw optionError('passReqToCallback', 'must be true or false.');
  }
  return options;
}

/** The callback URL, given as `callbackURL` or its alias `redirectUri`, checked; or undefined. */
function callbackUrlOf(options: AnyStrategyOptions): string | undefined {
  const { callbackURL, redirectUri } = options;
  if (callbackURL !== undefined && redirectUri !== undefined && callbackURL !== redirectUri) {
    throw optionError('callbackURL', 'and its alias redirectUri differ; give only one of them.');
  }
  const callback = callbackURL ?? redirectUri;
  const callbackOption = callbackURL !== undefined ? 'callbackURL' : 'redirectUri';
  return callback === undefined ? undefined : checkUrl(callback, 'NdIdStrategy', callbackOption);
}

/** The ready client of `options.client`, checked, and given without the fields it replaces. */
function readyClient(options: AnyStrategyOptions): NdIdClientLike {
  const c = options.client as Partial<NdIdClientLike> | null;
  if (
    typeof c !== 'object' ||
    c === null ||
    typeof c.authorizationUrl !== 'function' ||
    typeof c.callback !== 'function' ||
    typeof c.userinfo !== 'function'
  ) {
    throw optionError('client', 'must be an IdClient (new IdClient({ ... })).');
  }
  const fields = options as Partial<IdClientOptions>;
  if (
    fields.clientId !== undefined ||
    fields.clientSecret !== undefined ||
    fields.privateKey !== undefined ||
    fields.profile !== undefined
  ) {
    throw optionError(
      'client',
      'was given together with clientId/clientSecret/privateKey; give either a ready client or its fields.',
    );
  }
  return options.client as NdIdClientLike;
}

/** An `IdClient` made from the client's fields among the strategy's options, which are checked first. */
function clientFromFields(
  options: NdIdStrategyBaseOptions &
    NdIdStrategyClientFields &
    NdIdStrategyCallbackUrl & { passReqToCallback?: boolean },
  callbackUrl: string | undefined,
  clock: Clock,
): NdIdClientLike {
  const fapi2 = (options as { profile?: unknown }).profile === 'fapi2';
  for (const field of ['clientId', 'clientSecret', 'privateKey'] as const) {
    if (field === 'clientSecret' && fapi2) continue; // private_key_jwt: IdClient checks the assertion key
    const value: unknown = options[field];
    if (field === 'privateKey' && ((typeof value === 'object' && value !== null) || value === undefined)) continue; // JWK, key list or none (ID token alone): IdClient checks it
    if (typeof value !== 'string' || value.trim() === '') {
      throw optionError(
        field,
        'is required: give the value from your registration with the service (or a ready client).',
      );
    }
  }
  if (callbackUrl === undefined) {
    throw optionError(
      'callbackURL',
      'is required: give the absolute callback URL registered with the service, like "https://app.example/auth/callback".',
    );
  }
  const {
    client: _client,
    callbackURL: _cb,
    redirectUri: _ru,
    scope: _scope,
    sessionKey: _sk,
    maxPendingLogins: _max,
    loginTtl: _ttl,
    verifyTimeout: _vt,
    passReqToCallback: _prc,
    replayStore: _rs,
    sessions: _sessions,
    logger: _logger,
    ...clientOptions
  } = options;
  return new IdClient({
    ...clientOptions,
    redirectUri: callbackUrl,
    clock,
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
}

/** The strategy's login flow, over its client, with the flow's options among the strategy's. */
function strategyFlow(
  options: AnyStrategyOptions,
  client: NdIdClientLike,
  clock: Clock,
  callbackUrl: string | undefined,
): LoginFlow {
  return buildLoginFlow(
    {
      client,
      clock,
      ...(callbackUrl === undefined ? {} : { redirectUri: callbackUrl }),
      ...(options.scope === undefined ? {} : { scope: options.scope }),
      ...(options.sessionKey === undefined ? {} : { sessionKey: options.sessionKey }),
      ...(options.maxPendingLogins === undefined ? {} : { maxPendingLogins: options.maxPendingLogins }),
      ...(options.loginTtl === undefined ? {} : { loginTtl: options.loginTtl }),
      ...(options.replayStore === undefined ? {} : { replayStore: options.replayStore }),
      ...(options.logger === undefined ? {} : { logger: options.logger }),
      ...(options.client === undefined
        ? { clockTolerance: (options as { clockTolerance?: number }).clockTolerance ?? DEFAULT_CLOCK_TOLERANCE_S }
        : {}),
    },
    'NdIdStrategy',
  );
}

/** `Cache-Control: no-store` on the response Express pairs with the request (`req.res`), when there is one. */
function noStore(req: Request): void {
  const res: unknown = (req as { res?: unknown }).res;
  if (typeof res !== 'object' || res === null) return;
  const { headersSent, setHeader } = res as { headersSent?: unknown; setHeader?: unknown };
  if (headersSent !== true && typeof setHeader === 'function') setHeader.call(res, 'Cache-Control', 'no-store');
}
