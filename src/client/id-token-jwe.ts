/**
 * Encrypted ID tokens (OpenID Connect Core 10.2): a compact JWE whose plaintext is the signed ID
 * token. It is decrypted with the app's ID-token key and the JWS inside is then verified exactly
 * as an unencrypted one (`id-token.ts`). Accepted: `ECDH-ES`, `ECDH-ES+A128KW`/`A192KW`/`A256KW`
 * (an EC key) and `RSA-OAEP-256` (an RSA key), with `A128GCM`/`A192GCM`/`A256GCM` or
 * `A128CBC-HS256`/`A192CBC-HS384`/`A256CBC-HS512`; the caller may narrow both lists, and the
 * algorithms are never taken from the token. What is inside must be a JWS signed with one of
 * the asymmetric algorithms `id-token.ts` verifies: a JWE around an unsigned (`alg: none`) or
 * HMAC-signed token is refused here already, whatever the caller does next (the class of
 * CVE-2026-29000). All of it runs on node:crypto (`jwe-gcm.ts`, `jwe-ecdh.ts`): through jose 6's
 * WebCrypto, ECDH-ES+A256KW alone cost about 1.5 ms of CPU per login.
 * `test/client/id-token-jwe-differential.test.ts` shows the decisions match jose's.
 */
import { IdError } from '../errors.js';
import { utf8 } from '../jose/base64url.js';
import { JWE_SEGMENTS, MAX_ENCRYPTED_ID_TOKEN_LENGTH, withinCompactLimits } from '../compact-limits.js';
import type { IdTokenDecryptionKey } from './fapi-keys.js';
import { ID_TOKEN_SIGNING_ALGORITHMS } from './id-token.js';
import { ECDH_ES_ALGORITHMS } from '../jose/jwe-ecdh.js';
import {
  appKeyCandidates,
  decryptWithAppKeys,
  decryptWithAppKeysAsync,
  namedAppKey,
  someRemote,
} from '../jose/jwe-app-keys.js';
import { decodeJsonSegment } from '../encoding.js';
import { CONTENT_ENCRYPTIONS, JweRefused, readCompactJwe, type CompactJwe } from '../jose/jwe-decrypt.js';

/** The key-management algorithms an encrypted ID token may use. */
export const ID_TOKEN_JWE_ALGORITHMS: readonly string[] = Object.freeze([...ECDH_ES_ALGORITHMS, 'RSA-OAEP-256']);
/** The content encryptions an encrypted ID token may use: those of the userinfo JWEs. */
export const ID_TOKEN_JWE_ENCRYPTION: readonly string[] = CONTENT_ENCRYPTIONS;

/** Narrower allowlists for decrypting an ID token (or a logout token); each defaults to every value accepted. */
export interface IdTokenDecryptionOptions {
  /** Key-management algorithms accepted, among {@link ID_TOKEN_JWE_ALGORITHMS}. */
  algorithms?: readonly string[];
  /** Content encryptions accepted, among {@link ID_TOKEN_JWE_ENCRYPTION}. */
  encryptions?: readonly string[];
}

/** Five base64url segments (the second, the encrypted key, is empty for `ECDH-ES`). */
const COMPACT_JWE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;
/** The shape of the signed token inside: three segments, the signature non-empty. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** True when the token has the five segments of a compact JWE (four dots). */
export function isCompactJwe(token: unknown): token is string {
  if (typeof token !== 'string') return false;
  let dots = 0;
  for (let i = 0; i < token.length && dots < 5; i += 1) if (token.charCodeAt(i) === 46) dots += 1;
  return dots === 4;
}

/**
 * Which keys may be tried: `any`, the key the `kid` names, else each key of the algorithm's kind;
 * `named`, only the key the `kid` names, or with no `kid` the only key of that kind (none tried otherwise).
 */
export type DecryptionKeyChoice = 'any' | 'named';

/**
 * The signed ID token inside an encrypted one.
 * @param options narrower allowlists (default: every algorithm and encryption accepted).
 * @param choice which keys may be tried (default `any`).
 * @throws IdError `id_token_malformed`, `id_token_jwe_alg_not_allowed`, `id_token_decrypt_failed`,
 *   or `id_token_alg_not_allowed` when what is inside is not signed with an asymmetric algorithm.
 */
