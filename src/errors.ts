/**
 * Every run-time failure is an {@link IdError} with a stable `code` to switch on; the message is for
 * humans and never holds a secret, token, key or attribute value.
 */

/** The stable error codes. Grouped by where they arise. */
export type IdErrorCode =
  // HTTP to the provider
  | 'provider_unreachable'
  | 'provider_timeout'
  | 'provider_server_error'
  | 'provider_invalid_response'
  | 'provider_response_too_large'
  | 'provider_redirect_refused'
  | 'token_request_failed'
  | 'userinfo_request_failed'
  | 'jwks_invalid'
  // ID token validation
  | 'id_token_missing'
  | 'id_token_malformed'
  | 'id_token_alg_not_allowed'
  | 'id_token_kid_ambiguous'
  | 'id_token_key_not_found'
  | 'id_token_signature_invalid'
  | 'id_token_claim_missing'
  | 'id_token_iss_mismatch'
  | 'id_token_aud_mismatch'
  | 'id_token_azp_mismatch'
  | 'id_token_expired'
  | 'id_token_issued_in_future'
  | 'id_token_not_yet_valid'
  | 'id_token_sub_invalid'
  | 'nonce_missing'
  | 'nonce_mismatch'
  | 'nonce_unexpected'
  | 'access_token_missing'
  | 'access_token_invalid'
  | 'at_hash_mismatch'
  // FAPI 2.0 profile and the authorization response
  | 'id_token_not_encrypted'
  | 'id_token_jwe_alg_not_allowed'
  | 'id_token_decrypt_failed'
  | 'token_type_invalid'
  | 'par_request_failed'
  | 'discovery_issuer_mismatch'
  | 'discovery_invalid'
  | 'authorization_response_iss_missing'
  | 'authorization_response_iss_mismatch'
  // userinfo
  | 'userinfo_malformed'
  | 'userinfo_sub_mismatch'
  | 'userinfo_alg_not_allowed'
  | 'userinfo_key_decrypt_failed'
  | 'userinfo_key_invalid'
  | 'userinfo_data_decrypt_failed'
  // back-channel logout
  | 'logout_token_missing'
  | 'logout_token_malformed'
  | 'logout_token_alg_not_allowed'
  | 'logout_token_typ_invalid'
  | 'logout_token_signature_invalid'
  | 'logout_token_iss_mismatch'
  | 'logout_token_aud_mismatch'
  | 'logout_token_iat_invalid'
  | 'logout_token_expired'
  | 'logout_token_jti_missing'
  | 'logout_token_events_invalid'
  | 'logout_token_sub_sid_missing'
  | 'logout_token_nonce_present'
  | 'logout_token_replayed'
  // strategy / router
  | 'session_missing'
  | 'state_mismatch'
  | 'login_expired'
  | 'access_denied'
  | 'provider_error'
  | 'user_refused'
  | 'session_store_unavailable'
  | 'configuration_invalid';

/** Options for {@link IdError}. */
export interface IdErrorOptions {
  /** The underlying error, or the provider's OAuth error body `{ error, error_description }`. */
  cause?: unknown;
  /** HTTP status received from the provider, when there was one. */
  status?: number;
  /** A machine-readable detail of why, e.g. for `state_mismatch`: `'unknown_state'`. */
  reason?: string;
}

/** Marks an IdError of either build of this package (ES module and CommonJS). */
const ID_ERROR_BRAND = Symbol.for('passport-nd-id.IdError');

/** The one error class of this library. Switch on `code`, not on the message. */
export class IdError extends Error {
  /** A stable, machine-readable code. */
  readonly code: IdErrorCode;
  /** HTTP status received from the provider, when there was one. */
  readonly status?: number;
  /** A machine-readable detail of why, when the code has several causes (see `StateMismatchReason`). */
  readonly reason?: string;
  /** The reference id of the log line about this failure; the failure page shows it. Set when the failure is reported. */
  reference?: string;
  /** The most likely cause and its fix, for the developer (see the README's Troubleshooting), when one could be worked out. */
  diagnosis?: { code: string; cause: string; fix: string };
  /** For ID-token time failures: this machine's clock minus the service's (from its `Date` header), in ms. */
  clockSkewMs?: number;

  constructor(code: IdErrorCode, message: string, options: IdErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'IdError';
    this.code = code;
    if (options.status !== undefined) this.status = options.status;
    if (options.reason !== undefined) this.reason = options.reason;
    Object.defineProperty(this, ID_ERROR_BRAND, { value: true });
  }

  /** Holds across the ES module and CommonJS builds (an app can load both). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // `this`, not the class name: for a subclass, instanceof keeps its ordinary meaning.
    const branded =
      typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[ID_ERROR_BRAND] === true;
    // biome-ignore lint/complexity/noThisInStatic: the class instanceof was called on
    return Function.prototype[Symbol.hasInstance].call(this, value) || (this === IdError && branded);
  }
}

/** True when `err` is an {@link IdError}, optionally with the given code. */
export function isIdError(err: unknown, code?: IdErrorCode): err is IdError {
  return err instanceof IdError && (code === undefined || err.code === code);
}

/**
 * Codes meaning the service could not be reached or answered nonsense: an outage to report with
 * a 5xx and retry later, not a refused sign-in.
 */
export const PROVIDER_DOWN_CODES: ReadonlySet<IdErrorCode> = new Set<IdErrorCode>([
  'provider_unreachable',
  'provider_timeout',
  'provider_server_error',
  'provider_invalid_response',
  'provider_response_too_large',
  'provider_redirect_refused',
]);

/** True when `err` is an {@link IdError} whose code is one of {@link PROVIDER_DOWN_CODES}. */
export function isProviderDown(err: unknown): err is IdError {
  return err instanceof IdError && PROVIDER_DOWN_CODES.has(err.code);
}

/** Failures of the app's own configuration: an unusable key set, a private key the service does not encrypt to, misplaced routes. */
const APP_SIDE_CODES: ReadonlySet<IdErrorCode> = new Set<IdErrorCode>([
  'jwks_invalid',
  'userinfo_key_decrypt_failed',
  'userinfo_key_invalid',
  'configuration_invalid',
  'id_token_decrypt_failed',
  'discovery_issuer_mismatch',
  'par_request_failed',
  // The provider's answers that no person can cause: the ID token came from its token endpoint
  // over TLS, and its discovery document and userinfo describe the provider itself.
  'discovery_invalid',
  'id_token_alg_not_allowed',
  'userinfo_malformed',
]);

/** OAuth errors of a refused call that mean the app's own registration was refused (wrong secret, unknown client). */
const CLIENT_REFUSED_OAUTH_ERRORS: ReadonlySet<string> = new Set([
  'invalid_client',
  'unauthorized_client',
  'invalid_dpop_proof',
]);

/**
 * True when a failed login is not the person's doing and retrying will not help them: the service
 * is down, the app is misconfigured, its client credentials were refused, or there is no working
 * session; anything not an {@link IdError} too. The one classification for logs, pages and statuses.
 */
export function isServerSideFailure(err: unknown): boolean {
  if (!(err instanceof IdError)) return true;
  if (PROVIDER_DOWN_CODES.has(err.code) || APP_SIDE_CODES.has(err.code)) return true;
  if (err.code === 'session_missing' || err.code === 'session_store_unavailable') return true;
  const oauthError: unknown = (err.cause as { error?: unknown } | null | undefined)?.error;
  return typeof oauthError === 'string' && CLIENT_REFUSED_OAUTH_ERRORS.has(oauthError);
}
