/**
 * Whether a request may pass a guard, for every adapter: the session's lifetimes, "signed out
 * everywhere", the person's presence and, for a step-up guard, a recent enough authentication.
 * A session the policy has ended is destroyed here; adapters only translate the decision.
 */
import { IdError } from '../errors.js';
import { LOG_EVENTS } from '../log.js';
import { refusalReason, type AccessRefusalReason } from './access.js';
import type { SessionCheck, SessionPolicy, SignInRecord } from './session-policy.js';
import type { SignInSession } from './sign-in-session.js';

/** The guard's decision: pass with the sign-in record (`touched`: "last seen" was written), or refuse. */
export type AccessDecision =
  | { kind: 'pass'; record: SignInRecord; touched: boolean }
  | { kind: 'refuse'; reason: AccessRefusalReason; ended: boolean };

/** Options of {@link decideAccess}. */
export interface AccessCheck {
  /** Ask for an authentication at most this many seconds old (step-up). */
  recentSeconds?: number;
  /** Whether the framework still has a person in this session (e.g. Passport's user); default yes. */
  hasUser?: boolean;
}

/** The policy's check of `session`; a sign-out store that cannot be read is `session_store_unavailable`. */
export async function checkSession(policy: SessionPolicy, session: SignInSession): Promise<SessionCheck> {
  try {
    return await policy.check(session);
  } catch (err) {
    throw new IdError('session_store_unavailable', 'The sign-out store could not be read.', { cause: err });
  }
}

/**
 * Decides a guarded request on `session`. An ended session (lifetime, sign-out everywhere) is
 * logged and destroyed. Rejects with `session_store_unavailable` when a store fails.
 */
export async function decideAccess(
  policy: SessionPolicy,
  session: SignInSession,
  check: AccessCheck = {},
): Promise<AccessDecision> {
  const result = await checkSession(policy, session);
  if (!result.signedIn) {
    if (result.ended !== undefined) {
      policy.ended(result.ended);
      try {
        await session.destroy();
      } catch (err) {
        throw new IdError('session_store_unavailable', 'The session could not be ended in its store.', { cause: err });
      }
    }
    return { kind: 'refuse', reason: refusalReason(result.ended), ended: result.ended !== undefined };
  }
  if (check.hasUser === false) return { kind: 'refuse', reason: 'sign_in_required', ended: false };
  const seconds = check.recentSeconds;
  if (seconds !== undefined && !policy.isRecent(result.record, seconds)) {
    if (policy.log.debugEnabled)
      policy.log.write('debug', { event: LOG_EVENTS.stepUpStarted, maxAge: seconds }, 'A recent sign-in is needed');
    return { kind: 'refuse', reason: 'recent_sign_in_required', ended: false };
  }
  return { kind: 'pass', record: result.record, touched: result.touched };
}
