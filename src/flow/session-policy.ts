/**
 * What keeps a signed-in session valid: the sign-in record kept at sign-in, checked on each
 * protected request against `maxSessionAge`, `idleTimeout` and "signed out everywhere".
 */
import { hash } from 'node:crypto';
import type { Clock } from '../clock.js';
import { checkLogger, createLog, LOG_EVENTS, type Log, type Logger } from '../log.js';
import { checkClock, optionError } from './options.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import type { FlowSession } from './session.js';
import { processSignOutStore, type SignOutStore } from './sign-out-store.js';

/** Default absolute session lifetime: 12 hours (NIST SP 800-63B re-authentication at AAL3, and AAL2 in 2017). */
export const DEFAULT_MAX_SESSION_AGE_MS = 12 * 60 * 60 * 1000;
/** Default idle timeout: 30 minutes (NIST SP 800-63B 2017, AAL2). */
export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60 * 1000;
/** Default shortest time between two writes of "last seen": 1 minute, in ms (at most one session write per minute per person). */
export const DEFAULT_TOUCH_INTERVAL_MS = 60 * 1000;
/** Session key of the sign-in record. */
export const DEFAULT_SIGN_IN_KEY = 'nd-id.signin';
/** Slack for `auth_time` against this server's clock in step-up checks: 10 s, in ms (auth_time counts whole seconds). */
export const STEP_UP_TOLERANCE_MS = 10 * 1000;
/** How long "signed out everywhere" is kept when `maxSessionAge` is off: 400 days, the longest a browser keeps a cookie. */
export const SIGN_OUT_RETENTION_WITHOUT_MAX_AGE_MS = 400 * 24 * 60 * 60 * 1000;

/** What the session keeps about the sign-in; times in ms since the epoch. */
export interface SignInRecord {
  /** The person's identifier for this client. */
  sub: string;
  /** When this session's sign-in completed. */
  signedInAt: number;
  /** When the person last authenticated on the phone (the ID token's `auth_time`), when the token said. */
  authTime?: number;
  /** When the session was last seen by a protected route (written at most once per `touchInterval`). */
  seenAt: number;
  /** The provider's session id (the ID token's `sid`), when the token carried one: a back-channel logout by `sid` ends it. */
  sid?: string;
  /** The provider that signed the person in (the ID token's `iss`); absent in records kept by earlier versions. */
  iss?: string;
}

/** Why a session was ended by the library. */
export type SessionEndReason =
  | 'max_session_age'
  | 'idle_timeout'
  | 'signed_out_everywhere'
  | 'provider_logout'
  | 'other_person';

/** The answer of {@link SessionPolicy.check}. */
export type SessionCheck =
  | { signedIn: true; record: SignInRecord; touched: boolean }
  | { signedIn: false; ended?: SessionEndReason };

/** How a completed step-up login compares with the session it was for. */
export type StepUpOutcome = 'ok' | 'not_recent' | 'other_person';

/** Options of {@link createSessionPolicy}. */
export interface SessionPolicyOptions {
  /** Absolute lifetime from sign-in, **in ms**, or `false` for none. Default 12 hours. */
  maxSessionAge?: number | false;
  /** Idle timeout, **in ms**, rolling on each protected request, or `false` for none. Default 30 minutes. */
  idleTimeout?: number | false;
  /** Shortest time between two writes of "last seen", in ms. Default 1 minute (and never more than a tenth of `idleTimeout`). */
  touchInterval?: number;
  /** Where "signed out everywhere" times live: memory (default, this process) or `createRedisSignOutStore(redis)`. */
  signOutStore?: SignOutStore;
  /** Session key of the sign-in record. Default `'nd-id.signin'`. */
  recordKey?: string;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: Clock;
  /** Where to log (pino, console, Nest's Logger). Default as for the login flow. */
  logger?: Logger;
}

