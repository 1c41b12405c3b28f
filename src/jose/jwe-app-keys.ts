/**
 * Compact JWE decryption with the app's own private keys, whatever the JWE's `kid` says: the key
 * it names (by the key's own `kid` or its RFC 7638 thumbprint) when one of them fits the
 * algorithm, else each key of the kind the algorithm takes, in the order given. A provider that
 * writes another `kid` (one of its own making, or none) is read as well as one that names the
 * key exactly; the `kid` only saves trying keys that cannot decrypt.
 */
import type { KeyObject } from 'node:crypto';
import { decryptContent, decryptJwe, type CompactJwe } from './jwe-decrypt.js';
import { ECDH_ES_ALGORITHMS, ecdhEsContentKey } from './jwe-ecdh.js';
import { JweRefused } from './refused.js';
import type { JweDecrypter } from './key-reference.js';
import { decryptWithDecrypter } from './jwe-remote.js';

/** A private key of the app, with the ids a JWE header may name it by. */
export interface AppDecryptionKey {
  /** The private key, or the public key of `remote`. */
  readonly key: KeyObject;
  /** The decrypter that holds the private key elsewhere (an HSM or a KMS), when it is not in process. */
  readonly remote?: JweDecrypter | undefined;
  /** The key's own `kid`, when it has one. */
  readonly kid?: string | undefined;
  /** Its RFC 7638 thumbprint, when known. */
  readonly thumbprint?: string | undefined;
}

/** The keys to try, in order: the one the header's `kid` names among those of the algorithm's kind, else all of that kind. */
export function appKeyCandidates<K extends AppDecryptionKey>(keys: readonly K[], alg: string, kid: unknown): K[] {
  const kind = ECDH_ES_ALGORITHMS.includes(alg) ? 'ec' : 'rsa';
  const fitting = keys.filter(
    (k) => (k.key.type === 'private' || k.remote !== undefined) && k.key.asymmetricKeyType === kind,
  );
  const named = fitting.find((k) => k.kid === kid) ?? fitting.find((k) => k.thumbprint === kid);
  return typeof kid !== 'string' || named === undefined ? fitting : [named];
}

/**
 * The one key to try where no key may be tried on a guess (an unauthenticated request, each try
 * perhaps a call to an HSM or a KMS): the key the header's `kid` names among those of the
 * algorithm's kind or, with no `kid`, the only key of that kind. `undefined` when there is none,
 * or several and the header names none of them.
 */
export function namedAppKey<K extends AppDecryptionKey>(keys: readonly K[], alg: string, kid: unknown): K | undefined {
  const fitting = appKeyCandidates(keys, alg, undefined);
  if (typeof kid === 'string') return fitting.find((k) => k.kid === kid) ?? fitting.find((k) => k.thumbprint === kid);
  return kid === undefined && fitting.length === 1 ? fitting[0] : undefined;
}

/**
 * Decrypt a compact JWE under `ECDH-ES` (+`A128KW`/`A192KW`/`A256KW`) or `RSA-OAEP(-256)` with
 * the first of the app's keys that opens it ({@link appKeyCandidates}). The caller has checked the
 * algorithms against its allowlists.
 * @returns the plaintext, or `undefined` when none of the keys is of the kind the algorithm takes.
 * @throws JweRefused `malformed` when the JWE is not well formed, else `failed` when no key opens it.
 */
export function decryptWithAppKeys(jwe: CompactJwe, keys: readonly AppDecryptionKey[]): Buffer | undefined {
  const alg = String(jwe.header.alg);
  const candidates = appKeyCandidates(keys, alg, jwe.header.kid);
  if (candidates.length === 0) return undefined;
  let refusal = new JweRefused('failed');
  for (const { key, remote } of candidates) {
    if (remote !== undefined) continue; // decryptWithAppKeysAsync uses it
    try {
      return ECDH_ES_ALGORITHMS.includes(alg) ? decryptContent(jwe, ecdhEsContentKey(jwe, key)) : decryptJwe(jwe, key);
    } catch (err) {
      // the next key, if any; a malformed JWE is reported as such
      if (refusal.reason !== 'malformed') refusal = err instanceof JweRefused ? err : new JweRefused('failed', err);
    }
  }
  throw refusal;
}

/** True when some of the keys decrypt through a decrypter held elsewhere ({@link decryptWithAppKeysAsync} then). */
export function someRemote(keys: readonly AppDecryptionKey[]): boolean {
  return keys.some((k) => k.remote !== undefined);
}

/**
 * {@link decryptWithAppKeys} where some keys are decrypters held elsewhere: the same candidates,
 * in the same order, each in-process key used synchronously and each decrypter awaited.
 * @returns the plaintext, or `undefined` when none of the keys is of the kind the algorithm takes.
 * @throws JweRefused `malformed` when the JWE is not well formed, else `failed` when no key opens it.
 */
export async function decryptWithAppKeysAsync(
  jwe: CompactJwe,
  keys: readonly AppDecryptionKey[],
): Promise<Buffer | undefined> {
  const alg = String(jwe.header.alg);
  const candidates = appKeyCandidates(keys, alg, jwe.header.kid);
  if (candidates.length === 0) return undefined;
  let refusal = new JweRefused('failed');
  for (const candidate of candidates) {
    try {
      if (candidate.remote !== undefined) return await decryptWithDecrypter(jwe, candidate.remote, candidate.key);
      const plaintext = decryptWithAppKeys(jwe, [candidate]);
      if (plaintext !== undefined) return plaintext;
    } catch (err) {
      if (refusal.reason !== 'malformed') refusal = err instanceof JweRefused ? err : new JweRefused('failed', err);
    }
  }
  throw refusal;
}
