/**
 * Finishing a sign-in, for every adapter: the step-up judgement against the session as it was,
 * the new session (other tabs' pending logins carried over), the sign-in record and the save.
 * Adapters translate the outcome; none decides any of it. Every answer of a request that ran
 * these steps carries {@link SESSION_CACHE_CONTROL}.
 */
import { IdError } from '../errors.js';
import { LOG_EVENTS, newReference, type Log } from '../log.js';
import type { LoginFlow, RestorePendingLogins } from './login-flow.js';
import type { SessionPolicy, SignInRecord, StepUpOutcome } from './session-policy.js';
import type { SignInSession } from './sign-in-session.js';
import type { FlowSession } from './session.js';

/** `Cache-Control` of every answer that reads or writes a session: no shared cache may keep it. */
export const SESSION_CACHE_CONTROL = 'no-store';

/** The failure codes of a refused step-up login. */
export type StepUpRefusalCode = 'step_up_not_recent' | 'step_up_other_person';

/** What the sign-in core needs of the login: who signed in, when, and whether it was a step-up. */
export interface CompletedSignIn {
  sub: string;
  signedInAt: number;
  authTime?: number;
  /** The step-up `max_age` the login was started with, in seconds. */
  maxAge?: number;
  /** The provider's session (the ID token's `sid`), so a back-channel logout by `sid` finds this sign-in. */
  sid?: string;
  /** The provider (the ID token's `iss`), so a back-channel logout of another provider does not find this sign-in. */
  iss?: string;
}

/** A step-up login the core refused (403); `other_person` has ended the session. */
export interface StepUpRefusal {
  kind: 'step_up_refused';
  code: StepUpRefusalCode;
  outcome: Exclude<StepUpOutcome, 'ok'>;
  message: string;
  status: 403;
}

/** A finished sign-in: the record kept in the (new) session. */
export interface SignedIn {
  kind: 'signed_in';
  record: SignInRecord;
}

/** What finishing a sign-in needs: the flow (pending logins, reports) and the session rules. */
export interface SignInCore {
  flow: Pick<LoginFlow, 'keepPendingLogins' | 'report' | 'sessionKey'>;
  policy: SessionPolicy;
}

const STEP_UP_MESSAGES: Record<Exclude<StepUpOutcome, 'ok'>, string> = {
  not_recent:
    'This action needs a fresh confirmation in the app, and the sign-in that came back was an earlier one. Try again.',
  other_person: 'A different person confirmed the sign-in, so this session was ended. Sign in again.',
};

/** The session's sign-in record before the login completed (read before anything regenerates it). */
export function priorSignIn(policy: SessionPolicy, session: FlowSession): SignInRecord | undefined {
  return policy.read(session);
}

/** Judges a step-up login against the session's earlier sign-in: the refusal, logged, or undefined. */
export function judgeStepUp(
  policy: SessionPolicy,
  prior: SignInRecord | undefined,
  signIn: CompletedSignIn,
): StepUpRefusal | undefined {
  if (signIn.maxAge === undefined) return undefined;
  const outcome = policy.stepUpOutcome(prior, signIn, signIn.maxAge);
  if (outcome === 'ok') return undefined;
  policy.log.write('info', { event: LOG_EVENTS.stepUpRefused, reason: outcome }, 'A re-authentication was refused');
  return {
    kind: 'step_up_refused',
    code: outcome === 'not_recent' ? 'step_up_not_recent' : 'step_up_other_person',
    outcome,
    message: STEP_UP_MESSAGES[outcome],
    status: 403,
  };
}

/** A session store's failure while signing in, as the error the adapters show (logged with a reference). */
export function storeFailure(core: SignInCore, err: unknown, message: string): IdError {
  const failed = err instanceof IdError ? err : new IdError('session_store_unavailable', message, { cause: err });
  return failed.reference === undefined ? core.flow.report(failed) : failed;
}

/** Runs a session operation; its failure becomes `session_store_unavailable`. */
async function storeStep(core: SignInCore, step: () => Promise<void>, message: string): Promise<void> {
  try {
    await step();
  } catch (err) {
    throw storeFailure(core, err, message);
  }
}

/** Ends the session after a refused step-up by another person: nobody stays signed in. */
export async function endForOtherPerson(core: SignInCore, session: SignInSession): Promise<void> {
  core.policy.ended('other_person');
  await storeStep(core, () => session.destroy(), 'The session could not be ended in its store.');
}

/**
 * Step 1: a step-up login judged against the session's earlier sign-in. Refused: the session is
 * kept as it was (saved: its pending login was taken out), or ended when another person came back.
 */
