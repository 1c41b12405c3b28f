/**
 * One entry point for a compact JWE decrypted with keys the app holds: the header read strictly,
 * the algorithms checked against the caller's allowlists (never taken from the token alone),
 * compression and extensions refused, then the key management the header names, with the key
 * the `kid` names or each key that fits ({@link decryptWithAppKeys}); a symmetric key whose JWK
 * names an `alg` opens only a JWE of that algorithm ({@link keyAllows}).
 */
import type { KeyObject } from 'node:crypto';
import { decryptWithAppKeys } from './jwe-app-keys.js';
import { CONTENT_ENCRYPTIONS, decryptJwe, handledHere, keyAllows, readCompactJwe } from './jwe-decrypt.js';
import { ECDH_ES_ALGORITHMS } from './jwe-ecdh.js';
import { JweRefused } from './refused.js';

/** A key to decrypt with: an app's private key (EC or RSA), or a symmetric key as bytes, with what its JWK says. */
export interface JweDecryptionKey {
  readonly key: KeyObject | Buffer;
  /** The key's JWK `alg`, when it names one: a symmetric key then opens only JWEs of it. */
  readonly alg?: string | undefined;
  readonly kid?: string | undefined;
  readonly thumbprint?: string | undefined;
}

/** The allowlists a JWE is held to. */
export interface JweAllowlists {
  /** Key-management algorithms accepted. */
  algorithms: readonly string[];
  /** Content encryptions accepted; default every one handled. */
  encryptions?: readonly string[];
}

/**
 * The plaintext of the compact JWE `token`.
 * @throws JweRefused `malformed` (not a compact JWE), `crit` (an extension), or `failed` (an
 *   algorithm outside the allowlists, compression, no key that decrypts it).
 */
export function decryptCompactJwe(token: string, keys: readonly JweDecryptionKey[], allow: JweAllowlists): Buffer {
  const jwe = readCompactJwe(token);
  const { alg, enc } = jwe.header;
  if (jwe.header.crit !== undefined) throw new JweRefused('crit');
  const encryptions = allow.encryptions ?? CONTENT_ENCRYPTIONS;
  if (
    typeof alg !== 'string' ||
    !allow.algorithms.includes(alg) ||
    typeof enc !== 'string' ||
    !encryptions.includes(enc)
  )
    throw new JweRefused('failed');
  if (jwe.header.zip !== undefined) throw new JweRefused('failed');
  const asymmetric = keys.filter(
    (k): k is JweDecryptionKey & { key: KeyObject } => !Buffer.isBuffer(k.key) && k.key.type === 'private',
  );
  if (ECDH_ES_ALGORITHMS.includes(alg) || alg.startsWith('RSA-OAEP')) {
    const plaintext = decryptWithAppKeys(
      jwe,
      asymmetric.filter((k) => keyAllows(k.alg, jwe.header)),
    );
    if (plaintext === undefined) throw new JweRefused('failed');
    return plaintext;
  }
  if (!handledHere(jwe.header, allow.algorithms)) throw new JweRefused('failed');
  let last: unknown;
  for (const k of keys) {
    if (!Buffer.isBuffer(k.key) && k.key.type !== 'secret') continue;
    try {
      return decryptJwe(jwe, k.key, k.alg);
    } catch (err) {
      if (err instanceof JweRefused && err.reason !== 'failed') throw err;
      last = err;
    }
  }
  throw new JweRefused('failed', last);
}
