/**
 * Whether a request may pass a guard, for every adapter: the session's lifetimes, "signed out
 * everywhere", the person's presence and, for a step-up guard, a recent enough authentication.
 * A session the policy has ended is destroyed here; adapters only translate the decision.
 */
import { IdError } from '../errors.js';
import { LOG_EVENTS } from '../log.js';
import { refusalReason, type AccessRefusalReason } from './access.js';
import type { SessionCheck, SessionEndReason, SessionPolicy, SignInRecord } from './session-policy.js';
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

/**
 * Decides a guarded request on `session`. An ended session (lifetime, sign-out everywhere) is
 * logged and destroyed. Rejects with `session_store_unavailable` when a store fails. (One promise
 * chain, no async frame of its own: it runs on every guarded request.)
 */
export function decideAccess(
  policy: SessionPolicy,
  session: SignInSession,
  check: AccessCheck = {},
): Promise<AccessDecision> {
  return policy.check(session).then(
    (result) => decide(policy, session, result, check),
    (err: unknown) => {
      throw new IdError('session_store_unavailable', 'The sign-out store could not be read.', { cause: err });
    },
  );
}

/** The decision on the policy's check of the session. */
function decide(
  policy: SessionPolicy,
  session: SignInSession,
  result: SessionCheck,
  check: AccessCheck,
): AccessDecision | Promise<AccessDecision> {
  if (!result.signedIn) {
    if (result.ended === undefined) return { kind: 'refuse', reason: refusalReason(undefined), ended: false };
    return endSession(policy, session, result.ended);
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

/** Logs why the policy ended the session, and destroys it. */
async function endSession(
  policy: SessionPolicy,
  session: SignInSession,
  ended: SessionEndReason,
): Promise<AccessDecision> {
  policy.ended(ended);
  try {
    await session.destroy();
  } catch (err) {
    throw new IdError('session_store_unavailable', 'The session could not be ended in its store.', { cause: err });
  }
  return { kind: 'refuse', reason: refusalReason(ended), ended: true };
}
