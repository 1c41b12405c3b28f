/**
 * NdIdStrategy: the Passport strategy `'nd-id'`. A request without `code` or `error` in its
 * query starts a login (redirect to the service); a request with one completes it (the
 * callback). The protocol work is done by {@link IdClient}; this file only keeps the pending
 * login in the session and turns outcomes into Passport's success, fail and error.
 */
import type { AuthenticateOptions } from 'passport';
import { Strategy } from 'passport-strategy';
import type { Request } from 'express';
import { IdClient } from '../client/id-client.js';
import type {
  AuthorizationUrlParams,
  AuthorizationUrlResult,
  CallbackParams,
  CallbackResult,
  IdClientOptions,
  IdTokenClaims,
  UserinfoParams,
  UserinfoResult,
} from '../client/types.js';
import { systemClock, type Clock } from '../clock.js';
import { IdError, PROVIDER_DOWN_CODES, type IdErrorCode } from '../errors.js';
import { generateNonce, generatePkcePair, generateState } from '../pkce.js';
import {
  addPendingLogin,
  isExpired,
  takePendingLogin,
  type PendingLogin,
  type SessionLike,
} from './pending-logins.js';
import { safeReturnTo } from './return-to.js';

/** The strategy's Passport name. */
export const ND_ID_STRATEGY_NAME = 'nd-id';
/** Default session key under which pending logins are kept. */
export const DEFAULT_SESSION_KEY = 'nd-id';
/** Default scope requested. */
export const DEFAULT_STRATEGY_SCOPE = 'openid profile.name';
/** Default number of pending logins (tabs) kept per session. */
export const DEFAULT_MAX_PENDING_LOGINS = 5;
/** Default time a started login may take before its callback is refused: 10 minutes, in ms. */
export const DEFAULT_LOGIN_TTL_MS = 10 * 60 * 1000;
/** Default time the verify callback may take to answer: 1 minute, in ms. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 60 * 1000;


/** What the strategy needs from a client; an {@link IdClient} is one. */
export interface NdIdClientLike {
  /** Builds the URL the browser is sent to (no network call). */
  authorizationUrl(params: AuthorizationUrlParams): AuthorizationUrlResult;
  /** Redeems the code and validates the ID token. */
  callback(params: CallbackParams): Promise<CallbackResult>;
  /** Reads and decrypts the person's attributes. */
  userinfo(params: UserinfoParams): Promise<UserinfoResult>;
}

/** The signed-in person, as given to the verify callback. */
export interface NdIdUser {
  /** The person's identifier for this client (pairwise). */
  sub: string;
  /** Decrypted attributes keyed by scope name, e.g. `{ 'profile.name': '...' }`. */
  data: Record<string, string>;
  /** The validated ID token claims. */
  claims: IdTokenClaims;
}

/** `req.user` when no verify callback is given. */
export type NdIdDefaultUser = Pick<NdIdUser, 'sub' | 'data'>;

/** Extra details of a refusal or failure; `message` is shown to the user (escaped). */
export interface NdIdInfo {
  message?: string;
  [key: string]: unknown;
}

/** The challenge passed to Passport's `fail`: a stable code and a sentence for the user. */
export interface NdIdFailure extends NdIdInfo {
  message: string;
  code: IdErrorCode;
}

/** The `done` callback of a callback-style verify function. `false` as user refuses the login. */
export type NdIdVerifyDone = (err: unknown, user?: Express.User | false | null, info?: NdIdInfo | string) => void;

/**
 * Verify callback: `(user, done)`, or an async `(user) => user | false`.
 *
 * It must answer by calling `done`, or by returning a promise of the user (`false` or `null`
 * refuses). A value returned without a promise is ignored, and a promise resolving to
 * `undefined` leaves the answer to `done`; a verify that does neither within `verifyTimeout`
 * ends the login with an error.
 */
export type NdIdVerify =
  | ((user: NdIdUser, done: NdIdVerifyDone) => void)
  | ((user: NdIdUser) => Promise<Express.User | false | null>);

/** Verify callback with the request first, used when `passReqToCallback` is true. Answers as {@link NdIdVerify}. */
export type NdIdVerifyWithRequest =
  | ((req: Request, user: NdIdUser, done: NdIdVerifyDone) => void)
  | ((req: Request, user: NdIdUser) => Promise<Express.User | false | null>);

