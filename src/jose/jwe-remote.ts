/**
 * The key-management step of a JWE done by a decrypter that holds the private key elsewhere (an
 * HSM or a KMS): it unwraps the encrypted key (RSA-OAEP) or agrees the ECDH shared secret with
 * the `epk`; the Concat KDF, the AES key unwrap and the content decryption stay here. Every part
 * of the JWE is read, and the `epk` checked on its curve, before the decrypter is called.
 */
import type { KeyObject } from 'node:crypto';
import type { JweDecrypter } from './key-reference.js';
import {
  type CompactJwe,
  CONTENT_KEY_BYTES,
  decryptContent,
  readContentParts,
  strictBase64url,
} from './jwe-decrypt.js';
import { checkEcdhHeader, contentKeyFromSecret, ECDH_ES_ALGORITHMS, ephemeralPoint, onCurve } from './jwe-ecdh.js';
import { JweRefused } from './refused.js';

const RSA_OAEP: readonly string[] = ['RSA-OAEP-256', 'RSA-OAEP'];

/**
 * The plaintext of `jwe` (`RSA-OAEP-256`/`RSA-OAEP` or an `ECDH-ES` algorithm) through `decrypter`,
 * whose public key is `publicKey`.
 * @throws JweRefused `malformed`, `crit` or `failed` (the decrypter's own error as the cause).
 */
export async function decryptWithDecrypter(
  jwe: CompactJwe,
  decrypter: JweDecrypter,
  publicKey: KeyObject,
): Promise<Buffer> {
  if (jwe.header.crit !== undefined) throw new JweRefused('crit');
  readContentParts(jwe);
  const alg = jwe.header.alg;
  if (typeof alg === 'string' && RSA_OAEP.includes(alg)) {
    return decryptContent(jwe, await unwrapContentKey(jwe, alg, decrypter, publicKey));
  }
  if (typeof alg === 'string' && ECDH_ES_ALGORITHMS.includes(alg)) {
    return decryptContent(jwe, await agreedContentKey(jwe, decrypter, publicKey));
  }
  throw new JweRefused('failed');
}

async function unwrapContentKey(
  jwe: CompactJwe,
  alg: string,
  decrypter: JweDecrypter,
  publicKey: KeyObject,
): Promise<Buffer> {
  const encryptedKey = strictBase64url(jwe.parts[1]);
  const modulusBytes = (publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8;
  const unwrap = decrypter.unwrap;
  if (publicKey.asymmetricKeyType !== 'rsa' || unwrap === undefined || encryptedKey.length !== modulusBytes)
    throw new JweRefused('failed');
  const cek = await called(() => unwrap.call(decrypter, alg, encryptedKey));
  if (cek.length !== CONTENT_KEY_BYTES[jwe.header.enc as string]) throw new JweRefused('failed');
  return cek;
}

async function agreedContentKey(jwe: CompactJwe, decrypter: JweDecrypter, publicKey: KeyObject): Promise<Buffer> {
  checkEcdhHeader(jwe);
  const point = ephemeralPoint(jwe.header.epk);
  const derive = decrypter.deriveSharedSecret;
  if (
    publicKey.asymmetricKeyType !== 'ec' ||
    derive === undefined ||
    point.curve !== publicKey.asymmetricKeyDetails?.namedCurve ||
    !onCurve(point)
  ) {
    throw new JweRefused('failed');
  }
  const epk = {
    kty: 'EC',
    crv: point.crv,
    x: point.x.toString('base64url'),
    y: point.y.toString('base64url'),
  } as const;
  const shared = await called(() => derive.call(decrypter, epk));
  if (shared.length !== point.bytes) throw new JweRefused('failed');
  return contentKeyFromSecret(jwe, shared);
}

/** What the decrypter resolves to, as a Buffer; its failure becomes a refusal with its error as the cause. */
async function called(operation: () => Promise<Uint8Array>): Promise<Buffer> {
  let out: unknown;
  try {
    out = await operation();
  } catch (err) {
    throw new JweRefused('failed', err);
  }
  if (!(out instanceof Uint8Array)) throw new JweRefused('failed');
  return Buffer.from(out.buffer, out.byteOffset, out.length);
}
