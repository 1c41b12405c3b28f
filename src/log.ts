/**
 * Every log line of the library goes through here. Any logger with `debug`/`info`/`warn`/`error`
 * plugs in, called `(object, message)` (pino's form). Without one, `warn` and `error` go to
 * `console.error` once per cause per minute (never silent, never a flood) and `debug` to
 * `DEBUG=passport-nd-id*`. Redaction is here, so no call site can leak a secret.
 */
import { randomBytes } from 'node:crypto';
import type * as NodeModule from 'node:module';

/** One namespace of the `debug` package: a printf-like function and whether it is on. */
interface DebugOut {
  (format: string, ...args: unknown[]): void;
  readonly enabled: boolean;
}

/** A `debug` namespace that is never on: where the `debug` package cannot be loaded. */
const DEBUG_OFF: DebugOut = Object.assign(() => undefined, { enabled: false });

let debugFactory: ((namespace: string) => DebugOut) | undefined;

/**
 * The `debug` package, loaded at the first log rather than at import, as loading it is costly
 * (docs/internals.md); synchronously, so `DEBUG` works from the first event. No `require` (a
 * worker): `debug` output is off.
 */
function loadDebug(): (namespace: string) => DebugOut {
  if (debugFactory !== undefined) return debugFactory;
  let factory: (namespace: string) => DebugOut = () => DEBUG_OFF;
  try {
    const host = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
    const nodeModule = host?.getBuiltinModule?.('node:module') as typeof NodeModule | undefined;
    const mod = nodeModule?.createRequire(__filename)('debug') as
      | ((namespace: string) => DebugOut)
      | { default: (namespace: string) => DebugOut }
      | undefined;
    if (typeof mod === 'function') factory = mod;
    else if (typeof mod?.default === 'function') factory = mod.default;
  } catch {
    // not installed, or no require here: debug output stays off
  }
  debugFactory = factory;
  return factory;
}

/** Any logger with the four level methods: `pino()`, `console`, Nest's `Logger`, winston. */
export interface Logger {
  debug(...args: unknown[]): unknown;
  info(...args: unknown[]): unknown;
  warn(...args: unknown[]): unknown;
  error(...args: unknown[]): unknown;
}

/** The levels the library logs at. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One log event: a stable `event` name, usually a `code`, and a few non-secret details. */
export interface LogEvent {
  /** Stable event name; see {@link LOG_EVENTS}. */
  event: string;
  /** The error or diagnosis code, when there is one. */
  code?: string;
  /** The reference id shown to the person on the failure page. */
  reference?: string;
  /** Further details: primitives only (anything else is dropped). */
  [detail: string]: unknown;
}

/**
 * The events the library logs, by name. Server-side ones are `error` (or `warn`), the person's
 * own outcomes `debug`.
 */
export const LOG_EVENTS = {
  /** A login started (debug). */
  loginStarted: 'login_started',
  /** A login completed (info). */
  loginCompleted: 'login_completed',
  /** A login was refused for the person's side: denied, expired, replayed, invalid answer (debug; `warn` with a diagnosis). */
  loginRefused: 'login_refused',
  /** A login failed for a server-side cause: misconfiguration, refused credentials, service or store down (error). */
  loginError: 'login_error',
  /** The most likely cause of a failed callback, with a `diagnosis` code (warn). */
  callbackDiagnosed: 'callback_diagnosed',
  /** Attributes the service sent without being asked were dropped (debug; names only). */
  attributesDropped: 'attributes_dropped',
  /** A wiring mistake seen at run time: routes, session middleware, cookies (error). */
  wiringProblem: 'wiring_problem',
  /** The client fetched the service's key set (debug). */
  jwksFetched: 'jwks_fetched',
  /** A call to the service failed (warn; the login's own event follows). */
  providerCallFailed: 'provider_call_failed',
  /** A signed-in session was ended by a limit, with a `reason`: `max_session_age`, `idle_timeout`, `signed_out_everywhere`, `provider_logout`, `other_person` (info). */
  sessionEnded: 'session_ended',
  /** A person signed out (info). */
  signedOut: 'signed_out',
  /** Every session of one person was ended, at their next request (info; the person is not named). */
  signedOutEverywhere: 'signed_out_everywhere',
  /** The provider ended a person's sessions by back-channel logout, `by` `sid` or `sub` (info; nobody is named). */
  backchannelLogout: 'backchannel_logout',
  /** A back-channel logout request was refused, with its `code` (warn). */
  backchannelLogoutRefused: 'backchannel_logout_refused',
  /** A sensitive action asked for a recent sign-in and a new login started with `max_age` (debug). */
  stepUpStarted: 'step_up_started',
  /** A re-authentication came back too old (`reason: not_recent`) or from a different person (`other_person`) (info). */
  stepUpRefused: 'step_up_refused',
} as const;