/** The rules of signed-in sessions, shared by the router, the guards and `signOutEverywhere`. */
export interface SessionPolicy {
  /** Absolute lifetime in ms, or false. */
  readonly maxSessionAge: number | false;
  /** Idle timeout in ms, or false. */
  readonly idleTimeout: number | false;
  /** Shortest time between two "last seen" writes, in ms. */
  readonly touchInterval: number;
  /** Session key of the sign-in record. */
  readonly recordKey: string;
  /** The clock. */
  readonly clock: Clock;
  /** The policy's log. */
  readonly log: Log;
  /** Keeps the record of a sign-in that just completed in `session`, and returns it. */
  start(
    session: FlowSession,
    user: { sub: string; authTime?: number; signedInAt?: number; sid?: string; iss?: string; claims?: object },
  ): SignInRecord;
  /** The record kept in `session`, when there is a well-formed one. */
  read(session: FlowSession): SignInRecord | undefined;
  /**
   * Whether `session` is signed in now; on `ended` the adapter destroys the session and calls
   * {@link ended}. Writes "last seen" at most once per interval. Rejects when the sign-out store fails.
   */
  check(session: FlowSession): Promise<SessionCheck>;
  /** True when the person authenticated within the last `seconds` (with {@link STEP_UP_TOLERANCE_MS} of slack). */
  isRecent(record: SignInRecord, seconds: number): boolean;
  /** Judges a completed login that asked for `maxAge` against the record of the session it was for. */
  stepUpOutcome(
    prior: SignInRecord | undefined,
    user: { sub: string; authTime?: number },
    maxAge: number,
  ): StepUpOutcome;
  /** Logs that a session was ended by `reason` (no personal data). */
  ended(reason: SessionEndReason): void;
  /** Logs a sign-out by the person. */
  signedOut(): void;
  /**
   * Ends, at their next request on every instance sharing the sign-out store, every session of
   * `sub` started until now: at the provider `options.issuer` names, or, without it, at every provider.
   */
  signOutEverywhere(sub: string, options?: SignOutEverywhereOptions): Promise<void>;
  /**
   * Ends, at their next request on every instance sharing the sign-out store, the sessions of the
   * provider `issuer` started until now that `kind` and `value` name: a person's (`sign-out`, the
   * `sub`), a provider session's (`sid`), or a person's that recorded no `sid` (`nosid`, the
   * `sub`). For back-channel logout.
   */
  endSessionsOf(kind: StoreKeyKind, value: string, issuer: string): Promise<void>;
}

/** Options of {@link SessionPolicy.signOutEverywhere}. */
export interface SignOutEverywhereOptions {
  /**
   * The provider whose person `sub` is (its issuer, the ID token's `iss`): give it when the app
   * signs people in with several providers, so a person of another provider with the same `sub`
   * keeps their sessions. Without it, `sub` is signed out at every provider.
   */
  issuer?: string;
}

function checkDuration(value: unknown, option: string, example: string): number | false {
  if (value === false) return false;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1000) {
    throw optionError(
      'createSessionPolicy',
      option,
      `is in milliseconds (at least 1000) or false to turn it off; got ${String(value)} (${example}).`,
    );
  }
  return value;
}

function isSignInRecord(value: unknown): value is SignInRecord {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.sub === 'string' &&
    v.sub !== '' &&
    typeof v.signedInAt === 'number' &&
    Number.isFinite(v.signedInAt) &&
    typeof v.seenAt === 'number' &&
    Number.isFinite(v.seenAt) &&
    (v.authTime === undefined || (typeof v.authTime === 'number' && Number.isFinite(v.authTime))) &&
    (v.sid === undefined || typeof v.sid === 'string') &&
    (v.iss === undefined || (typeof v.iss === 'string' && v.iss !== ''))
  );
}

/** Most store keys remembered, so a busy person's key is not hashed on every request. */
const STORE_KEY_CACHE = 1000;
const storeKeys = new Map<string, string>();

/**
 * What a sign-out store key stands for: every session of a person (`sign-out`), the sessions of
 * one provider session (`sid`), or a person's sessions that recorded no `sid` (`nosid`).
 */
export type StoreKeyKind = 'sign-out' | 'sid' | 'nosid';

/**
 * Whose sessions a store key reaches: those of one provider (its issuer); `unscoped`, the records
 * kept by earlier versions, which name no provider; or `everywhere`, every record of the value at
 * every provider (the key earlier versions wrote, and `signOutEverywhere` without an issuer).
 */