/** Options shared by both ways of giving the client. */
export interface NdIdStrategyBaseOptions {
  /** The registered callback URL, absolute (e.g. `https://rp.example/auth/callback`). Required unless `client` already has one. */
  callbackURL?: string;
  /** Alias of `callbackURL`. */
  redirectUri?: string;
  /** Scopes requested, space-separated or an array; must include `openid`. Default `'openid profile.name'`. */
  scope?: string | string[];
  /** Session key under which pending logins are kept. Default `'nd-id'`. */
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
}

/** Build the client from its fields (every {@link IdClientOptions} field but `redirectUri`, which is `callbackURL`). */
export type NdIdStrategyClientFields = Omit<IdClientOptions, 'redirectUri'> & { client?: undefined };

/** Use a ready client. */
export interface NdIdStrategyReadyClient {
  client: NdIdClientLike;
}

/** Options of {@link NdIdStrategy} when the verify callback does not take the request. */
export type NdIdStrategyOptions = NdIdStrategyBaseOptions &
  (NdIdStrategyClientFields | NdIdStrategyReadyClient) & { passReqToCallback?: false };

/** Options of {@link NdIdStrategy} when the verify callback takes the request first. */
export type NdIdStrategyOptionsWithRequest = NdIdStrategyBaseOptions &
  (NdIdStrategyClientFields | NdIdStrategyReadyClient) & { passReqToCallback: true };

/** Per-call options: `passport.authenticate('nd-id', { returnTo, scope })`. */
export interface NdIdAuthenticateOptions extends AuthenticateOptions {
  /** Same-site path to return to after login; anything unsafe is ignored. */
  returnTo?: string;
  /** Scopes for this login only. */
  scope?: string | string[];
}

/** What `success` passes on as `info` (it becomes `req.authInfo` with plain `passport.authenticate`). */
export interface NdIdSuccessInfo {
  /** The sanitized return path given when the login started, if any. */
  returnTo?: string;
}

type VerifyOutcome = { user: Express.User | false; info?: NdIdInfo | string };

function optionError(option: string, what: string): TypeError {
  return new TypeError(`NdIdStrategy: ${option} ${what}`);
}

function checkScope(scope: unknown, option: string): string | string[] {
  const list =
    typeof scope === 'string'
      ? scope.split(' ').filter(Boolean)
      : Array.isArray(scope) && scope.every((s) => typeof s === 'string')
        ? (scope as string[])
        : undefined;
  if (list === undefined) {
    throw optionError(option, 'must be a space-separated string or an array of scope names, like "openid profile.name".');
  }
  if (!list.includes('openid')) throw optionError(option, 'must include "openid", like "openid profile.name".');
  return scope as string | string[];
}