/** Longest string value kept in a log event. */
const MAX_STRING = 300;
/** Field names that must never carry a value into a log. */
const SECRET_FIELD =
  /secret|token|password|passwd|verifier|cookie|authorization|private|key$|^key|code_?challenge|^code$|^state$|^nonce$|^data$|^sub$|^jwe|^jwt/i;
/** Values that look like a JWT/JWE or a long opaque credential. */
const TOKEN_LIKE = /[A-Za-z0-9_-]{12,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*|[A-Za-z0-9_+/=-]{40,}/g;

/** Masks anything token-like in `text` and bounds its length. */
function redactText(text: string): string {
  const masked = text.replace(TOKEN_LIKE, '[redacted]');
  return masked.length > MAX_STRING ? `${masked.slice(0, MAX_STRING)}…` : masked;
}

/** A copy of `event` that is safe to write: primitives only, secret-named fields and token-like strings masked. */
export function redactEvent(event: LogEvent): LogEvent {
  const out: LogEvent = { event: redactText(String(event.event)) };
  for (const [name, value] of Object.entries(event)) {
    if (name === 'event' || value === undefined) continue;
    if (name !== 'code' && name !== 'reference' && SECRET_FIELD.test(name)) {
      out[name] = '[redacted]';
    } else if (typeof value === 'string') {
      out[name] = redactText(value);
    } else if (typeof value === 'number' || typeof value === 'boolean' || value === null) {
      out[name] = value;
    } else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
      out[name] = value.slice(0, 20).map((v) => redactText(v));
    }
  }
  return out;
}

const REFERENCE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A short random reference id (10 characters, Crockford base 32) tying a failure page to its log line. */
export function newReference(): string {
  const bytes = randomBytes(10);
  let out = '';
  for (const b of bytes) out += REFERENCE_ALPHABET[b & 31];
  return out;
}

/** How often the default console output repeats one cause. */
export const DEFAULT_REPEAT_INTERVAL_MS = 60_000;

/** The library's log: level methods taking an event and a message. */
export interface Log {
  /** Logs `event` at `level`. */
  write(level: LogLevel, event: LogEvent, message: string): void;
  /** True when `debug` events are written anywhere (to skip building costly ones). */
  readonly debugEnabled: boolean;
}

/** Options of {@link createLog}. */
export interface CreateLogOptions {
  /** Clock for the default output's repeat limit. */
  now?: () => number;
  /** Where the default output writes. Default `console.error`. */
  sink?: (line: string) => void;
  /** Shortest time between two default lines for the same cause. Default 60 s. */
  repeatIntervalMs?: number;
}

/** Checks a `logger` option; `who` names the caller in the error. */
export function checkLogger(logger: unknown, who: string): Logger | undefined {
  if (logger === undefined) return undefined;
  const l = logger as Partial<Record<LogLevel, unknown>> | null;
  if (
    typeof l !== 'object' ||
    l === null ||
    !(['debug', 'info', 'warn', 'error'] as const).every((m) => typeof l[m] === 'function')
  ) {
    throw new TypeError(
      `${who}: logger must have debug, info, warn and error methods (pino(), console or Nest's Logger).`,
    );
  }
  return logger as Logger;
}

/**
 * The log of one component (`namespace`: `client`, `flow`, `router`, …). With `logger`,
 * every event goes to it, redacted. Without, see the module comment.
 */
export function createLog(logger: Logger | undefined, namespace: string, options: CreateLogOptions = {}): Log {
  if (logger !== undefined) {
    return {
      debugEnabled: true,
      write(level, event, message) {
        try {
          logger[level](redactEvent(event), redactText(message));
        } catch {
          // A failing logger must not fail a login.
        }
      },
    };
  }
  const now = options.now ?? Date.now;
  const sink = options.sink ?? ((line: string) => console.error(line));
  const interval = options.repeatIntervalMs ?? DEFAULT_REPEAT_INTERVAL_MS;
  const lastWritten = new Map<string, number>();
  const debugOut = loadDebug()(`passport-nd-id:${namespace}`);
  return {
    get debugEnabled() {
      return debugOut.enabled;
    },
    write(level, event, message) {
      const enabled = debugOut.enabled;
      // Without DEBUG, debug and info events go nowhere: skip redacting them.
      if (!enabled && level !== 'warn' && level !== 'error') return;
      const safe = redactEvent(event);
      const text = redactText(message);
      if (enabled) {
        // DEBUG=passport-nd-id* shows every event already; do not print warnings twice.
        debugOut('%s %s %o', level, text, safe);
        return;
      }
      const cause = `${level} ${safe.event} ${String(safe.code ?? '')} ${String(safe.diagnosis ?? '')}`;
      const t = now();
      const last = lastWritten.get(cause);
      if (last !== undefined && t - last < interval) return;
      if (lastWritten.size > 1000) lastWritten.clear();
      lastWritten.set(cause, t);
      sink(`passport-nd-id ${level}: ${text} ${JSON.stringify(safe)}`);
    },
  };
}
