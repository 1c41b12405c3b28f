/**
 * Failure classification: whether a failed login is the person's doing (refused, expired,
 * replayed, invalid answer: 401, or 403 for a state that does not match) or a server-side
 * problem that trying again will not fix for them (service down, unusable key set, refused
 * client credentials, session store: 5xx), and the sentence to show.
 */
import { IdError, PROVIDER_DOWN_CODES } from '../errors.js';

/** How a failed login is reported. */
export interface FailureClass {
  /** HTTP status to answer with: 401 or 403 for the person's side, 500, 502, 503 or 504 for the server's. */
  status: number;
  /** True when the cause is on the server's side (report as an error, log it); false when the person's login was refused. */
  serverSide: boolean;
  /** A sentence for the person, free of secrets and personal data. */
  message: string;
}

/**
 * Failures caused by the app's own configuration, not the person: an unusable key set, or a
 * userinfo block key that the app's private key cannot decrypt (a key that is not the one
 * registered with the service).
 */
const APP_SIDE_CODES: ReadonlySet<string> = new Set(['jwks_invalid', 'userinfo_key_decrypt_failed', 'userinfo_key_invalid', 'configuration_invalid']);

/**
 * Person-side codes whose own sentence is meant for the person; every other refusal (an answer
 * of the service that failed a check) is shown with a generic sentence, its details go to the log.
 */
const PERSON_MESSAGES: ReadonlySet<string> = new Set(['state_mismatch', 'login_expired', 'access_denied', 'provider_error', 'user_refused']);

/** OAuth errors of the token endpoint that mean the app's own registration was refused (wrong secret, unknown client). */
const CLIENT_REFUSED_OAUTH_ERRORS: ReadonlySet<string> = new Set(['invalid_client', 'unauthorized_client']);

/**
 * True when a failed login is not the person's doing and trying again will not help them: the
 * service is down ({@link PROVIDER_DOWN_CODES}), its key set is unusable (`jwks_invalid`), it
 * refused the app's client credentials (`token_request_failed` caused by `invalid_client` or
 * `unauthorized_client`), or there is no working session (`session_missing`,
 * `session_store_unavailable`). Anything that is not an {@link IdError} is server-side too.
 */
export function isServerSideFailure(err: unknown): boolean {
  if (!(err instanceof IdError)) return true;
  if (PROVIDER_DOWN_CODES.has(err.code) || APP_SIDE_CODES.has(err.code)) return true;
  if (err.code === 'session_missing' || err.code === 'session_store_unavailable') return true;
  if (err.code !== 'token_request_failed') return false;
  const oauthError: unknown = (err.cause as { error?: unknown } | null | undefined)?.error;
  return typeof oauthError === 'string' && CLIENT_REFUSED_OAUTH_ERRORS.has(oauthError);
}

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
