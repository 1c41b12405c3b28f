/**
 * The discovery fields added to spec 4.5's eleven, and why each is named so:
 * - `token_endpoint_auth_methods_supported` (RFC 8414): a generic library without it assumes
 *   `client_secret_basic`.
 * - Userinfo: the response is JSON whose `key` and `data` members are JWEs (spec 2.4, 4.6), not a
 *   JWE itself, so OpenID's `userinfo_encryption_*` names would mislead; these carry the `nd_id_`
 *   prefix (RFC 8414 section 2) and name the member: `key` is `RSA-OAEP-256`/`A256GCM` holding the
 *   block key as a JWK, each `data` value `dir`/`A128GCM`. A client should refuse anything else
 *   (e.g. `RSA1_5`: conformance case `userinfo_rsa1_5_key`).
 * - FAPI 2.0 fields only when a client is registered with `profile: 'fapi2'`.
 *   `require_pushed_authorization_requests` is provider-wide: `true` only when every client is a
 *   FAPI client; a FAPI client in a mixed provider is still refused without `request_uri`
 *   (RFC 9126 section 6 allows the rule per client).
 * - Everything else follows what is served, never a constant: the registered clients' ID-token
 *   algorithms, userinfo only when some client is served it, the RFC 9207 flag only when
 *   responses carry `iss`. One document serves every client: a `userinfo: false` client learns
 *   from its registration, not discovery, that it signs in from the ID token.
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
export function profileMixOf(
  clients: Iterable<{ profile: 'base' | 'fapi2'; fapi?: FapiRegistration | undefined }>,
): ProfileMix {
  const list = [...clients];
  const fapi = list.flatMap((c) => (c.fapi === undefined ? [] : [c.fapi]));
  return {
    someFapi: list.some((c) => c.profile === 'fapi2'),
    allFapi: list.every((c) => c.profile === 'fapi2'),
    signingAlgs: inOrder(ID_TOKEN_SIGNING_ALGS, list.map(idTokenAlgOf)),
    encryptionAlgs: inOrder(
      ID_TOKEN_ENCRYPTION_ALGS,
      fapi.map((f) => f.idTokenEncryption.alg),
    ),
    encryptionEncs: inOrder(
      ID_TOKEN_ENCRYPTION_ENCS,
      fapi.map((f) => f.idTokenEncryption.enc),
    ),
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
export function discoveryExtensions(
  options: { strictClientAuth: boolean },
  mix?: ProfileMix,
  userinfo = true,
): Record<string, string[]> {
  const auth = clientAuthMetadata(options.strictClientAuth);
  if (mix?.someFapi === true)
    auth['token_endpoint_auth_methods_supported'] = [
      ...(auth['token_endpoint_auth_methods_supported'] ?? []),
      'private_key_jwt',
    ];
  if (!userinfo) return auth;
  return {
    ...auth,
    nd_id_userinfo_key_encryption_alg_values_supported: [USERINFO_KEY_JWE.alg],
    nd_id_userinfo_key_encryption_enc_values_supported: [USERINFO_KEY_JWE.enc],
    nd_id_userinfo_data_encryption_alg_values_supported: [USERINFO_DATA_JWE.alg],
    nd_id_userinfo_data_encryption_enc_values_supported: [USERINFO_DATA_JWE.enc],
  };
}
