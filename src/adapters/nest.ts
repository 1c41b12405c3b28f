/**
 * For NestJS apps with `@nestjs/passport`: Nest's `AuthGuard` turns every failure into a generic
 * 401 and makes no session unless the guard calls `logIn`, so {@link ndIdGuardResult} keeps the
 * strategy's status and sentence and {@link ndIdLogIn} signs in keeping other tabs' logins. Typed
 * structurally: `@nestjs/*` is never loaded.
 */
import { checkOptionNames, ownOptions } from '../options-check.js';
import { classifyFailure } from '../flow/failure.js';
import type { LoginFlow } from '../flow/login-flow.js';
import { recordSession } from '../flow/session.js';
import { renderFailurePage } from '../flow/failure-page.js';
import type { SessionPolicy } from '../flow/session-policy.js';
import { carryEntries } from '../flow/finish-sign-in.js';

/** Marks an NdIdLoginFailure of either build of this package (ES module and CommonJS). */
const LOGIN_FAILURE_BRAND = Symbol.for('passport-nd-id.NdIdLoginFailure');

/** What a failed `nd-id` authentication passes to the guard as `info`. */
interface FailureInfo {
  message?: unknown;
  code?: unknown;
  reference?: unknown;
}

/**
 * A failed sign-in as a Nest guard sees it: the strategy's status, a sentence and the page. Nest's
 * `getStatus()`/`getResponse()` shape, so Nest answers the right status even without a filter.
 */
export class NdIdLoginFailure extends Error {
  /** Holds across the ES module and CommonJS builds (an app can load both). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this`, not the class name: for a subclass, instanceof keeps its ordinary meaning.
    const branded =
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[LOGIN_FAILURE_BRAND] === true;
    // biome-ignore lint/complexity/noThisInStatic: the class instanceof was called on
    return Function.prototype[Symbol.hasInstance].call(this, value) || (this === NdIdLoginFailure && branded);
  }

  /** HTTP status to answer with. */
  readonly status: number;
  /** Same as {@link status}, the field Nest reads from errors that are not its own. */
  readonly statusCode: number;
  /** The error code (`state_mismatch`, `access_denied`, …), or `'server_error'`. */
  readonly code: string;
  /** Reference id of the log line about this failure, when there is one. */
  readonly reference?: string;
  /** A complete HTML page saying what happened, free of internals. */
  readonly page: string;

  /** @param status HTTP status. @param message sentence for the person. @param code error code. @param reference log reference. */
  constructor(status: number, message: string, code: string, reference?: string, retryHref?: string) {
    super(message);
    this.name = 'NdIdLoginFailure';
    Object.defineProperty(this, LOGIN_FAILURE_BRAND, { value: true });
    this.status = status;
    this.statusCode = status;
    this.code = code;
    if (reference !== undefined) this.reference = reference;
    this.page = renderFailurePage({
      status,
      title: status >= 500 ? 'Sign-in is unavailable' : 'Sign-in failed',
      message,
      ...(retryHref === undefined ? {} : { retryHref }),
      ...(reference === undefined ? {} : { reference }),
    });
  }

  /** Nest's `HttpException#getStatus` shape. */
  getStatus(): number {
    return this.status;
  }

  /** Nest's `HttpException#getResponse` shape: the JSON body, with no internals. */
  getResponse(): { statusCode: number; message: string; code: string } {
    return { statusCode: this.status, message: this.message, code: this.code };
  }
}

/** Options of {@link ndIdGuardResult}. */
export interface NdIdGuardResultOptions {
  /** Where the failure page's "try again" link points, e.g. `'/auth/login'`. */
  retryHref?: string;
}

/**
 * The body of an `AuthGuard('nd-id')` subclass's `handleRequest(err, user, info, context, status)`:
 * `user` on success, else an {@link NdIdLoginFailure} with the strategy's status and sentence.
 * @throws NdIdLoginFailure when the sign-in failed.
 */
export function ndIdGuardResult<U>(
  err: unknown,
  user: U | false | null | undefined,
  info: unknown,
  status?: number,
  options: NdIdGuardResultOptions = {},
): U {
  checkOptionNames(options, 'ndIdGuardResult()');
  options = ownOptions(options);
  if (err !== null && err !== undefined) {
    const failure = classifyFailure(err);
    const reference = (err as { reference?: unknown }).reference;
    const code = (err as { code?: unknown }).code;
    throw new NdIdLoginFailure(
      failure.status,
      failure.message,
      typeof code === 'string' ? code : 'server_error',
      typeof reference === 'string' ? reference : undefined,
      options.retryHref,
    );
  }
  if (user !== false && user !== null && user !== undefined) return user;
  const details: FailureInfo = typeof info === 'object' && info !== null ? (info as FailureInfo) : {};
  throw new NdIdLoginFailure(
    typeof status === 'number' && status >= 400 && status < 600 ? status : 401,
    typeof details.message === 'string' ? details.message : 'Sign-in failed. Please try again.',
    typeof details.code === 'string' ? details.code : 'unauthorized',
    typeof details.reference === 'string' ? details.reference : undefined,
    options.retryHref,
  );
}

/** The request as {@link ndIdLogIn} needs it: Passport's `logIn`. */
export interface NdIdLogInRequest {
  /** The session (express-session's `req.session`); replaced by Passport at sign-in. */
  session?: unknown;
  /** What the strategy passed on at success (`@nestjs/passport` sets it). */
  authInfo?: unknown;
  /** Passport's `req.logIn(user, options, callback)` (typed loosely so Passport's overloads fit). */
  logIn(user: never, options: never, callback: (err?: unknown) => void): void;
}

/**
 * Signs `user` in through Passport's `req.logIn`, then copies the sign-in record and other tabs'
 * pending logins the strategy wrote (`authInfo.sessionEntries`) into the regenerated session;
 * nothing else of the old session is kept. Call it after `super.canActivate` on the callback
 * route, instead of `super.logIn(request)`. `strategy` and `sessions` are accepted for earlier
 * callers and not needed.
 */
export async function ndIdLogIn(
  request: NdIdLogInRequest,
  user: unknown,
  _strategy?: { readonly flow: LoginFlow },
  _sessions?: SessionPolicy,
): Promise<void> {
  const before = request.session;
  await logIn(request, user);
  const after = request.session;
  const entries = (request.authInfo as { sessionEntries?: readonly string[] } | undefined)?.sessionEntries;
  if (entries === undefined || !isRecord(before) || !isRecord(after) || before === after) return;
  carryEntries(recordSession(before), recordSession(after), entries);
  // Saved before the controller's redirect: express-session's own save may finish after it.
  const save = (after as { save?: (cb: (err?: unknown) => void) => void }).save;
  if (typeof save !== 'function') return;
  await new Promise<void>((resolve, reject) =>
    save.call(after, (err) =>
      err ? reject(err instanceof Error ? err : new Error('Sign-in could not be saved.')) : resolve(),
    ),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Passport's `req.logIn`, as a promise. */
function logIn(request: NdIdLogInRequest, user: unknown): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const passportLogIn = request.logIn as unknown as (
      user: unknown,
      options: object,
      callback: (err?: unknown) => void,
    ) => void;
    passportLogIn.call(request, user, { session: true }, (err?: unknown) =>
      err === undefined || err === null
        ? resolve()
        : reject(err instanceof Error ? err : new Error('Sign-in could not be saved.')),
    );
  });
}