export async function decryptIdToken(
  token: string,
  keys: readonly IdTokenDecryptionKey[],
  options: IdTokenDecryptionOptions = {},
  choice: DecryptionKeyChoice = 'any',
): Promise<string> {
  if (!withinCompactLimits(token, JWE_SEGMENTS, MAX_ENCRYPTED_ID_TOKEN_LENGTH) || !COMPACT_JWE.test(token)) {
    throw new IdError(
      'id_token_malformed',
      'The encrypted ID token is not a compact JWE (five dot-separated base64url parts).',
    );
  }
  let jwe: CompactJwe;
  try {
    jwe = readCompactJwe(token);
  } catch {
    throw new IdError('id_token_malformed', 'The encrypted ID token header is not valid base64url JSON.');
  }
  const { alg, enc } = jwe.header;
  if (jwe.header.crit !== undefined || jwe.header.zip !== undefined) {
    throw new IdError(
      'id_token_malformed',
      'The encrypted ID token uses a JWE extension (crit or zip) that is not supported.',
    );
  }
  const algorithms = (options.algorithms ?? ID_TOKEN_JWE_ALGORITHMS).filter((a) => ID_TOKEN_JWE_ALGORITHMS.includes(a));
  const encryptions = (options.encryptions ?? ID_TOKEN_JWE_ENCRYPTION).filter((e) =>
    ID_TOKEN_JWE_ENCRYPTION.includes(e),
  );
  if (typeof alg !== 'string' || !algorithms.includes(alg) || typeof enc !== 'string' || !encryptions.includes(enc)) {
    throw new IdError(
      'id_token_jwe_alg_not_allowed',
      `The ID token is encrypted with an algorithm that is not accepted; only ${algorithms.join(', ')} with ${encryptions.join(', ')} are.`,
    );
  }
  if (choice === 'named') {
    const named = namedAppKey(keys, alg, jwe.header.kid);
    if (named === undefined)
      throw new IdError(
        'id_token_decrypt_failed',
        'The encrypted token names no key of this app (kid), or names none while several could decrypt it.',
      );
    keys = [named];
  }
  // The key the header's kid names, else every key of the kind the algorithm takes, in order.
  let bytes: Buffer | undefined;
  try {
    // In process, synchronously, unless a key is a decrypter held elsewhere (an HSM or a KMS).
    bytes = someRemote(keys) ? await decryptWithAppKeysAsync(jwe, keys) : decryptWithAppKeys(jwe, keys);
  } catch (err) {
    if (err instanceof JweRefused && err.reason === 'malformed')
      throw new IdError('id_token_malformed', 'The encrypted ID token is not a well-formed JWE.');
  }
  if (bytes === undefined && appKeyCandidates(keys, alg, undefined).length === 0) {
    throw new IdError(
      'id_token_decrypt_failed',
      `The ID token is encrypted with ${alg}, and no idTokenDecryptionKey is of that kind (${ECDH_ES_ALGORITHMS.includes(alg) ? 'an EC key' : 'an RSA key'}).`,
    );
  }
  let plaintext: string | undefined;
  try {
    plaintext = utf8.decode(bytes);
  } catch {}
  if (bytes === undefined || plaintext === undefined) {
    throw new IdError(
      'id_token_decrypt_failed',
      'The encrypted ID token cannot be decrypted with idTokenDecryptionKey.',
    );
  }
  requireSignedInside(plaintext);
  return plaintext;
}

/**
 * What an encrypted ID token holds must be a signed JWT (OpenID Connect Core 10.2: sign, then
 * encrypt): a compact JWS with a signature, under an asymmetric algorithm. The encryption to our
 * own public key proves nothing about who made the token.
 */
function requireSignedInside(plaintext: string): void {
  if (!COMPACT_JWS.test(plaintext)) {
    throw new IdError(
      'id_token_malformed',
      'The encrypted ID token does not contain a signed JWT (a compact JWS with a signature).',
    );
  }
  let alg: unknown;
  try {
    alg = decodeJsonSegment(plaintext, 0).alg;
  } catch {
    throw new IdError(
      'id_token_malformed',
      'The signed JWT inside the encrypted ID token has a header that is not valid base64url JSON.',
    );
  }
  if (typeof alg !== 'string' || !(ID_TOKEN_SIGNING_ALGORITHMS as readonly string[]).includes(alg)) {
    const shown = typeof alg === 'string' && /^[\w-]{1,20}$/.test(alg) ? alg : 'unknown';
    throw new IdError(
      'id_token_alg_not_allowed',
      `The encrypted ID token contains a JWT signed with "${shown}"; only a signature with ${ID_TOKEN_SIGNING_ALGORITHMS.join(', ')} is accepted inside.`,
    );
  }
}

/**
 * FAPI 2.0 answers of the token endpoint: the token must be DPoP-bound (`token_type` compared
 * case-insensitively, RFC 6749 5.1) and the ID token, when one is given, encrypted (the profile
 * passes it only when the app asked for encryption).
 * @throws IdError `token_type_invalid` or `id_token_not_encrypted`.
 */
export function checkFapiTokenResponse(tokenType: unknown, idToken: unknown): void {
  if (typeof tokenType !== 'string' || tokenType.toLowerCase() !== 'dpop') {
    throw new IdError(
      'token_type_invalid',
      'The token endpoint answered with a token that is not DPoP-bound (token_type is not DPoP); the fapi2 profile refuses it.',
    );
  }
  if (idToken !== undefined && !isCompactJwe(idToken)) {
    throw new IdError(
      'id_token_not_encrypted',
      'The ID token arrived signed but not encrypted; this client registered ID-token encryption (idTokenEncryptedResponseAlg), so it accepts only encrypted ID tokens.',
    );
  }
}
