/**
 * What the plan adds for a FAPI 2.0 client: the OpenID Foundation's FAPI2 relying-party negative
 * cases the base plan lacks, and `unencrypted_id_token`. Every other ID-token case reaches a FAPI
 * client inside its encrypted ID token, as a real one would.
 */
import type { ConformanceCase } from './conformance-cases.js';

/** The FAPI 2.0 cases, run after the base ones (and before the key rotation, which stays last). */
export const FAPI_CONFORMANCE_CASES: readonly ConformanceCase[] = [
  {
    id: 'missing_aud',
    title: 'ID token without aud',
    level: 'id_token',
    expect: 'reject',
    requirement: 'must',
    basis: 'OIDC Core 3.1.3.7 step 3: aud must contain the client_id',
  },
  {
    id: 'missing_iss',
    title: 'ID token without iss',
    level: 'id_token',
    expect: 'reject',
    requirement: 'must',
    basis: 'OIDC Core 3.1.3.7 step 2: iss must match the issuer',
  },
  {
    id: 'aud_array',
    title: 'ID token whose aud is an array holding only the client_id (positive)',
    level: 'id_token',
    expect: 'accept',
    requirement: 'must',
    basis: 'OIDC Core 2: aud may be an array; 3.1.3.7 step 3 asks that it contain the client_id',
  },
  {
    id: 'alternate_alg',
    title: 'ID token signed with a published RSA key under an algorithm other than the registered one (it verifies)',
    level: 'id_token',
    expect: 'reject',
    requirement: 'stricter',
    basis: 'OIDC Core 3.1.3.7 step 7: alg SHOULD be the registered id_token_signed_response_alg',
  },
  {
    id: 'unencrypted_id_token',
    title: 'ID token signed but not encrypted, though the client registered idTokenEncryptedResponseAlg',
    level: 'id_token',
    expect: 'reject',
    requirement: 'must',
    basis:
      "OIDC Registration 2 id_token_encrypted_response_alg: the ID token is encrypted; this service's FAPI profile refuses a plain one",
  },
  {
    id: 'iss_param_invalid',
    title:
      'Authorization response whose iss parameter names another issuer (the code redeemed means the app ignored it)',
    level: 'authorization_response',
    expect: 'reject',
    requirement: 'must',
    basis: 'RFC 9207 2.4: the iss parameter must equal the issuer the request was sent to',
  },
  {
    id: 'iss_param_missing',
    title: 'Authorization response without the iss parameter, though discovery advertises it',
    level: 'authorization_response',
    expect: 'reject',
    requirement: 'must',
    basis: 'RFC 9207 2.4: with authorization_response_iss_parameter_supported, a response without iss must be rejected',
  },
  {
    id: 'token_type_lowercase',
    title: 'Token response with token_type "dpop" in lower case (positive)',
    level: 'token_response',
    expect: 'accept',
    requirement: 'must',
    basis: 'RFC 6749 5.1: token_type is case insensitive; RFC 9449 7.1: the DPoP scheme is used whatever its case here',
  },
  {
    id: 'expires_in_missing',
    title: 'Token response without expires_in (positive)',
    level: 'token_response',
    expect: 'accept',
    requirement: 'must',
    basis: 'RFC 6749 5.1: expires_in is RECOMMENDED, not required; the client must work without it',
  },
];

/** The plan of a FAPI 2.0 client: the base cases, the FAPI ones, and the key rotation last. */
export function fapiPlan(base: readonly ConformanceCase[]): readonly ConformanceCase[] {
  const last = base.filter((c) => c.id === 'rotated_kid');
  return [...base.filter((c) => c.id !== 'rotated_kid'), ...FAPI_CONFORMANCE_CASES, ...last];
}
