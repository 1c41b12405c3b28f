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

/** A private key of the app, with the ids a JWE header may name it by. */
export interface AppDecryptionKey {
  readonly key: KeyObject;
  /** The key's own `kid`, when it has one. */
  readonly kid?: string | undefined;
  /** Its RFC 7638 thumbprint, when known. */
  readonly thumbprint?: string | undefined;
}

/** What {@link decryptWithAppKeys} found: the plaintext, or why there is none. */
export type AppKeysResult =
  | { plaintext: Buffer }
  | {
      /** `no-key`: none of the keys is of the kind the algorithm takes; `malformed`: the JWE is not well formed; `failed`: no key decrypts it. */
      refusal: 'no-key' | 'malformed' | 'failed';
      /** The error of the last key tried, if any. */
      cause?: unknown;
    };

/** The kind of key a key-management algorithm takes: EC for ECDH-ES*, RSA for RSA-OAEP*. */
export function keyKindFor(alg: string): 'ec' | 'rsa' {
  return ECDH_ES_ALGORITHMS.includes(alg) ? 'ec' : 'rsa';
}

/** The keys to try, in order: the one the header's `kid` names among those that fit, else all that fit. */
export function appKeyCandidates<K extends AppDecryptionKey>(keys: readonly K[], alg: string, kid: unknown): K[] {
  const kind = keyKindFor(alg);
  const fitting = keys.filter((k) => k.key.type === 'private' && k.key.asymmetricKeyType === kind);
  if (typeof kid !== 'string') return fitting;
  const named = fitting.find((k) => k.kid === kid) ?? fitting.find((k) => k.thumbprint === kid);
  return named === undefined ? fitting : [named];
}

/**
 * Decrypt a compact JWE under `ECDH-ES` (+`A128KW`/`A192KW`/`A256KW`) or `RSA-OAEP(-256)` with
 * the first of the app's keys that opens it ({@link appKeyCandidates}). The caller has checked the
 * algorithms against its allowlists.
 */
export function decryptWithAppKeys(jwe: CompactJwe, keys: readonly AppDecryptionKey[]): AppKeysResult {
  const alg = String(jwe.header.alg);
  const candidates = appKeyCandidates(keys, alg, jwe.header.kid);
  if (candidates.length === 0) return { refusal: 'no-key' };
  const ecdh = keyKindFor(alg) === 'ec';
  let malformed = false;
  let cause: unknown;
  for (const candidate of candidates) {
    try {
      const plaintext = ecdh
        ? decryptContent(jwe, ecdhEsContentKey(jwe, candidate.key))
        : decryptJwe(jwe, candidate.key);
      return { plaintext };
    } catch (err) {
      // the next key, if any
      if (err instanceof JweRefused && err.reason === 'malformed') malformed = true;
      cause = err;
    }
  }
  return { refusal: malformed ? 'malformed' : 'failed', cause };
}
