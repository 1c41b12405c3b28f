/**
 * The relying party's back-channel logout receiver (OpenID Connect Back-Channel Logout 1.0),
 * framework-neutral: it takes the POSTed form, validates the `logout_token` (the client checks
 * signature and claims; here its `jti` is used once across instances through the replay store),
 * ends the matching sessions of its provider through the session policy's sign-out store, and
 * gives the answer the spec asks for: 200, or 400 with `invalid_request`, never cached. A logout
 * whose sessions could not be ended gives its `jti` back, so the provider's retry is taken.
 * Adapters only translate.
 */
import { validateLogoutToken, type LogoutTokenChecks, type LogoutTokenClaims } from '../client/logout-token.js';
import { IdError, isIdError } from '../errors.js';
import { checkLogger, createLog, LOG_EVENTS, type Log, type Logger } from '../log.js';
import { checkOptionNames } from '../options-check.js';
import { optionError } from './options.js';
import { processReplayStore, type ReplayStore } from './replay-store.js';
import type { SessionPolicy } from './session-policy.js';
import { MAX_BACKCHANNEL_LOGOUT_BODY_BYTES, readBackchannelBody } from './backchannel-request.js';

export { MAX_BACKCHANNEL_LOGOUT_BODY_BYTES, readBackchannelBody } from './backchannel-request.js';

/** Default path of the back-channel logout route, below where the routes are mounted. */
export const DEFAULT_BACKCHANNEL_LOGOUT_PATH = '/backchannel-logout';
/** Default oldest logout token accepted: issued at most 5 minutes ago, in seconds. */
export const DEFAULT_MAX_LOGOUT_TOKEN_AGE_S = 300;

/** What the receiver needs from a client: an `IdClient` or an `NdIdStrategy` is one. */
export interface LogoutTokenValidator {
  /** What its provider's logout tokens are checked against (issuer, client, allowlist, keys, clock). */
  logoutTokenChecks(): Promise<LogoutTokenChecks>;
}

/** Options of {@link createBackchannelLogout}. */
export interface BackchannelLogoutOptions {
  /** The `IdClient` or `NdIdStrategy` whose provider sends the logout tokens. */
  client: LogoutTokenValidator;
  /** The session rules whose sign-out store ends the sessions: the same one given to the router and guards. Required. */
  sessions: SessionPolicy;
  /** Where used `jti`s are kept: the same shared store as the logins' (`createRedisReplayStore`) across instances. */
  replayStore?: ReplayStore;
  /** Oldest logout token accepted, in seconds after its `iat`. Default 300. */
  maxTokenAge?: number;
  /** Where to log. Default as for the login flow. */
  logger?: Logger;
}

/** The request as the receiver needs it: its media type and its body (raw text, or a parsed form). */
export interface BackchannelLogoutRequest {
  /** The `Content-Type` header, when there is one. */
  contentType?: string | undefined;
  /** The raw form text, or the body a form parser made (`req.body` of `express.urlencoded()`). */
  body: unknown;
}

/** The answer to send: status, headers and body, as the spec says. */
export interface BackchannelLogoutAnswer {
  status: 200 | 400 | 500 | 503;
  headers: Readonly<Record<string, string>>;
  /** Empty on 200; the JSON error otherwise. */
  body: string;
  /** The error code on a refusal (`logout_token_replayed`, ...). */
  code?: string;
}

/** A back-channel logout receiver, built once and shared by the routes of every adapter. */
export interface BackchannelLogout {
  /** Validates the request's logout token, ends the matching sessions, and gives the answer. Never throws. */
  handle(request: BackchannelLogoutRequest): Promise<BackchannelLogoutAnswer>;
  /** The same for a fetch-standard POST: the form read (at most 32 KiB), the answer as a `Response`. */
  fetch(request: Request): Promise<Response>;
}

const OK_HEADERS = Object.freeze({ 'Cache-Control': 'no-store' });
const ERROR_HEADERS = Object.freeze({ 'Cache-Control': 'no-store', 'Content-Type': 'application/json' });
/** Key-set answers that mean the token names a key the provider does not have: the token is wrong, not the service. */
const TOKEN_KEY_CODES = new Set(['id_token_key_not_found', 'id_token_kid_ambiguous']);