function checkAbsoluteUrl(value: unknown, option: string): string {
  let url: URL | undefined;
  if (typeof value === 'string') {
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw optionError(
      option,
      'must be the absolute http(s) URL registered with the service, like "https://app.example/auth/callback".',
    );
  }
  return value as string;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** OAuth errors of the token endpoint that mean the app's own registration was refused (wrong secret, unknown client). */
const CLIENT_REFUSED_OAUTH_ERRORS: ReadonlySet<string> = new Set(['invalid_client', 'unauthorized_client']);

/**
 * True when a failed code exchange or userinfo read is not the person's doing and trying again
 * will not help them: the service is down ({@link PROVIDER_DOWN_CODES}), its key set is unusable
 * (`jwks_invalid`), or it refused the app's client credentials (`token_request_failed` caused by
 * `invalid_client` or `unauthorized_client`). These are reported with `error`, not `fail`.
 */
function isServerSideFailure(err: IdError): boolean {
  if (PROVIDER_DOWN_CODES.has(err.code) || err.code === 'jwks_invalid') return true;
  if (err.code !== 'token_request_failed') return false;
  const oauthError: unknown = (err.cause as { error?: unknown } | null | undefined)?.error;
  return typeof oauthError === 'string' && CLIENT_REFUSED_OAUTH_ERRORS.has(oauthError);
}

function firstString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The Passport strategy for the national digital identity service.
 *
 * ```ts
 * passport.use(new NdIdStrategy({ clientId, clientSecret, privateKey, callbackURL }, async (user) => findOrCreate(user)));
 * ```
 *
 * Outcomes: a started login redirects; a completed one calls `success(user, { returnTo })`;
 * an unknown or reused `state` fails with `state_mismatch` (403); an expired login, a refusal
 * in the app, an invalid token or response, or a refusal by verify fails with the matching
 * {@link IdErrorCode} (401); a missing session, an unreachable service, an unusable key set
 * (`jwks_invalid`) or refused client credentials (`token_request_failed` with `invalid_client`
 * or `unauthorized_client`) is an `error`.
 *
 * With plain `passport.authenticate('nd-id')`, Passport's `req.logIn` starts a fresh session,
 * so logins still in progress in other tabs of the same browser must be started again;
 * `ndIdRouter()` carries them over.
 */
export class NdIdStrategy extends Strategy {
  /** The name Passport knows the strategy by: `'nd-id'` (or the name given to `passport.use(name, strategy)`). */
  name: string = ND_ID_STRATEGY_NAME;
  /** Session key under which pending logins are kept. */
  readonly sessionKey: string;
  /** Most pending logins kept per session. */
  readonly maxPendingLogins: number;
  /** Lifetime of a pending login, in ms. */
  readonly loginTtl: number;
  /** Longest wait for the verify callback's answer, in ms. */
  readonly verifyTimeout: number;

  private readonly client: NdIdClientLike;
  private readonly callbackURL: string | undefined;
  private readonly scope: string | string[];
  private readonly clock: Clock;
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
    if (typeof options !== 'object' || options === null) {
      throw optionError('options', 'must be an object with clientId, clientSecret, privateKey and callbackURL (or a ready client).');
    }
    if (verify !== undefined && typeof verify !== 'function') {
      throw optionError('verify', 'must be a function (user, done), (req, user, done) or async (user) => user; or leave it out.');
    }
    if (options.passReqToCallback !== undefined && typeof options.passReqToCallback !== 'boolean') {
      throw optionError('passReqToCallback', 'must be true or false.');
    }

    const { callbackURL, redirectUri } = options;
    if (callbackURL !== undefined && redirectUri !== undefined && callbackURL !== redirectUri) {
      throw optionError('callbackURL', 'and its alias redirectUri differ; give only one of them.');
    }
    const callback = callbackURL ?? redirectUri;
    const callbackOption = callbackURL !== undefined ? 'callbackURL' : 'redirectUri';
    this.callbackURL = callback === undefined ? undefined : checkAbsoluteUrl(callback, callbackOption);

    if (options.clock !== undefined && typeof options.clock !== 'function') {
      throw optionError('clock', 'must be a function returning the time in ms since the epoch.');
    }
    this.clock = options.clock ?? systemClock;

    if (options.client !== undefined) {
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
      if (fields.clientId !== undefined || fields.clientSecret !== undefined || fields.privateKey !== undefined) {
        throw optionError('client', 'was given together with clientId/clientSecret/privateKey; give either a ready client or its fields.');
      }
      this.client = options.client;
    } else {
      for (const field of ['clientId', 'clientSecret', 'privateKey'] as const) {
        const value: unknown = options[field];
        if (typeof value !== 'string' || value.trim() === '') {
          throw optionError(field, 'is required: give the value from your registration with the service (or a ready client).');
        }
      }
      if (this.callbackURL === undefined) {
        throw optionError('callbackURL', 'is required: give the absolute callback URL registered with the service, like "https://app.example/auth/callback".');
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
        ...clientOptions
      } = options;
      this.client = new IdClient({ ...clientOptions, redirectUri: this.callbackURL, clock: this.clock });
    }

    this.scope = options.scope === undefined ? DEFAULT_STRATEGY_SCOPE : checkScope(options.scope, 'scope');

    const sessionKey = options.sessionKey ?? DEFAULT_SESSION_KEY;
    if (typeof sessionKey !== 'string' || sessionKey === '' || sessionKey === 'passport' || sessionKey === 'cookie') {
      throw optionError('sessionKey', 'must be a non-empty string that no other code uses in the session (not "passport" or "cookie").');
    }
    this.sessionKey = sessionKey;

    const max = options.maxPendingLogins ?? DEFAULT_MAX_PENDING_LOGINS;
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 100) {
      throw optionError('maxPendingLogins', 'must be a whole number from 1 to 100 (how many tabs may log in at once).');
    }
    this.maxPendingLogins = max;

    const ttl = options.loginTtl ?? DEFAULT_LOGIN_TTL_MS;
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl < 1000) {
      throw optionError('loginTtl', `is in milliseconds and must be at least 1000; got ${String(ttl)} (10 minutes is 600000).`);
    }
    this.loginTtl = ttl;

    const verifyTimeout = options.verifyTimeout ?? DEFAULT_VERIFY_TIMEOUT_MS;
    if (typeof verifyTimeout !== 'number' || !Number.isFinite(verifyTimeout) || verifyTimeout < 1000) {
      throw optionError(
        'verifyTimeout',
        `is in milliseconds and must be at least 1000; got ${String(verifyTimeout)} (1 minute is 60000).`,
      );
    }
    this.verifyTimeout = verifyTimeout;

    this.passReqToCallback = options.passReqToCallback === true;
    this.verify = verify;
  }

  /**
   * Starts a login, or completes one when the query has `code` or `error`.
   * Per-call options: `returnTo` and `scope`.
   */
  override authenticate(req: Request, options: NdIdAuthenticateOptions = {}): void {
    const query = (req.query ?? {}) as Record<string, unknown>;
    if (query.code !== undefined || query.error !== undefined) {
      // completeLogin reports through success/fail/error; a throw from one of those (a bug in a
      // later handler) must still reach Express rather than become an unhandled rejection.
      this.completeLogin(req, query).catch((err: unknown) => {
        this.error(err instanceof Error ? err : new Error('The sign-in could not be completed.'));
      });
    } else {
      this.startLogin(req, options);
    }
  }

  private sessionOf(req: Request): SessionLike | undefined {
    const session: unknown = (req as { session?: unknown }).session;
    return typeof session === 'object' && session !== null ? (session as SessionLike) : undefined;
  }

  private sessionMissing(): IdError {
    return new IdError(
      'session_missing',
      "Sign-in needs a session, and this request has none: mount express-session (app.use(session({ ... }))) before passport.authenticate('nd-id') and ndIdRouter().",
    );
  }

  private startLogin(req: Request, options: NdIdAuthenticateOptions): void {
    const session = this.sessionOf(req);
    if (session === undefined) return this.error(this.sessionMissing());

    let scope: string | string[];
    let url: string;
    let pending: PendingLogin;
    let state: string;
    try {
      scope = options.scope === undefined ? this.scope : checkScope(options.scope, 'authenticate option scope');
      const { codeVerifier, codeChallenge } = generatePkcePair();
      state = generateState();
      const nonce = generateNonce();
      const result = this.client.authorizationUrl({
        state,
        scope,
        nonce,
        codeChallenge,
        ...(this.callbackURL === undefined ? {} : { redirectUri: this.callbackURL }),
      });
      url = result.url;
      const returnTo = safeReturnTo(options.returnTo);
      pending = {
        codeVerifier,
        nonce: result.nonce ?? nonce,
        createdAt: this.clock(),
        ...(returnTo === undefined ? {} : { returnTo }),
      };
    } catch (err) {
      return this.error(err instanceof Error ? err : new Error('Could not build the authorization URL.'));
    }
    addPendingLogin(session, this.sessionKey, state, pending, {
      max: this.maxPendingLogins,
      ttl: this.loginTtl,
      now: pending.createdAt,
    });
    this.redirect(url);
  }

  private async completeLogin(req: Request, query: Record<string, unknown>): Promise<void> {
    const session = this.sessionOf(req);
    if (session === undefined) return this.error(this.sessionMissing());

    // 1. Take the pending login out first, so whatever happens next, this state cannot be used again.
    const pending = takePendingLogin(session, this.sessionKey, query.state);

    // 2. Unknown state: nothing was started in this browser session. The service is not called.
    if (pending === undefined) {
      return this.fail(
        {
          message: 'This sign-in was not started in this browser, or was already used. Please start again.',
          code: 'state_mismatch',
        } satisfies NdIdFailure,
        403,
      );
    }

    // 3. Too old.
    if (isExpired(pending, this.loginTtl, this.clock())) {
      return this.fail(
        { message: 'This sign-in took too long and has expired. Please start again.', code: 'login_expired' } satisfies NdIdFailure,
        401,
      );
    }

    // 4. The service sent an error instead of a code.
    if (query.error !== undefined) {
      return this.fail(this.providerErrorFailure(query), 401);
    }
    const code = firstString(query.code);
    if (code === undefined || code === '') {
      return this.fail(
        { message: 'The identity service sent back no usable authorization code.', code: 'provider_error' } satisfies NdIdFailure,
        401,
      );
    }

    // 5. Exchange the code, read the attributes.
    let user: NdIdUser;
    try {
      const tokens = await this.client.callback({
        code,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
        ...(this.callbackURL === undefined ? {} : { redirectUri: this.callbackURL }),
      });
      const info = await this.client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken });
      user = { sub: info.sub, data: info.data, claims: tokens.claims };
    } catch (err) {
      if (err instanceof IdError && !isServerSideFailure(err)) {
        return this.fail({ message: err.message, code: err.code } satisfies NdIdFailure, 401);
      }
      return this.error(err instanceof Error ? err : new Error('The sign-in could not be completed.'));
    }

    let outcome: VerifyOutcome;
    try {
      outcome = await this.runVerify(req, user);
    } catch (err) {
      return this.error(err instanceof Error ? err : new Error('The verify callback failed with a value that is not an Error.'));
    }
    if (outcome.user === false) {
      const info = outcome.info;
      const details: NdIdInfo = typeof info === 'object' && info !== null ? info : {};
      const message =
        typeof info === 'string' ? info : typeof details.message === 'string' ? details.message : 'Your account may not sign in here.';
      return this.fail({ ...details, message, code: 'user_refused' } satisfies NdIdFailure, 401);
    }
    const successInfo: NdIdSuccessInfo = pending.returnTo === undefined ? {} : { returnTo: pending.returnTo };
    this.success(outcome.user, successInfo);
  }

  /** The failure for `?error=...`: `access_denied`, or `provider_error` carrying the service's code and description. */
  private providerErrorFailure(query: Record<string, unknown>): NdIdFailure {
    const error = firstString(query.error) ?? '';
    if (error === 'access_denied') {
      return { message: 'Sign-in was cancelled or refused in the app.', code: 'access_denied' };
    }
    // RFC 6749 error codes are printable ASCII; anything else is not echoed.
    const providerCode = /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,64}$/.test(error) ? error : 'unknown_error';
    const rawDescription = firstString(query.error_description);
    const description =
      rawDescription === undefined ? undefined : rawDescription.replace(/[^\x20-\x7e]/g, '').slice(0, 200);
    return {
      message: `The identity service could not complete the sign-in (${providerCode}).`,
      code: 'provider_error',
      error: providerCode,
      ...(description === undefined ? {} : { errorDescription: description }),
    };
  }

  /**
   * Runs the verify callback; resolves with the user or `false`. `done` is always passed and
   * always answers; a returned promise also answers once it resolves to a value other than
   * `undefined` (`null` and `false` refuse), or rejects. The first answer counts. A verify that
   * has not answered within `verifyTimeout` ends the login with an error.
   */
  private runVerify(req: Request, user: NdIdUser): Promise<VerifyOutcome> {
    const verify = this.verify;
    if (verify === undefined) {
      const defaultUser: NdIdDefaultUser = { sub: user.sub, data: user.data };
      return Promise.resolve({ user: defaultUser });
    }
    return new Promise<VerifyOutcome>((resolve, reject) => {
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (u: unknown, info?: NdIdInfo | string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ user: u === undefined || u === null || u === false ? false : (u as Express.User), ...(info === undefined ? {} : { info }) });
      };
      const failWith = (err: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      };
      const done: NdIdVerifyDone = (err, u, info) => {
        if (err !== null && err !== undefined) failWith(err);
        else settle(u, info);
      };
      const args: unknown[] = this.passReqToCallback ? [req, user, done] : [user, done];
      try {
        const returned: unknown = (verify as (...a: unknown[]) => unknown)(...args);
        // `verify.length` is not trusted to tell the forms apart: wrappers with rest or default
        // parameters report fewer. A plain return value is never the answer (a callback-style
        // verify may return anything, e.g. a database handle); only `done` is. A promise answers
        // when it resolves to something other than `undefined`; `undefined` is what an async
        // verify that calls `done` later resolves to, so then `done` decides.
        if (isThenable(returned)) {
          returned.then((u) => {
            if (u !== undefined) settle(u);
          }, failWith);
        }
      } catch (err) {
        failWith(err);
      }
      if (!settled) {
        timer = setTimeout(() => {
          failWith(
            new Error(
              `NdIdStrategy: the verify callback neither called done nor resolved to a user within ${this.verifyTimeout} ms (verifyTimeout).`,
            ),
          );
        }, this.verifyTimeout);
        timer.unref?.();
      }
    });
  }
}
