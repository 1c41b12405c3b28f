/** ndIdSession(): `passport.session()` that restores nobody for a session the policy has ended. */
import { ownOptions } from '../options-check.js';
import type passportModule from 'passport';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { IdError } from '../errors.js';
import { defaultSessionPolicy, type SessionEndReason, type SessionPolicy } from '../flow/session-policy.js';
import { recordSession } from '../flow/session.js';
import { loadPassport } from './load-passport.js';

/** Options of {@link ndIdSession}. */
export interface NdIdSessionOptions {
  /** The Passport instance whose `session()` restores the user. Default: the `passport` module. */
  passport?: passportModule.Authenticator;
  /** The session rules; give the same one to `ndIdRouter` and `requireSignIn`. Default: the defaults. */
  sessions?: SessionPolicy;
}

/** Requests whose session ndIdSession() found ended, and why: requireSignIn() answers them as ended. */
const endedOn = new WeakMap<object, SessionEndReason>();

/** Why ndIdSession() ended this request's session, if it did. */
export function sessionEndedOn(req: Request): SessionEndReason | undefined {
  return endedOn.get(req);
}

/**
 * Use in place of `app.use(passport.session())`: a session the policy has ended (one read of the
 * sign-out store) is signed out before Passport restores the user, so `req.user` is undefined on
 * every route, guarded or not. Sessions without this package's sign-in record are left to Passport.
 *
 * ```ts
 * app.use(session({ ... }));
 * app.use(ndIdSession({ sessions }));
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function ndIdSession(given: NdIdSessionOptions = {}): RequestHandler {
  if (typeof given !== 'object' || given === null)
    throw new TypeError('ndIdSession: options must be an object (or left out).');
  const options = ownOptions(given);
  const passport = options.passport ?? loadPassport('ndIdSession');
  if (typeof passport !== 'object' || passport === null || typeof passport.session !== 'function') {
    throw new TypeError(
      'ndIdSession: passport must be a Passport instance (the passport module, or new passport.Passport()).',
    );
  }
  const policy = options.sessions ?? defaultSessionPolicy();
  if (typeof policy !== 'object' || policy === null || typeof policy.check !== 'function') {
    throw new TypeError(
      'ndIdSession: sessions must be createSessionPolicy({ ... }), the same one given to ndIdRouter and requireSignIn.',
    );
  }
  const restoreUser = passport.session() as RequestHandler;

  return function ndIdSessionMiddleware(req: Request, res: Response, next: NextFunction): void {
    const session: unknown = (req as { session?: unknown }).session;
    if (typeof session !== 'object' || session === null) {
      restoreUser(req, res, next);
      return;
    }
    const record = recordSession(session as Record<string, unknown>);
    if (policy.read(record) === undefined) {
      restoreUser(req, res, next);
      return;
    }
    policy.check(record).then(
      (result) => {
        if (!result.signedIn && result.ended !== undefined) {
          policy.ended(result.ended);
          record.delete(policy.recordKey);
          const stored = record.get('passport');
          if (typeof stored === 'object' && stored !== null) record.set('passport', { ...stored, user: undefined });
          endedOn.set(req, result.ended);
        }
        restoreUser(req, res, next);
      },
      (err: unknown) =>
        next(new IdError('session_store_unavailable', 'The sign-out store could not be read.', { cause: err })),
    );
  };
}
