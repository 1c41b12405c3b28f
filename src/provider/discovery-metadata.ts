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
 * - The FAPI 2.0 profile, only when at least one client is registered with `profile: 'fapi2'`
 *   (a provider of base clients only publishes exactly what it did before): the PAR endpoint,
 *   `private_key_jwt` and its algorithms, DPoP's algorithms and the ID-token encryption.
 *   `require_pushed_authorization_requests` is one value for the whole provider, while the rule
 *   is per client: it reads `true` only when every registered client is a FAPI client. In a
 *   mixed provider it reads `false`, and a FAPI client is still refused at authorize without a
 *   `request_uri` (its registration says so; RFC 9126 section 6 allows a per-client
 *   `require_pushed_authorization_requests`).
 * - What is served decides the rest, never a constant: `id_token_signing_alg_values_supported`
 *   lists the algorithms the registered clients' ID tokens are signed with (RS256 for a base
 *   client, the registered `idTokenSignedResponseAlg` of a FAPI client), and the ID-token
 *   encryption fields the registered `idTokenEncryptedResponseAlg` / `Enc` values. The userinfo
 *   endpoint and its `nd_id_` fields are there only when some client is served userinfo, and
 *   `authorization_response_iss_parameter_supported` only when responses carry `iss` (see
 *   `variant.ts`). One document serves every client, so a client registered with
 *   `userinfo: false` in a provider whose other clients have userinfo still sees the endpoint
 *   advertised: its registration, not discovery, tells it that its sign-in is from the ID token.
 */
import { clientAuthMetadata } from './client-auth-policy.js';
import { ID_TOKEN_SIGNING_ALGS, type IdTokenSigningAlg } from './crypto.js';
import {
  FAPI_SIGNING_ALGS,
  ID_TOKEN_ENCRYPTION_ALGS,
  ID_TOKEN_ENCRYPTION_ENCS,
  idTokenAlgOf,
  type FapiRegistration,
  type IdTokenEncryptionAlg,
  type IdTokenEncryptionEnc,
} from './fapi/registration.js';

/** The JWE algorithms of the userinfo `key` member. */
export const USERINFO_KEY_JWE = Object.freeze({ alg: 'RSA-OAEP-256', enc: 'A256GCM' } as const);
/** The JWE algorithms of each userinfo `data` value. */
export const USERINFO_DATA_JWE = Object.freeze({ alg: 'dir', enc: 'A128GCM' } as const);

/** Which profiles the registered clients use, and what their ID tokens are made with. */
export interface ProfileMix {
  /** At least one client is registered with `profile: 'fapi2'`. */
  someFapi: boolean;
  /** Every client is. */
  allFapi: boolean;
  /** The ID-token signature algorithms of the registered clients. Default: RS256 only. */
  signingAlgs?: readonly IdTokenSigningAlg[];
  /** The ID-token encryption algorithms of the FAPI clients. Default: none. */
  encryptionAlgs?: readonly IdTokenEncryptionAlg[];
  /** The ID-token content encryptions of the FAPI clients. Default: none. */
  encryptionEncs?: readonly IdTokenEncryptionEnc[];
}

/** `values` in the order of `all`, each once. */
function inOrder<T>(all: readonly T[], values: Iterable<T>): T[] {
  const present = new Set(values);
  return all.filter((v) => present.has(v));
}

/** The mix of registered clients (each a profile and, for a FAPI client, its registration). */
export function profileMixOf(clients: Iterable<{ profile: 'base' | 'fapi2'; fapi?: FapiRegistration | undefined }>): ProfileMix {
  const list = [...clients];
  const fapi = list.flatMap((c) => (c.fapi === undefined ? [] : [c.fapi]));
  return {
    someFapi: list.some((c) => c.profile === 'fapi2'),
    allFapi: list.every((c) => c.profile === 'fapi2'),
    signingAlgs: inOrder(ID_TOKEN_SIGNING_ALGS, list.map(idTokenAlgOf)),
    encryptionAlgs: inOrder(ID_TOKEN_ENCRYPTION_ALGS, fapi.map((f) => f.idTokenEncryption.alg)),
    encryptionEncs: inOrder(ID_TOKEN_ENCRYPTION_ENCS, fapi.map((f) => f.idTokenEncryption.enc)),
  };
}

/** The FAPI 2.0 fields of discovery, under the issuer. */
export function fapiDiscoveryFields(issuer: string, mix: ProfileMix): Record<string, string | string[] | boolean> {
  if (!mix.someFapi) return {};
  return {
    pushed_authorization_request_endpoint: `${issuer}/oauth/par`,
    require_pushed_authorization_requests: mix.allFapi,
    dpop_signing_alg_values_supported: [...FAPI_SIGNING_ALGS],
    token_endpoint_auth_signing_alg_values_supported: [...FAPI_SIGNING_ALGS],
    id_token_encryption_alg_values_supported: [...(mix.encryptionAlgs ?? [])],
    id_token_encryption_enc_values_supported: [...(mix.encryptionEncs ?? [])],
  };
}

/** The fields added to the discovery document, for a provider with or without `strictClientAuth`, with or without userinfo. */
export function discoveryExtensions(options: { strictClientAuth: boolean }, mix?: ProfileMix, userinfo = true): Record<string, string[]> {
  const auth = clientAuthMetadata(options.strictClientAuth);
  if (mix?.someFapi === true) auth['token_endpoint_auth_methods_supported'] = [...(auth['token_endpoint_auth_methods_supported'] ?? []), 'private_key_jwt'];
  if (!userinfo) return auth;
  return {
    ...auth,
    nd_id_userinfo_key_encryption_alg_values_supported: [USERINFO_KEY_JWE.alg],
    nd_id_userinfo_key_encryption_enc_values_supported: [USERINFO_KEY_JWE.enc],
    nd_id_userinfo_data_encryption_alg_values_supported: [USERINFO_DATA_JWE.alg],
    nd_id_userinfo_data_encryption_enc_values_supported: [USERINFO_DATA_JWE.enc],
  };
}
