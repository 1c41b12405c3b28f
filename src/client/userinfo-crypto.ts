/**
 * Userinfo decryption (spec 4.6): the block key is a JWE to our RSA key, each attribute a JWE to
 * the block key. Only the allowlisted algorithms are accepted; RSA1_5, PBES2-*, ECDH-* and
 * compression are refused before anything is decrypted. Every allowlisted algorithm (RSA-OAEP-256
 * or RSA-OAEP; dir, AES key wrap, AES-GCM key wrap; AES-GCM and AES-CBC-HMAC) is decrypted with
 * node:crypto (jwe-gcm.ts): through jose 6's WebCrypto, a login whose attributes use A128GCMKW
 * cost 1.94x the node:crypto floor. `test/client/userinfo-jwe-differential.test.ts` shows the
 * decisions match jose's.
 */
// jose's subpaths, not its root: importing the root loads all of jose (most of this package's import time).
import type { JWK } from 'jose';
import { IdError } from '../errors.js';
import { utf8 } from '../jose/base64url.js';
import {
  JWE_SEGMENTS,
  MAX_USERINFO_KEY_LENGTH,
  MAX_USERINFO_VALUE_LENGTH,
  withinCompactLimits,
} from '../compact-limits.js';
import type { DecryptionKey } from '../keys.js';
import type { KeyObject } from 'node:crypto';
import { appKeyCandidates } from '../jose/jwe-app-keys.js';
import type { JweDecrypter } from '../jose/key-reference.js';
import { decryptWithDecrypter } from '../jose/jwe-remote.js';
import {
  type CompactJwe,
  CONTENT_ENCRYPTIONS,
  decryptJwe,
  handledHere,
  type JweKey,
  JweRefused,
  keyAllows,
  readCompactJwe,
  strictBase64url,
} from '../jose/jwe-decrypt.js';

/** Key-management algorithms accepted for the block key JWE. */
export const KEY_WRAP_ALGORITHMS: readonly string[] = ['RSA-OAEP-256', 'RSA-OAEP'];
/** Key-management algorithms accepted for attribute JWEs. */
export const ATTRIBUTE_ALGORITHMS: readonly string[] = [
  'dir',
  'A128KW',
  'A192KW',
  'A256KW',
  'A128GCMKW',
  'A192GCMKW',
  'A256GCMKW',
];
/** Content encryptions accepted for both (the list the ID-token decryption takes too). */
export { CONTENT_ENCRYPTIONS };

/**
 * Decrypt the userinfo `key` with our private key, then every `data` value with the block key.
 * @returns the attributes by scope name, as plain strings.
 * @throws IdError `userinfo_alg_not_allowed`, `userinfo_key_decrypt_failed`, `userinfo_key_invalid`,
 *   `userinfo_data_decrypt_failed` or `userinfo_malformed`. Messages name scopes, never values.
 */
export async function decryptUserinfo(
  privateKeys: readonly DecryptionKey[],
  key: string,
  data: Record<string, unknown>,
): Promise<Record<string, string>> {
  const blockKey = await decryptBlockKey(privateKeys, key);
  const result: Record<string, string> = {};
  for (const [scope, value] of Object.entries(data)) {
    result[scope] = await decryptAttribute(blockKey, scope, value);
  }
  return result;
}

/** The block key: its bytes, and the algorithm its JWK names (`alg`), which alone it may open attributes with. */
interface BlockKey {
  bytes: Buffer;
  alg: string | undefined;
}

async function decryptBlockKey(privateKeys: readonly DecryptionKey[], jwe: string): Promise<BlockKey> {
  const what = 'The userinfo block key';
  // Size and shape first: nothing is decoded, and no private key used, for an oversized JWE.
  if (!withinCompactLimits(jwe, JWE_SEGMENTS, MAX_USERINFO_KEY_LENGTH)) {
    throw new IdError(
      'userinfo_malformed',
      `${what} is not a compact JWE of five parts and at most ${MAX_USERINFO_KEY_LENGTH} characters.`,
    );
  }
  const read = readOurs(jwe, KEY_WRAP_ALGORITHMS, what);
  let plaintext: Uint8Array | undefined;
  let lastError: unknown;
  // The key the header's kid names (by the key's kid or thumbprint), else each in order.
  for (const { key, remote } of appKeyCandidates(privateKeys, String(read.header.alg), read.header.kid)) {
    try {
      plaintext = remote === undefined ? ours(read, key, what) : await theirs(read, remote, key, what);
      break;
    } catch (err) {
      if (err instanceof IdError) throw err;
      lastError = err;
    }
  }
  if (plaintext === undefined) {
    // The error node:crypto (or the runtime) gave, kept for the log: a wrong key and a runtime
    // that refuses the key's form look alike in the message.
    const cause = lastError instanceof JweRefused && lastError.cause !== undefined ? lastError.cause : lastError;
    throw new IdError(
      'userinfo_key_decrypt_failed',
      `The userinfo block key could not be decrypted with ${privateKeys.length === 1 ? 'privateKey' : `any of the ${privateKeys.length} privateKey keys`}: ` +
        'a wrong private key, not the one registered with the provider, or the key JWE was altered.',
      { cause },
    );
  }
  let jwk: JWK;
  try {
    jwk = JSON.parse(utf8.decode(plaintext)) as JWK;
  } catch {
    throw new IdError('userinfo_key_invalid', 'The decrypted userinfo block key is not a JSON Web Key.');
  }
  if (typeof jwk !== 'object' || jwk === null || jwk.kty !== 'oct' || typeof jwk.k !== 'string' || jwk.k === '') {
    throw new IdError(
      'userinfo_key_invalid',
      'The decrypted userinfo block key is not a symmetric (oct) JSON Web Key.',
    );
  }
  try {
    return { bytes: strictBase64url(jwk.k), alg: jwk.alg };
  } catch {
    throw new IdError('userinfo_key_invalid', 'The decrypted userinfo block key is not a valid symmetric key.');
  }
}

