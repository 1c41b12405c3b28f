/**
 * The discovery fields this provider adds to the eleven of spec 4.5, and why each is named as it is.
 *
 * - Client authentication at the token endpoint (see `client-auth-policy.ts`):
 *   `token_endpoint_auth_methods_supported`, the RFC 8414 / OpenID Discovery name, because a
 *   generic library that does not find it assumes `client_secret_basic`.
 * - The userinfo encryption. The userinfo response is a JSON object whose `key` and `data`
 *   members are JWEs (spec 2.4, 4.6); the response itself is not a JWE. OpenID's
 *   `userinfo_encryption_alg_values_supported` / `..._enc_values_supported` describe an encrypted
 *   response (`application/jwt`), so a generic client reading them would expect or ask for one. The
 *   names here carry the `nd_id_` prefix (RFC 8414 section 2 allows additional metadata) and name
 *   the member they describe:
 *   - `key`: `RSA-OAEP-256` key transport with `A256GCM` content encryption, to the client's RSA
 *     public key; its plaintext is the block key as a JSON Web Key (`{ "kty": "oct", "k", "alg": "A128GCM" }`);
 *   - each `data` value: `dir` with `A128GCM`, under that block key; its plaintext is the attribute.
 *   A client should accept exactly these and refuse anything else (for example `RSA1_5`, which a
 *   library may accept by default: the conformance case `userinfo_rsa1_5_key` checks it).
 */
import { clientAuthMetadata } from './client-auth-policy.js';

/** The JWE algorithms of the userinfo `key` member. */
export const USERINFO_KEY_JWE = Object.freeze({ alg: 'RSA-OAEP-256', enc: 'A256GCM' } as const);
/** The JWE algorithms of each userinfo `data` value. */
export const USERINFO_DATA_JWE = Object.freeze({ alg: 'dir', enc: 'A128GCM' } as const);

/** The fields added to the discovery document, for a provider with or without `strictClientAuth`. */
export function discoveryExtensions(options: { strictClientAuth: boolean }): Record<string, string[]> {
  return {
    ...clientAuthMetadata(options.strictClientAuth),
    nd_id_userinfo_key_encryption_alg_values_supported: [USERINFO_KEY_JWE.alg],
    nd_id_userinfo_key_encryption_enc_values_supported: [USERINFO_KEY_JWE.enc],
    nd_id_userinfo_data_encryption_alg_values_supported: [USERINFO_DATA_JWE.alg],
    nd_id_userinfo_data_encryption_enc_values_supported: [USERINFO_DATA_JWE.enc],
  };
}
