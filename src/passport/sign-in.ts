/**
 * What the strategy does around Passport's `req.logIn`, so a plain `passport.authenticate('nd-id')`
 * route signs in as `ndIdRouter()` does; and the step-up judgement, which needs the session as it
 * was before sign-in.
 */
import type { Request } from 'express';
import { IdError } from '../errors.js';
import type { LoginFlow, RestorePendingLogins } from '../flow/login-flow.js';
import type { SessionPolicy, StepUpOutcome } from '../flow/session-policy.js';
import { recordSession, type FlowSession } from '../flow/session.js';
import { LOG_EVENTS } from '../log.js';
import type { WiringChecks } from './wiring.js';

/** The completed sign-in, as the session record keeps it; `maxAge` when it was a step-up. */
export interface CompletedSignIn {
  sub: string;
  signedInAt: number;
  authTime?: number;
  maxAge?: number;
  sid?: string;
}

type LogIn = (user: unknown, options?: unknown, done?: (err?: unknown) => void) => unknown;

interface ExpressSession {
  save?: (cb: (err?: unknown) => void) => void;
}

/** express-session's `req.session` (a plain record), or undefined for none or a get/set session. */
function plainSession(req: Request): (Record<string, unknown> & ExpressSession) | undefined {
  const session: unknown = (req as { session?: unknown }).session;
  if (typeof session !== 'object' || session === null) return undefined;
  return typeof (session as { get?: unknown }).get === 'function'
    ? undefined
    : (session as Record<string, unknown> & ExpressSession);
}

/**
 * Makes this request's next `req.logIn` finish the sign-in: after Passport regenerated the session,
 * the other tabs' logins and the sign-in record go into it and it is saved again, so the redirect
 * never reaches a session without its record. Get/set sessions (Fastify's) are left to their framework.
 */
export function finishSignInAtLogIn(
  req: Request,
  signIn: CompletedSignIn,
  context: { flow: LoginFlow; policy: SessionPolicy; wiring: WiringChecks; sessionKey: string },
): void {
  const before = plainSession(req);
  const target = req as unknown as { logIn?: LogIn; login?: LogIn };
  const logIn = target.logIn;
  if (before === undefined || typeof logIn !== 'function') return;
  const beforeRecord = recordSession(before);
  // Captured now: Passport's logIn replaces the session, and these logins belong to the same person.
  const restore: RestorePendingLogins | undefined =
    beforeRecord.get(context.sessionKey) === undefined ? undefined : context.flow.keepPendingLogins(beforeRecord);
  const { sub, signedInAt, authTime, sid } = signIn;
  const record = {
    sub,
    signedInAt,
    ...(authTime === undefined ? {} : { authTime }),
    ...(sid === undefined ? {} : { sid }),
  };

  const finish =
    (done: ((err?: unknown) => void) | undefined) =>
    (err?: unknown): void => {
      if (err) {
        const failed =
          err instanceof IdError
            ? err
            : new IdError('session_store_unavailable', 'The session store failed while signing in.', { cause: err });
        return done?.(failed.reference === undefined ? context.flow.report(failed) : failed);
      }
      const after = plainSession(req);
      if (after === undefined)
        return done?.(context.flow.report(new IdError('session_missing', 'The session disappeared during sign-in.')));
      const session = recordSession(after);
      restore?.(session);
      context.policy.start(session, record);
      context.wiring.cookieWillBeSaved(req, context.flow.log);
      if (typeof after.save !== 'function') return done?.();
      after.save((saveErr) => {
        if (!saveErr) return done?.();
        done?.(
          context.flow.report(
            new IdError('session_store_unavailable', 'The session could not be saved.', { cause: saveErr }),
          ),
        );
      });
    };

  const wrapped: LogIn = (user, options, done) => {
    target.logIn = target.login = logIn;
    if (typeof options === 'function') return logIn.call(req, user, {}, finish(options as (err?: unknown) => void));
    return logIn.call(req, user, options ?? {}, finish(done));
  };
  target.logIn = target.login = wrapped;
}

/** The failure codes of a refused step-up login. */
export type StepUpRefusalCode = 'step_up_not_recent' | 'step_up_other_person';

const STEP_UP_MESSAGES: Record<Exclude<StepUpOutcome, 'ok'>, string> = {
  not_recent:
    'This action needs a fresh confirmation in the app, and the sign-in that came back was an earlier one. Try again.',
  other_person: 'A different person confirmed the sign-in, so this session was ended. Sign in again.',
};

/** Judges a completed step-up login: `undefined` when it may sign in, else the refusal (signing out a different person). */
export function judgeStepUp(
  req: Request,
  session: FlowSession,
  policy: SessionPolicy,
  user: { sub: string; authTime?: number },
  maxAge: number,
): { code: StepUpRefusalCode; message: string; outcome: Exclude<StepUpOutcome, 'ok'> } | undefined {
  const outcome = policy.stepUpOutcome(policy.read(session), user, maxAge);
  if (outcome === 'ok') return undefined;
  policy.log.write('info', { event: LOG_EVENTS.stepUpRefused, reason: outcome }, 'A re-authentication was refused');
  if (outcome === 'other_person') {
    policy.ended('other_person');
    // Signed out here whatever the route; ndIdRouter() also destroys the session and clears its cookie.
    session.delete(policy.recordKey);
    const passport = session.get('passport');
    if (typeof passport === 'object' && passport !== null) session.set('passport', { ...passport, user: undefined });
    (req as { user?: unknown }).user = undefined;
  }
  return {
    code: outcome === 'not_recent' ? 'step_up_not_recent' : 'step_up_other_person',
    message: STEP_UP_MESSAGES[outcome],
    outcome,
  };
}
