/**
 * The session as finishing a sign-in and guarding a route need it: the login flow's get/set
 * session, and what a framework's session can do with itself. Each adapter implements it once
 * over its framework's session; the core in `finish-sign-in.ts` and `access-check.ts` uses nothing else.
 */
import type { FlowSession } from './session.js';

/** A framework's session, as the sign-in core speaks to it. */
export interface SignInSession extends FlowSession {
  /** Replaces the session with a fresh, empty one under a new id (against session fixation). */
  regenerate(): Promise<void>;
  /** Writes the session to its store now (a framework that saves as it answers may do nothing). */
  save(): Promise<void>;
  /** Ends the session in its store and has its cookie cleared. */
  destroy(): Promise<void>;
}

/** A read-only view of `session`: reading who is signed in writes nothing (not even "last seen"). */
export function readOnlySession(session: FlowSession): FlowSession {
  return { get: (key) => session.get(key), set: () => undefined, delete: () => undefined };
}

/** A view of `session` without `regenerate`, so the login flow's `complete` leaves regeneration to the core. */
export function withoutRegeneration(session: FlowSession): FlowSession {
  return {
    get: (key) => session.get(key),
    set: (key, value) => session.set(key, value),
    delete: (key) => session.delete(key),
  };
}