function checkOptions(options: BackchannelLogoutOptions): void {
  const who = 'createBackchannelLogout';
  if (typeof options !== 'object' || options === null)
    throw optionError(who, 'options', 'must be an object with client (the IdClient or NdIdStrategy).');
  checkOptionNames(options, 'createBackchannelLogout()');
  const client = options.client as Partial<LogoutTokenValidator> | undefined;
  if (typeof client !== 'object' || client === null || typeof client.logoutTokenChecks !== 'function')
    throw optionError(who, 'client', 'must be the IdClient or NdIdStrategy whose provider sends the logout tokens.');
  const sessions = options.sessions as Partial<SessionPolicy> | undefined;
  if (sessions === undefined)
    throw optionError(
      who,
      'sessions',
      'is required: give the createSessionPolicy({ ... }) your router and guards use, so logouts reach their sign-out store (createSessionPolicy() when they use the defaults).',
    );
  if (typeof sessions !== 'object' || sessions === null || typeof sessions.endSessionsOf !== 'function')
    throw optionError(who, 'sessions', 'must be createSessionPolicy({ ... }), the same one given to the router.');
  if (options.replayStore !== undefined && typeof options.replayStore?.consume !== 'function')
    throw optionError(who, 'replayStore', 'must have a consume method (see createRedisReplayStore).');
  const age = options.maxTokenAge;
  if (age !== undefined && (typeof age !== 'number' || !Number.isInteger(age) || age < 10 || age > 3600))
    throw optionError(who, 'maxTokenAge', 'is in seconds, a whole number from 10 to 3600 (default 300).');
}

/**
 * Creates the receiver; give it to `ndIdRouter({ backchannelLogout })` or the fetch handlers, and
 * register `{mount}/backchannel-logout` as the client's `backchannel_logout_uri`.
 *
 * ```ts
 * const backchannelLogout = createBackchannelLogout({ client: strategy, sessions, replayStore });
 * app.use('/auth', ndIdRouter({ sessions, backchannelLogout }));
 * ```
 * @throws TypeError naming the option when one is wrong.
 */
export function createBackchannelLogout(options: BackchannelLogoutOptions): BackchannelLogout {
  checkOptions(options);
  const { client, sessions } = options;
  const replayStore = options.replayStore ?? processReplayStore;
  const maxTokenAge = options.maxTokenAge ?? DEFAULT_MAX_LOGOUT_TOKEN_AGE_S;
  const log = createLog(checkLogger(options.logger, 'createBackchannelLogout'), 'backchannel-logout');
  const failed = failedLogouts();

  async function logOut(request: BackchannelLogoutRequest): Promise<void> {
    const token = logoutTokenOf(request);
    const checks = await client.logoutTokenChecks();
    const claims = await validateLogoutToken(token, { ...checks, maxAge: maxTokenAge });
    // Kept until no clock could still take the token: its age limit and the skew on both sides.
    const ttlMs = (maxTokenAge + 2 * checks.clockTolerance + 1) * 1000;
    const key = `backchannel-logout\n${claims.iss}\n${claims.jti}`;
    if (!(await storeCall(() => replayStore.consume(key, ttlMs))) && !failed.take(key))
      throw new IdError('logout_token_replayed', 'This logout token (its jti) was used already.');
    try {
      await storeCall(() => endSessions(sessions, claims));
    } catch (err) {
      await giveBack(replayStore, failed, key, ttlMs);
      throw err;
    }
    log.write(
      'info',
      { event: LOG_EVENTS.backchannelLogout, by: claims.sid === undefined ? 'sub' : 'sid' },
      "The provider ended a person's session: the matching sessions end at their next request",
    );
  }

  async function handle(request: BackchannelLogoutRequest): Promise<BackchannelLogoutAnswer> {
    try {
      await logOut(request);
      return { status: 200, headers: OK_HEADERS, body: '' };
    } catch (err) {
      return refusal(err, log);
    }
  }

  return {
    handle,
    async fetch(request) {
      if (request.method !== 'POST')
        return new Response(null, { status: 405, headers: { Allow: 'POST', 'Cache-Control': 'no-store' } });
      const declared = Number(request.headers.get('content-length') ?? '0');
      const body =
        request.body === null || declared > MAX_BACKCHANNEL_LOGOUT_BODY_BYTES
          ? ''
          : await readBackchannelBody(request.body as unknown as AsyncIterable<Uint8Array>);
      const answer = await handle({ contentType: request.headers.get('content-type') ?? undefined, body });
      return new Response(answer.status === 200 ? null : answer.body, {
        status: answer.status,
        headers: answer.headers,
      });
    },
  };
}