async function decryptAttribute(blockKey: BlockKey, scope: string, jwe: unknown): Promise<string> {
  const what = `The userinfo value for scope "${scopeLabel(scope)}"`;
  if (typeof jwe !== 'string') {
    throw new IdError('userinfo_malformed', `${what} is not a JWE string.`);
  }
  if (!withinCompactLimits(jwe, JWE_SEGMENTS, MAX_USERINFO_VALUE_LENGTH)) {
    throw new IdError(
      'userinfo_malformed',
      `${what} is not a compact JWE of five parts and at most ${MAX_USERINFO_VALUE_LENGTH} characters.`,
    );
  }
  const read = readOurs(jwe, ATTRIBUTE_ALGORITHMS, what);
  if (!keyAllows(blockKey.alg, read.header)) {
    // The block key's own alg decides: an A128GCMKW key opens no A128KW attribute, nor the reverse.
    throw notAllowed(what);
  }
  let plaintext: Uint8Array;
  try {
    plaintext = ours(read, blockKey.bytes, what);
  } catch (err) {
    if (err instanceof IdError) throw err;
    throw new IdError(
      'userinfo_data_decrypt_failed',
      `The userinfo value for scope "${scopeLabel(scope)}" could not be decrypted with the block key (altered or not meant for it).`,
      { cause: err instanceof JweRefused && err.cause !== undefined ? err.cause : err },
    );
  }
  try {
    return utf8.decode(plaintext);
  } catch {
    throw new IdError('userinfo_malformed', `The userinfo value for scope "${scopeLabel(scope)}" is not UTF-8 text.`);
  }
}

/**
 * Read a JWE's header, for node:crypto to decrypt it (see jwe-gcm.ts).
 * @throws IdError `userinfo_malformed` when it is not a compact JWE with a JSON object header, and
 *   `userinfo_alg_not_allowed` when it is compressed or outside the allowlists.
 */
function readOurs(jwe: string, algorithms: readonly string[], what: string): CompactJwe {
  let read: CompactJwe;
  try {
    read = readCompactJwe(jwe);
  } catch {
    throw new IdError('userinfo_malformed', `${what} is not a compact JWE.`);
  }
  if (handledHere(read.header, algorithms)) return read;
  checkHeader(read.header, algorithms, what);
  // Every allowlisted pair is handled here; this line is never reached while the lists agree.
  throw notAllowed(what);
}

/**
 * Decrypt with node:crypto. A bad base64url part is `userinfo_malformed`, an unknown `crit`
 * extension `userinfo_alg_not_allowed` (as jose refuses it); a JWE that does not decrypt throws the
 * refusal on, for the caller to report as its own decryption failure.
 */
function ours(read: CompactJwe, key: JweKey, what: string): Uint8Array {
  try {
    return decryptJwe(read, key);
  } catch (err) {
    throw refusal(err, what);
  }
}

/** Decrypt through a decrypter that holds the key elsewhere (an HSM or a KMS), with the refusals {@link ours} maps. */
async function theirs(read: CompactJwe, remote: JweDecrypter, publicKey: KeyObject, what: string): Promise<Uint8Array> {
  try {
    return await decryptWithDecrypter(read, remote, publicKey);
  } catch (err) {
    throw refusal(err, what);
  }
}

/** A malformed JWE or an unknown `crit` extension as its IdError; any other failure as it was thrown. */
function refusal(err: unknown, what: string): unknown {
  if (err instanceof JweRefused && err.reason === 'malformed')
    return new IdError('userinfo_malformed', `${what} is not a compact JWE.`);
  if (err instanceof JweRefused && err.reason === 'crit')
    return new IdError(
      'userinfo_alg_not_allowed',
      `${what} names a critical header extension (crit); none is understood.`,
    );
  return err;
}

function notAllowed(what: string): IdError {
  return new IdError('userinfo_alg_not_allowed', `${what} uses an algorithm or header that is not allowed.`);
}

/** Malformed, compressed, or outside the allowlists: the specific error. */
function checkHeader(header: Record<string, unknown>, algorithms: readonly string[], what: string): void {
  if (header.zip !== undefined) {
    throw new IdError('userinfo_alg_not_allowed', `${what} is compressed (zip); compressed JWEs are refused.`);
  }
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    throw new IdError(
      'userinfo_alg_not_allowed',
      `${what} uses key management "${label(header.alg)}"; allowed: ${algorithms.join(', ')}.`,
    );
  }
  if (typeof header.enc !== 'string' || !CONTENT_ENCRYPTIONS.includes(header.enc)) {
    throw new IdError(
      'userinfo_alg_not_allowed',
      `${what} uses content encryption "${label(header.enc)}"; allowed: ${CONTENT_ENCRYPTIONS.join(', ')}.`,
    );
  }
}

function label(value: unknown): string {
  return typeof value === 'string' && /^[\w+-]{1,30}$/.test(value) ? value : 'unknown';
}

function scopeLabel(scope: string): string {
  return /^[\w.:-]{1,100}$/.test(scope) ? scope : 'unnamed';
}