type KeyScope = { issuer: string } | 'unscoped' | 'everywhere';

/** The store key of a person or provider session: a hash, so the store never holds the `sub`, `sid` or issuer itself. */
function storeKey(kind: StoreKeyKind, value: string, scope: KeyScope): string {
  const input =
    scope === 'everywhere'
      ? `nd-id ${kind}\n${value}` // as earlier versions wrote it
      : scope === 'unscoped'
        ? `nd-id ${kind}@unscoped\n${value}`
        : `nd-id ${kind}@iss\n${JSON.stringify([scope.issuer, value])}`;
  let key = storeKeys.get(input);
  if (key === undefined) {
    key = hash('sha256', input, 'base64url');
    if (storeKeys.size >= STORE_KEY_CACHE) storeKeys.clear();
    storeKeys.set(input, key);
  }
  return key;
}

/** The ID token's `sid`, when it is a usable one. */
function sidOf(user: { sid?: string; claims?: object }): string | undefined {
  const sid = user.sid ?? (user.claims as { sid?: unknown } | undefined)?.sid;
  return typeof sid === 'string' && sid !== '' && sid.length <= 256 ? sid : undefined;
}

/** The ID token's `iss`, when there is one. */
function issuerOf(user: { iss?: string; claims?: object }): string | undefined {
  const iss = user.iss ?? (user.claims as { iss?: unknown } | undefined)?.iss;
  return typeof iss === 'string' && iss !== '' ? iss : undefined;
}

/**
 * The store keys that can end `record`, in one read: the person's and their provider session's,
 * each in the record's provider and everywhere (a record kept by an earlier version names no
 * provider: its keys unscoped and everywhere). Even places are a person's, odd ones a provider session's.
 */
function recordKeys(record: SignInRecord): string[] {
  const own: KeyScope = record.iss === undefined ? 'unscoped' : { issuer: record.iss };
  const [kind, value]: [StoreKeyKind, string] = record.sid === undefined ? ['nosid', record.sub] : ['sid', record.sid];
  return [
    storeKey('sign-out', record.sub, own),
    storeKey(kind, value, own),
    storeKey('sign-out', record.sub, 'everywhere'),
    storeKey(kind, value, 'everywhere'),
  ];
}

/** Whether `record` was ended by a sign-out everywhere or a back-channel logout (one read of the store for all its keys). */
async function signedOutByStore(
  store: SignOutStore,
  record: SignInRecord,
): Promise<'signed_out_everywhere' | 'provider_logout' | undefined> {
  const keys = recordKeys(record);
  const times = await (store.signedOutBeforeEach?.(keys) ?? Promise.all(keys.map((k) => store.signedOutBefore(k))));
  const ended = times.findIndex((at) => at !== undefined && record.signedInAt <= at);
  return ended < 0 ? undefined : ended % 2 ? 'provider_logout' : 'signed_out_everywhere';
}

const END_MESSAGES: Record<SessionEndReason, string> = {
  max_session_age: 'Session ended: its maximum age (maxSessionAge) passed',
  idle_timeout: 'Session ended: idle for longer than idleTimeout',
  signed_out_everywhere: 'Session ended: the person was signed out everywhere after it started',
  provider_logout: 'Session ended: provider logout',
  other_person: 'Session ended: a different person completed the re-authentication',
};

