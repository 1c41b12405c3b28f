/**
 * The registered OAuth / OpenID error codes (RFC 6749 5.2 and 4.1.2.1, RFC 6750 3.1, OIDC Core
 * 3.1.2.6, RFC 9449 7.1 and 8). Only these are repeated in messages and logs: any other `error`
 * could be anything, an echoed secret included.
 */
const KNOWN: ReadonlySet<string> = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'unsupported_response_type',
  'server_error',
  'temporarily_unavailable',
  'invalid_token',
  'insufficient_scope',
  'interaction_required',
  'login_required',
  'account_selection_required',
  'consent_required',
  'invalid_request_uri',
  'invalid_request_object',
  'request_not_supported',
  'request_uri_not_supported',
  'registration_not_supported',
  'invalid_dpop_proof',
  'use_dpop_nonce',
]);

/** `code` when it is a registered OAuth/OIDC error code, else undefined. */
export function knownOAuthError(code: unknown): string | undefined {
  return typeof code === 'string' && KNOWN.has(code) ? code : undefined;
}
