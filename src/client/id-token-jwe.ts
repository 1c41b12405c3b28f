/**
 * Encrypted ID tokens (OpenID Connect Core 10.2): a compact JWE whose plaintext is the signed ID
 * token. It is decrypted with the app's ID-token key and the JWS inside is then verified exactly
 * as an unencrypted one (`id-token.ts`). Only `ECDH-ES+A256KW` and `RSA-OAEP-256` with `A256GCM`
 * are accepted; the algorithms are pinned here, never taken from the token. Both are decrypted
 * with node:crypto (`jwe-gcm.ts`, `jwe-ecdh.ts`): through jose 6's WebCrypto, ECDH-ES+A256KW
 * alone cost about 1.5 ms of CPU per login. `test/client/id-token-jwe-differential.test.ts`
 * shows the decisions match jose's.
 */
import { IdError } from '../errors.js';
import { JWE_SEGMENTS, MAX_ENCRYPTED_ID_TOKEN_LENGTH, withinCompactLimits } from '../compact-limits.js';
import type { IdTokenDecryptionKey } from './fapi-keys.js';
import { unwrapEcdhEsA256kw } from './jwe-ecdh.js';
import { decryptGcmContent, decryptGcmJwe, JweRefused, readCompactJwe, type CompactJwe } from './jwe-gcm.js';

/** The key-management algorithms an encrypted ID token may use. */
export const ID_TOKEN_JWE_ALGORITHMS: readonly string[] = ['ECDH-ES+A256KW', 'RSA-OAEP-256'];
/** The content encryption an encrypted ID token may use. */
export const ID_TOKEN_JWE_ENCRYPTION: readonly string[] = ['A256GCM'];

/** Five base64url segments (the second, the encrypted key, is empty only for `dir`/`ECDH-ES`, which are refused anyway). */
const COMPACT_JWE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** True when the token has the five segments of a compact JWE (four dots). */
export function isCompactJwe(token: unknown): token is string {
  if (typeof token !== 'string') return false;
  let dots = 0;
  for (let i = 0; i < token.length && dots < 5; i += 1) if (token.charCodeAt(i) === 46) dots += 1;
  return dots === 4;
}

/**
 * The signed ID token inside an encrypted one.
 * @throws IdError `id_token_malformed`, `id_token_jwe_alg_not_allowed` or `id_token_decrypt_failed`.
 */
export async function decryptIdToken(token: string, keys: readonly IdTokenDecryptionKey[]): Promise<string> {
  if (!withinCompactLimits(token, JWE_SEGMENTS, MAX_ENCRYPTED_ID_TOKEN_LENGTH) || !COMPACT_JWE.test(token)) {
    throw new IdError('id_token_malformed', 'The encrypted ID token is not a compact JWE (five dot-separated base64url parts).');
  }
  let jwe: CompactJwe;
  try {
    jwe = readCompactJwe(token);
  } catch {
    throw new IdError('id_token_malformed', 'The encrypted ID token header is not valid base64url JSON.');
  }
  const { alg, enc, kid } = jwe.header;
  if (jwe.header.crit !== undefined || jwe.header.zip !== undefined) {
    throw new IdError('id_token_malformed', 'The encrypted ID token uses a JWE extension (crit or zip) that is not supported.');
  }
  if (typeof alg !== 'string' || !ID_TOKEN_JWE_ALGORITHMS.includes(alg) || typeof enc !== 'string' || !ID_TOKEN_JWE_ENCRYPTION.includes(enc)) {
    throw new IdError(
      'id_token_jwe_alg_not_allowed',
      `The ID token is encrypted with an algorithm that is not accepted; only ${ID_TOKEN_JWE_ALGORITHMS.join(' or ')} with ${ID_TOKEN_JWE_ENCRYPTION.join(', ')} are.`,
    );
  }
  // The key the header names; without a kid, every key of the algorithm, in order.
  const candidates = keys.filter((k) => k.alg === alg && (kid === undefined || k.kid === kid));
  if (candidates.length === 0) {
    throw new IdError(
      'id_token_decrypt_failed',
      kid === undefined
        ? `The ID token is encrypted with ${alg}, and no idTokenDecryptionKey is of that kind.`
        : 'The ID token is encrypted to a key (kid) that is not among the idTokenDecryptionKey keys.',
    );
  }
  let malformed = false;
  for (const candidate of candidates) {
    try {
      const plaintext = alg === 'RSA-OAEP-256' ? decryptGcmJwe(jwe, candidate.key) : decryptGcmContent(jwe, unwrapEcdhEsA256kw(jwe, candidate.key));
      return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
    } catch (err) {
      // the next key, if any
      if (err instanceof JweRefused && err.reason === 'malformed') malformed = true;
    }
  }
  if (malformed) throw new IdError('id_token_malformed', 'The encrypted ID token is not a well-formed JWE.');
  throw new IdError('id_token_decrypt_failed', 'The encrypted ID token cannot be decrypted with idTokenDecryptionKey.');
}

/**
 * FAPI 2.0 answers of the token endpoint: the token must be DPoP-bound (`token_type` compared
 * case-insensitively, RFC 6749 5.1) and the ID token encrypted.
 * @throws IdError `token_type_invalid` or `id_token_not_encrypted`.
 */
export function checkFapiTokenResponse(tokenType: unknown, idToken: unknown): void {
  if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'dpop') {
    throw new IdError('token_type_invalid', 'The token endpoint answered with a token that is not DPoP-bound (token_type is not DPoP); the fapi2 profile refuses it.');
  }
  if (idToken !== undefined && !isCompactJwe(idToken)) {
    throw new IdError('id_token_not_encrypted', 'The ID token arrived signed but not encrypted; the fapi2 profile accepts only encrypted ID tokens.');
  }
}
