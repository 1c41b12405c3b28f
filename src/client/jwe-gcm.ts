/**
 * Compact JWE decryption with node:crypto for the algorithms the service uses (spec 4.6): the
 * block key under `RSA-OAEP-256` or `RSA-OAEP`, attributes under `dir`, content under AES-GCM.
 * jose 6 runs on WebCrypto, converting and importing keys on every call, which nearly doubled the
 * CPU of a login; this path does the same checks synchronously. Any other algorithm of the
 * allowlists is left to jose by the caller ({@link readCompactJwe} says which).
 */
import { constants, createDecipheriv, privateDecrypt, type KeyObject } from 'node:crypto';

/** A compact JWE split and read: the header parsed, the other parts still base64url text. */
export interface CompactJwe {
  /** The protected header, a JSON object. */
  header: Record<string, unknown>;
  /** The five segments as received. */
  parts: readonly [string, string, string, string, string];
}

/** Why this path refused a JWE; the caller turns it into its own error. */
export type JweRefusal = 'malformed' | 'crit' | 'failed';

/** Thrown by this module's functions; `reason` says which refusal. */
export class JweRefused extends Error {
  /** Which refusal. */
  readonly reason: JweRefusal;
  /** @param reason which refusal. */
  constructor(reason: JweRefusal) {
    super(`JWE refused: ${reason}`);
    this.reason = reason;
  }
}

/** Key size in bytes of each AES-GCM content encryption handled here. */
export const GCM_KEY_BYTES: Readonly<Record<string, number>> = { A128GCM: 16, A192GCM: 24, A256GCM: 32 };
const OAEP_HASH: Readonly<Record<string, string>> = { 'RSA-OAEP': 'sha1', 'RSA-OAEP-256': 'sha256' };
const MIN_RSA_BITS = 2048;
const utf8 = new TextDecoder('utf-8', { fatal: true });
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Strict base64url: only the URL-safe alphabet, no padding, no length that cannot occur, and the
 * canonical text of its bytes (no stray low bits in the last character).
 * @throws JweRefused `malformed` otherwise.
 */
export function strictBase64url(text: string): Buffer {
  if (!BASE64URL.test(text) || text.length % 4 === 1) throw new JweRefused('malformed');
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) throw new JweRefused('malformed');
  return bytes;
}

/**
 * Split a compact JWE into its five parts and parse the protected header (strict base64url,
 * UTF-8, a JSON object).
 * @throws JweRefused `malformed` when it is not such a JWE.
 */
export function readCompactJwe(jwe: string): CompactJwe {
  const parts = jwe.split('.');
  if (parts.length !== 5) throw new JweRefused('malformed');
  let header: unknown;
  try {
    header = JSON.parse(utf8.decode(strictBase64url(parts[0] as string)));
  } catch {
    throw new JweRefused('malformed');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new JweRefused('malformed');
  return { header: header as Record<string, unknown>, parts: parts as unknown as CompactJwe['parts'] };
}

/**
 * True when this module decrypts a JWE with this header: `alg` among `algorithms` (RSA-OAEP,
 * RSA-OAEP-256, dir), `enc` an AES-GCM size, and no `zip` (which the caller refuses).
 */
export function handledHere(header: Record<string, unknown>, algorithms: readonly string[]): boolean {
  const { alg, enc } = header;
  return (
    typeof alg === 'string' &&
    algorithms.includes(alg) &&
    (alg === 'dir' || alg in OAEP_HASH) &&
    typeof enc === 'string' &&
    Object.hasOwn(GCM_KEY_BYTES, enc) &&
    header.zip === undefined
  );
}

/**
 * Decrypt a JWE {@link handledHere} accepts, with an RSA private key (`RSA-OAEP*`) or the AES key
 * itself (`dir`). Refuses any `crit` (no extension is understood), an IV other than 12 bytes, a
 * tag other than 16 bytes, a content key of the wrong size for `enc`, an RSA key under 2048 bits,
 * and anything that does not authenticate. The AAD is the ASCII protected header.
 * @throws JweRefused `malformed`, `crit` or `failed`.
 */
export function decryptGcmJwe(jwe: CompactJwe, key: KeyObject): Buffer {
  const { header, parts } = jwe;
  if (header.crit !== undefined) throw new JweRefused('crit');
  const alg = header.alg as string;
  const keyBytes = GCM_KEY_BYTES[header.enc as string] as number;
  const [, encryptedKeySeg] = parts;
  const encryptedKey = strictBase64url(encryptedKeySeg);
  // Every part is read before any key is used, so a malformed JWE is refused as such first.
  const content = readGcmParts(jwe);
  let cek: KeyObject | Buffer;
  if (alg === 'dir') {
    if (encryptedKey.length !== 0 || key.type !== 'secret' || key.symmetricKeySize !== keyBytes) throw new JweRefused('failed');
    cek = key;
  } else {
    if (key.asymmetricKeyType !== 'rsa' || key.type !== 'private' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
      throw new JweRefused('failed');
    }
    if (encryptedKey.length === 0) throw new JweRefused('failed');
    try {
      cek = privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: OAEP_HASH[alg] as string }, encryptedKey);
    } catch {
      throw new JweRefused('failed');
    }
    if (cek.length !== keyBytes) throw new JweRefused('failed');
  }
  return decryptGcm(jwe, content, cek);
}

/** The IV, ciphertext and tag of a JWE, decoded, with the IV and tag sizes AES-GCM takes. */
interface GcmParts {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

function readGcmParts(jwe: CompactJwe): GcmParts {
  const [, , ivSeg, ciphertextSeg, tagSeg] = jwe.parts;
  const iv = strictBase64url(ivSeg);
  const ciphertext = strictBase64url(ciphertextSeg);
  const tag = strictBase64url(tagSeg);
  if (iv.length !== 12 || tag.length !== 16) throw new JweRefused('failed');
  return { iv, ciphertext, tag };
}

/**
 * The AES-GCM content step alone, with the content-encryption key already known (from the key
 * management step of another algorithm): a 12-byte IV, a 16-byte tag, a key of the size `enc`
 * names, the ASCII protected header as AAD.
 * @throws JweRefused `malformed` or `failed`.
 */
export function decryptGcmContent(jwe: CompactJwe, cek: KeyObject | Buffer): Buffer {
  return decryptGcm(jwe, readGcmParts(jwe), cek);
}

function decryptGcm(jwe: CompactJwe, { iv, ciphertext, tag }: GcmParts, cek: KeyObject | Buffer): Buffer {
  const keyBytes = GCM_KEY_BYTES[jwe.header.enc as string];
  if (keyBytes === undefined) throw new JweRefused('failed');
  if ((Buffer.isBuffer(cek) ? cek.length : cek.symmetricKeySize) !== keyBytes) throw new JweRefused('failed');
  try {
    const decipher = createDecipheriv(`aes-${keyBytes * 8}-gcm` as 'aes-256-gcm', cek, iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(jwe.parts[0], 'ascii'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch {
    throw new JweRefused('failed');
  }
}
