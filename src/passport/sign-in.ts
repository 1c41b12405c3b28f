/**
 * The Passport side of the sign-in core (`src/flow/finish-sign-in.ts`): the request's session as a
 * {@link SignInSession}, and the one point Passport offers after it regenerates the session at
 * sign-in (its `req.logIn`), where the core's last step runs. Nothing is decided here.
 */
import type { Request } from 'express';
import {
  carryPendingLogins,
  recordSignIn,
  storeFailure,
  type CompletedSignIn,
  type SignInCore,
} from '../flow/finish-sign-in.js';
import { recordSession, type FlowSession } from '../flow/session.js';
import type { SignInSession } from '../flow/sign-in-session.js';
import { IdError } from '../errors.js';

export type { StepUpRefusalCode } from '../flow/finish-sign-in.js';

type Callback = (err?: unknown) => void;
type LogIn = (user: unknown, options?: unknown, done?: Callback) => unknown;

interface ExpressSession {
  cookie?: { path?: string; domain?: string };
  save?: (cb: Callback) => void;
  regenerate?: (cb: Callback) => void;
  destroy?: (cb: Callback) => void;
}

/** express-session's `req.session` (a plain record), or undefined for none or a get/set session. */
function plainSession(req: Request): (Record<string, unknown> & ExpressSession) | undefined {
  const session: unknown = (req as { session?: unknown }).session;
  if (typeof session !== 'object' || session === null) return undefined;
  return typeof (session as { get?: unknown }).get === 'function'
    ? undefined
    : (session as Record<string, unknown> & ExpressSession);
}

/** Calls a callback-style session method as a promise (a missing one does nothing). */
function call(session: ExpressSession | undefined, method: 'save' | 'regenerate' | 'destroy'): Promise<void> {
  const fn = session?.[method];
  if (typeof fn !== 'function') return Promise.resolve();
  return new Promise((resolve, reject) => fn.call(session, (err) => (err ? reject(err) : resolve())));
}

/** The response's cookie clearing, when the request has an Express response. */
function clearCookie(req: Request, name: string, cookie: ExpressSession['cookie']): void {
  const res = (req as { res?: { headersSent?: boolean; clearCookie?: (n: string, o: object) => void } }).res;
  if (res?.headersSent === true || typeof res?.clearCookie !== 'function') return;
  res.clearCookie(name, {
    path: cookie?.path ?? '/',
    ...(cookie?.domain === undefined ? {} : { domain: cookie.domain }),
  });
}

/**
 * `req.session` as the core speaks to it: express-session's record (read afresh each time, as it
 * is replaced when regenerated), or a get/set session (`@fastify/passport`'s) through `view`.
 */
export function expressSignInSession(req: Request, view: FlowSession, cookieName: string): SignInSession {
  const current = (): FlowSession => {
    const session = plainSession(req);
    return session === undefined ? view : recordSession(session);
  };
  return {
    get: (key) => current().get(key),
    set: (key, value) => current().set(key, value),
    delete: (key) => current().delete(key),
    regenerate: () => call(plainSession(req), 'regenerate'),
    save: () => call(plainSession(req), 'save'),
    destroy: async () => {
      const session = plainSession(req);
      if (session === undefined) return endMethodSession(req);
      await call(session, 'destroy');
      clearCookie(req, cookieName, session.cookie);
      (req as { user?: unknown }).user = undefined;
    },
  };
}

/** Ends a get/set session: `@fastify/session`'s `destroy()`, `@fastify/secure-session`'s `delete()`. */
async function endMethodSession(req: Request): Promise<void> {
  const session = (req as unknown as { session?: { destroy?: () => unknown; delete?: () => unknown } }).session;
  if (typeof session?.destroy === 'function') await session.destroy();
  else if (typeof session?.delete === 'function') session.delete();
  (req as { user?: unknown }).user = undefined;
}

/**
 * Passport regenerates the session inside `req.logIn`, after the strategy's `success`: the core's
 * last step (other tabs' logins, the sign-in record, the save) runs there, on the new session,
 * before Passport's callback (and so before the redirect). A get/set session (`@fastify/passport`)
 * takes the record now, kept across its sign-in by `clearSessionIgnoreFields`.
 */
export async function finishAtPassportLogIn(
  req: Request,
  core: SignInCore,
  session: SignInSession,
  signIn: CompletedSignIn,
): Promise<void> {
  const target = req as unknown as { logIn?: LogIn; login?: LogIn };
  const logIn = target.logIn;
  if (plainSession(req) === undefined || typeof logIn !== 'function') {
    await recordSignIn(core, { ...session, save: async () => undefined }, signIn, undefined);
    return;
  }
  const carried = carryPendingLogins(core, session);
  const finish =
    (done: Callback | undefined): Callback =>
    (err) => {
      if (err) return done?.(storeFailure(core, err, 'The session store failed while signing in.'));
      if (plainSession(req) === undefined)
        return done?.(core.flow.report(new IdError('session_missing', 'The session disappeared during sign-in.')));
      recordSignIn(core, session, signIn, carried).then(() => done?.(), done ?? (() => undefined));
    };
  const once: LogIn = (user, options, done) => {
    target.logIn = target.login = logIn;
    if (typeof options === 'function') return logIn.call(req, user, {}, finish(options as Callback));
    return logIn.call(req, user, options ?? {}, finish(done));
  };
  target.logIn = target.login = once;
}
