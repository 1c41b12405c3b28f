/**
 * The Passport side of the sign-in core (`src/flow/finish-sign-in.ts`): the request's session as a
 * {@link SignInSession}. Nothing is decided here.
 */
import type { Request } from 'express';
import { recordSession, type FlowSession } from '../flow/session.js';
import type { SignInSession } from '../flow/sign-in-session.js';

export type { StepUpRefusalCode } from '../flow/finish-sign-in.js';

type Callback = (err?: unknown) => void;

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

/** Whether the request's session is express-session's record, which Passport regenerates at `req.logIn`. */
export function isRegeneratedByPassport(req: Request): boolean {
  return plainSession(req) !== undefined;
}