/**
 * Creates the rules of signed-in sessions.
 *
 * ```ts
 * const sessions = createSessionPolicy({ maxSessionAge: 8 * 60 * 60 * 1000, idleTimeout: 15 * 60 * 1000 });
 * app.use('/auth', ndIdRouter({ sessions }));
 * app.get('/account', requireSignIn({ sessions }), showAccount);
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function createSessionPolicy(options: SessionPolicyOptions = {}): SessionPolicy {
  const who = 'createSessionPolicy';
  if (typeof options !== 'object' || options === null)
    throw optionError(who, 'options', 'must be an object (or left out).');
  checkOptionNames(options, 'createSessionPolicy()');
  options = ownOptions(options);
  const rules = resolvePolicy(options, who);
  const { maxSessionAge, idleTimeout, touchInterval, recordKey, clock, log } = rules;
  const read = (session: FlowSession) => readRecord(rules, session);
  return {
    maxSessionAge,
    idleTimeout,
    touchInterval,
    recordKey,
    clock,
    log,
    read,
    start(session, user) {
      const at = user.signedInAt ?? clock();
      const sid = sidOf(user);
      const iss = issuerOf(user);
      const record: SignInRecord = {
        sub: user.sub,
        signedInAt: at,
        ...(user.authTime === undefined ? {} : { authTime: user.authTime }),
        seenAt: at,
        ...(sid === undefined ? {} : { sid }),
        ...(iss === undefined ? {} : { iss }),
      };
      session.set(recordKey, record);
      return record;
    },
    check: (session) => checkSession(rules, session),
    isRecent(record, seconds) {
      return record.authTime !== undefined && clock() - record.authTime <= seconds * 1000 + STEP_UP_TOLERANCE_MS;
    },
    stepUpOutcome(prior, user, maxAge) {
      if (prior !== undefined && prior.sub !== user.sub) return 'other_person';
      if (user.authTime === undefined || clock() - user.authTime > maxAge * 1000 + STEP_UP_TOLERANCE_MS)
        return 'not_recent';
      return 'ok';
    },
    ended(reason) {
      log.write('info', { event: LOG_EVENTS.sessionEnded, reason }, END_MESSAGES[reason]);
    },
    signedOut() {
      log.write('info', { event: LOG_EVENTS.signedOut }, 'Signed out');
    },
    signOutEverywhere: (sub, options) => signOutPerson(rules, sub, options),
    endSessionsOf: (kind, value, issuer) => endSessionsOf(rules, kind, value, issuer),
  };
}

/** What the steps of one policy share: its checked options. */
type PolicyRules = ReturnType<typeof resolvePolicy>;

/** Options resolution: the lifetimes, then the store, the record's key, the clock and the log. */
function resolvePolicy(options: SessionPolicyOptions, who: string) {
  const { maxSessionAge, idleTimeout, touchInterval } = lifetimes(options, who);
  const signOutStore = options.signOutStore ?? processSignOutStore;
  if (
    typeof signOutStore !== 'object' ||
    signOutStore === null ||
    typeof signOutStore.signOutBefore !== 'function' ||
    typeof signOutStore.signedOutBefore !== 'function'
  ) {
    throw optionError(
      who,
      'signOutStore',
      'must have signOutBefore and signedOutBefore methods (see createRedisSignOutStore).',
    );
  }
  const recordKey = options.recordKey ?? DEFAULT_SIGN_IN_KEY;
  if (typeof recordKey !== 'string' || recordKey === '' || recordKey === 'passport' || recordKey === 'cookie') {
    throw optionError(
      who,
      'recordKey',
      'must be a non-empty string no other code uses in the session (not "passport" or "cookie").',
    );
  }
  const clock = checkClock(options.clock, who);
  const log = createLog(checkLogger(options.logger, who), 'sessions');
  const retention = maxSessionAge === false ? SIGN_OUT_RETENTION_WITHOUT_MAX_AGE_MS : maxSessionAge;
  return { maxSessionAge, idleTimeout, touchInterval, signOutStore, recordKey, clock, log, retention };
}

/** Options resolution, the lifetimes: the maximum age, the idle timeout and how often "last seen" is written. */
function lifetimes(options: SessionPolicyOptions, who: string) {
  const maxSessionAge = checkDuration(
    options.maxSessionAge ?? DEFAULT_MAX_SESSION_AGE_MS,
    'maxSessionAge',
    '12 hours is 43200000',
  );
  const idleTimeout = checkDuration(
    options.idleTimeout ?? DEFAULT_IDLE_TIMEOUT_MS,
    'idleTimeout',
    '30 minutes is 1800000',
  );
  const touchOption =
    options.touchInterval ??
    Math.min(
      DEFAULT_TOUCH_INTERVAL_MS,
      idleTimeout === false ? DEFAULT_TOUCH_INTERVAL_MS : Math.floor(idleTimeout / 10),
    );
  if (typeof touchOption !== 'number' || !Number.isFinite(touchOption) || touchOption < 0) {
    throw optionError(who, 'touchInterval', 'is in milliseconds and must be 0 or more (1 minute is 60000).');
  }
  if (idleTimeout !== false && touchOption >= idleTimeout) {
    throw optionError(
      who,
      'touchInterval',
      `must be shorter than idleTimeout (${idleTimeout} ms), or an active person would time out.`,
    );
  }
  return { maxSessionAge, idleTimeout, touchInterval: touchOption };
}

