/**
 * Whether a failed login is the person's doing (401, 403 for a state mismatch) or a server-side
 * problem retrying will not fix (5xx), and the sentence to show.
 */
import { IdError, isServerSideFailure, PROVIDER_DOWN_CODES } from '../errors.js';

/** How a failed login is reported. */
export interface FailureClass {
  /** HTTP status to answer with: 401 or 403 for the person's side, 500, 502, 503 or 504 for the server's. */
  status: number;
  /** True when the cause is on the server's side (report as an error, log it); false when the person's login was refused. */
  serverSide: boolean;
  /** A sentence for the person, free of secrets and personal data. */
  message: string;
}

/** Codes whose own sentence is meant for the person; other refusals get a generic one (details go to the log). */
const PERSON_MESSAGES: ReadonlySet<string> = new Set([
  'state_mismatch',
  'login_expired',
  'access_denied',
  'provider_error',
  'user_refused',
]);

export { isServerSideFailure };

function serverSideStatus(err: unknown): number {
  if (!(err instanceof IdError)) return 500;
  if (err.code === 'provider_timeout') return 504;
  if (PROVIDER_DOWN_CODES.has(err.code)) return 502;
  if (err.code === 'session_store_unavailable') return 503;
  return 500;
}

function serverSideMessage(err: unknown): string {
  if (err instanceof IdError && PROVIDER_DOWN_CODES.has(err.code)) {
    return 'The identity service cannot be reached right now. Please try again in a few minutes.';
  }
  return 'Sign-in could not be completed because of a problem on this site. Please try again later.';
}

/** Classifies a failed login: status, side and the sentence to show. */
export function classifyFailure(err: unknown): FailureClass {
  if (isServerSideFailure(err)) {
    return { status: serverSideStatus(err), serverSide: true, message: serverSideMessage(err) };
  }
  const idError = err as IdError;
  const message = PERSON_MESSAGES.has(idError.code)
    ? idError.message
    : 'Sign-in could not be completed: the answer from the identity service could not be verified. Please try again.';
  return { status: idError.code === 'state_mismatch' ? 403 : 401, serverSide: false, message };
}
