/**
 * The RFC 9207 `iss` of an authorization response (mix-up defence): exactly the issuer when
 * present, required when advertised, checked before the code or error is trusted.
 */
import { IdError } from '../errors.js';

/**
 * @param iss the response's `iss` as parsed from the query (a repeated parameter is an array, refused).
 * @param issuer the issuer this client is configured for.
 * @param required true when the service advertises the parameter.
 * @throws IdError `authorization_response_iss_missing` or `authorization_response_iss_mismatch`.
 */
export function checkResponseIssuer(iss: unknown, issuer: string, required: boolean): void {
  if (iss === undefined) {
    if (!required) return;
    throw new IdError(
      'authorization_response_iss_missing',
      'The authorization response has no iss parameter, though the service advertises that it always sends one (RFC 9207).',
    );
  }
  if (iss !== issuer) {
    throw new IdError(
      'authorization_response_iss_mismatch',
      'The authorization response comes from another issuer (its iss parameter differs).',
    );
  }
}