/**
 * Back-Channel Logout 1.0, 2.4 and 2.7: with a `sid`, the sessions of that provider session end
 * (and, with a `sub` too, that person's sessions that recorded no `sid`); with only a `sub`,
 * every session of that person. Only the sessions of the token's provider (`iss`).
 */
async function endSessions(sessions: SessionPolicy, target: LogoutTokenClaims): Promise<void> {
  if (target.sid === undefined) return sessions.endSessionsOf('sign-out', target.sub as string, target.iss);
  await sessions.endSessionsOf('sid', target.sid, target.iss);
  if (target.sub !== undefined) await sessions.endSessionsOf('nosid', target.sub, target.iss);
}

/** Most failed logouts remembered for their retry, per receiver. */
const MAX_FAILED_LOGOUTS = 1000;

/**
 * The logouts whose sessions could not be ended and whose `jti` the replay store could not give
 * back (it has no `release`, or that failed too): their retry to this instance is taken, once,
 * until the token is too old to be taken anyway. Only valid tokens reach it.
 */
function failedLogouts() {
  const keys = new Map<string, number>(); // key → until when; insertion order is age order
  return {
    note(key: string, ttlMs: number, now = Date.now()): void {
      for (const [old, until] of keys) if (until <= now || keys.size >= MAX_FAILED_LOGOUTS) keys.delete(old);
      keys.set(key, now + ttlMs);
    },
    take(key: string): boolean {
      const until = keys.get(key);
      keys.delete(key);
      return until !== undefined && until > Date.now();
    },
  };
}

/**
 * Gives a failed logout's `jti` back to the replay store (`release`), so the provider's retry is
 * taken on any instance; when the store cannot, this receiver takes the retry itself. A
 * successful logout never gives its `jti` back: it stays used once only across instances.
 */
async function giveBack(
  store: ReplayStore,
  failed: ReturnType<typeof failedLogouts>,
  key: string,
  ttlMs: number,
): Promise<void> {
  try {
    if (typeof store.release === 'function') return await store.release(key);
  } catch {
    // noted below
  }
  failed.note(key, ttlMs);
}

/** `value` when it is a receiver made by {@link createBackchannelLogout}, else a TypeError naming `who` and `option`. */
export function checkBackchannelLogout(value: unknown, who: string, option: string): BackchannelLogout {
  if (typeof value !== 'object' || value === null || typeof (value as Partial<BackchannelLogout>).handle !== 'function')
    throw new TypeError(`${who}: ${option} must be createBackchannelLogout({ client, sessions }).`);
  return value as BackchannelLogout;
}

/** A store call whose failure is `session_store_unavailable`. */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw new IdError('session_store_unavailable', 'The replay or sign-out store failed.', { cause: err });
  }
}

/** The one `logout_token` of a form body (raw or parsed). */
function logoutTokenOf(request: BackchannelLogoutRequest): string {
  const type = (request.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    throw new IdError('logout_token_missing', 'The request is not a form (application/x-www-form-urlencoded).');
  const { body } = request;
  let values: unknown[];
  if (typeof body === 'string') values = new URLSearchParams(body).getAll('logout_token');
  else if (typeof body === 'object' && body !== null && Object.hasOwn(body, 'logout_token')) {
    const value = (body as Record<string, unknown>).logout_token;
    values = Array.isArray(value) ? value : [value];
  } else values = [];
  if (values.length !== 1 || typeof values[0] !== 'string' || values[0] === '')
    throw new IdError('logout_token_missing', 'The form carries no single logout_token.');
  return values[0];
}

/** The spec's error answer (400 `invalid_request` for a bad request), logged with its code. */
function refusal(err: unknown, log: Log): BackchannelLogoutAnswer {
  const idError = isIdError(err) ? err : undefined;
  const code = idError?.code ?? 'server_error';
  const badRequest = code.startsWith('logout_token_') || TOKEN_KEY_CODES.has(code);
  const status = badRequest ? 400 : idError === undefined ? 500 : 503;
  const error = badRequest ? 'invalid_request' : idError === undefined ? 'server_error' : 'temporarily_unavailable';
  const message = idError?.message ?? 'The logout could not be completed.';
  log.write(
    badRequest ? 'warn' : 'error',
    { event: LOG_EVENTS.backchannelLogoutRefused, code },
    `Back-channel logout refused: ${message}`,
  );
  const body = JSON.stringify({ error, error_description: message, code });
  return { status, headers: ERROR_HEADERS, body, code };
}