export async function refuseStepUp(
  core: SignInCore,
  session: SignInSession,
  signIn: CompletedSignIn,
  prior: SignInRecord | undefined,
): Promise<StepUpRefusal | undefined> {
  const refusal = judgeStepUp(core.policy, prior, signIn);
  if (refusal === undefined) return undefined;
  if (refusal.outcome === 'other_person') await endForOtherPerson(core, session);
  else await storeStep(core, () => session.save(), 'The session could not be saved.');
  return refusal;
}

/** Step 2, before the session is regenerated: the other tabs' pending logins, to carry into the new one. */
export function carryPendingLogins(core: SignInCore, session: FlowSession): RestorePendingLogins {
  return core.flow.keepPendingLogins(session);
}

/**
 * Step 3, on the regenerated session: the other tabs' logins back, the person (`keepUser`), the
 * sign-in record, and the session saved before the answer leaves.
 */
export async function recordSignIn(
  core: SignInCore,
  session: SignInSession,
  signIn: CompletedSignIn,
  carried: RestorePendingLogins | undefined,
  keepUser?: (session: SignInSession) => void,
): Promise<SignedIn> {
  carried?.(session);
  keepUser?.(session);
  const record = core.policy.start(session, signIn);
  await storeStep(core, () => session.save(), 'The session could not be saved.');
  return { kind: 'signed_in', record };
}

/** The session entries a sign-in keeps across a regeneration: the other tabs' logins and the sign-in record. */
export function signInEntries(core: SignInCore): string[] {
  return [core.flow.sessionKey, core.policy.recordKey];
}

/** Copies a sign-in's `entries` from the session before a regeneration into the one after it. */
export function carryEntries(before: FlowSession, after: FlowSession, entries: readonly string[]): void {
  for (const key of entries) {
    const value = before.get(key);
    if (value !== undefined) after.set(key, value);
  }
}

/**
 * Step 3 for a caller that regenerates the session itself after the adapter answered (the router,
 * after Passport's `req.logIn`): the other tabs' logins copied across, and the sign-in recorded
 * only now, on the new session, so a sign-in the caller refuses first leaves no record behind.
 */
export function recordAfterRegeneration(
  policy: SessionPolicy,
  before: FlowSession,
  after: FlowSession,
  entries: readonly string[],
  signIn: CompletedSignIn,
): SignInRecord {
  carryEntries(before, after, entries);
  return policy.start(after, signIn);
}

/** A session store's failure where no login flow is at hand (a route finishing a sign-in), logged with a reference. */
export function sessionStoreFailed(log: Log, err: unknown, message: string): IdError {
  if (err instanceof IdError && err.reference !== undefined) return err;
  const failed = new IdError('session_store_unavailable', message, { cause: err });
  failed.reference = newReference();
  log.write(
    'error',
    { event: LOG_EVENTS.loginError, code: failed.code, reference: failed.reference, status: 503 },
    message,
  );
  return failed;
}

/**
 * Steps 2 and 3 where the framework regenerates the session again after the adapter answered and
 * keeps what it holds (Passport's `req.logIn` with `keepSessionInfo: true`; `@fastify/passport`
 * with `clearSessionIgnoreFields`): the session is regenerated here keeping only the other tabs'
 * logins, and the sign-in recorded in it, so the framework's merge carries those and nothing of the
 * session before the login (what a planted session held, its cookie's settings, another person's data).
 */
export async function recordForFrameworkSignIn(
  core: SignInCore,
  session: SignInSession,
  signIn: CompletedSignIn,
): Promise<SignInRecord> {
  const carried = carryPendingLogins(core, session);
  await storeStep(core, () => session.regenerate(), 'The session store failed while signing in.');
  carried(session);
  return core.policy.start(session, signIn);
}

/**
 * Finishes a completed login on `session`: refuses a step-up that may not sign in, regenerates
 * the session keeping other tabs' logins, keeps the person and the sign-in record, and saves.
 * Rejects with `session_store_unavailable` (reported) when the store fails.
 */
export async function finishSignIn(
  core: SignInCore,
  session: SignInSession,
  signIn: CompletedSignIn,
  prior: SignInRecord | undefined,
  keepUser?: (session: SignInSession) => void,
): Promise<SignedIn | StepUpRefusal> {
  const refusal = await refuseStepUp(core, session, signIn, prior);
  if (refusal !== undefined) return refusal;
  const carried = carryPendingLogins(core, session);
  await storeStep(core, () => session.regenerate(), 'The session store failed while signing in.');
  return recordSignIn(core, session, signIn, carried, keepUser);
}