function readRecord(rules: PolicyRules, session: FlowSession): SignInRecord | undefined {
  const value = session.get(rules.recordKey);
  return isSignInRecord(value) ? value : undefined;
}

/** Whether the session still has its person: not too old, not idle, not signed out (everywhere or by the provider); "last seen" kept. */
async function checkSession(rules: PolicyRules, session: FlowSession): Promise<SessionCheck> {
  const { maxSessionAge, idleTimeout } = rules;
  const record = readRecord(rules, session);
  if (record === undefined) return { signedIn: false };
  const now = rules.clock();
  if (maxSessionAge !== false && now - record.signedInAt >= maxSessionAge)
    return { signedIn: false, ended: 'max_session_age' };
  if (idleTimeout !== false && now - record.seenAt >= idleTimeout) return { signedIn: false, ended: 'idle_timeout' };
  const signedOut = await signedOutByStore(rules.signOutStore, record);
  if (signedOut !== undefined) return { signedIn: false, ended: signedOut };
  if (idleTimeout !== false && now - record.seenAt >= rules.touchInterval) {
    const touched = { ...record, seenAt: now };
    session.set(rules.recordKey, touched);
    return { signedIn: true, record: touched, touched: true };
  }
  return { signedIn: true, record, touched: false };
}

async function signOutPerson(rules: PolicyRules, sub: string, options: SignOutEverywhereOptions = {}): Promise<void> {
  if (typeof sub !== 'string' || sub === '')
    throw new TypeError("signOutEverywhere: sub must be the person's identifier (user.sub).");
  if (typeof options !== 'object' || options === null)
    throw new TypeError('signOutEverywhere: options must be an object like { issuer }, or left out.');
  checkOptionNames(options, 'signOutEverywhere()');
  const { issuer } = options;
  if (issuer !== undefined && (typeof issuer !== 'string' || issuer === ''))
    throw new TypeError(
      "signOutEverywhere: issuer must be the provider's issuer (the ID token's iss), or left out to sign the person out at every provider.",
    );
  await (issuer === undefined
    ? rules.signOutStore.signOutBefore(storeKey('sign-out', sub, 'everywhere'), rules.clock(), rules.retention)
    : endSessionsOf(rules, 'sign-out', sub, issuer));
  rules.log.write(
    'info',
    { event: LOG_EVENTS.signedOutEverywhere },
    'Every session of one person will end at its next request',
  );
}

/**
 * Ends, at their next request, the sessions of `issuer` the store key of `kind` and `value`
 * names, and those of records kept by earlier versions (which name no provider) under the same
 * key: such a record could be that provider's.
 */
async function endSessionsOf(rules: PolicyRules, kind: StoreKeyKind, value: string, issuer: string): Promise<void> {
  const at = rules.clock();
  await Promise.all([
    rules.signOutStore.signOutBefore(storeKey(kind, value, { issuer }), at, rules.retention),
    rules.signOutStore.signOutBefore(storeKey(kind, value, 'unscoped'), at, rules.retention),
  ]);
}

let defaultPolicy: SessionPolicy | undefined;

/** The policy used wherever none is given: the defaults, this process's sign-out store, the system clock. */
export function defaultSessionPolicy(): SessionPolicy {
  return (defaultPolicy ??= createSessionPolicy());
}

/**
 * Ends every session of `sub` at its next request, on every instance sharing the policy's
 * sign-out store (e.g. after the person reports their phone stolen).
 *
 * ```ts
 * await signOutEverywhere(user.sub, sessions);
 * ```
 */
export function signOutEverywhere(
  sub: string,
  policy: SessionPolicy = defaultSessionPolicy(),
  options?: SignOutEverywhereOptions,
): Promise<void> {
  return policy.signOutEverywhere(sub, options);
}
