/**
 * Compact JWE decryption with node:crypto for every algorithm the allowlists accept: the key
 * management `dir`, `RSA-OAEP-256` / `RSA-OAEP`, AES Key Wrap (`A128KW`/`A192KW`/`A256KW`) and
 * AES-GCM key wrap (`A128GCMKW`/`A192GCMKW`/`A256GCMKW`), and the content encryptions AES-GCM
 * and AES-CBC with HMAC-SHA2 (RFC 7518 5.2). The ECDH-ES key agreements are in `jwe-ecdh.ts`.
 * jose 6 runs on WebCrypto, converting and importing keys on every call, which nearly doubled
 * the CPU of a login (1.94x the node:crypto floor for `A128GCMKW` attributes); this path does
 * the same checks synchronously. `test/client/userinfo-jwe-differential.test.ts` and
 * `id-token-jwe-differential.test.ts` show the decisions match jose's.
 */
import { constants, createDecipheriv, createHmac, privateDecrypt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { strictBase64url, utf8 } from './base64url.js';
import { rsaKeyProblem } from './rsa-key.js';
import { JweRefused } from './refused.js';

export { JweRefused, type JweRefusal } from './refused.js';
export { strictBase64url } from './base64url.js';

/** A compact JWE split and read: the header parsed, the other parts still base64url text. */
export interface CompactJwe {
  /** The protected header, a JSON object. */
  header: Record<string, unknown>;
  /** The five segments as received. */
  parts: readonly [string, string, string, string, string];
}

/** A symmetric key as bytes, or a node key (secret for `dir` and the key wraps, RSA private for RSA-OAEP). */
export type JweKey = KeyObject | Buffer;

/** Key size in bytes of each AES-GCM content encryption. */
export const GCM_KEY_BYTES: Readonly<Record<string, number>> = { A128GCM: 16, A192GCM: 24, A256GCM: 32 };
/** Content-encryption key size in bytes of each content encryption handled here (CBC-HS: MAC key + AES key). */
export const CONTENT_KEY_BYTES: Readonly<Record<string, number>> = {
  ...GCM_KEY_BYTES,
  'A128CBC-HS256': 32,
  'A192CBC-HS384': 48,
  'A256CBC-HS512': 64,
};
/**
 * The content encryptions every JWE this client decrypts may use (userinfo block key and
 * attributes, encrypted ID tokens): the keys of {@link CONTENT_KEY_BYTES}, AES-GCM first.
 */
export const CONTENT_ENCRYPTIONS: readonly string[] = Object.freeze(Object.keys(CONTENT_KEY_BYTES));
const OAEP_HASH: Readonly<Record<string, string>> = { 'RSA-OAEP': 'sha1', 'RSA-OAEP-256': 'sha256' };
/** Key-encryption key size in bytes of the AES key wraps. */
const KW_KEY_BYTES: Readonly<Record<string, number>> = { A128KW: 16, A192KW: 24, A256KW: 32 };
const GCMKW_KEY_BYTES: Readonly<Record<string, number>> = { A128GCMKW: 16, A192GCMKW: 24, A256GCMKW: 32 };
/** RFC 3394 default initial value. */
const KW_IV = Buffer.from('A6A6A6A6A6A6A6A6', 'hex');

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
 * True when {@link decryptJwe} decrypts a JWE with this header: `alg` among `algorithms` and one
 * of dir, RSA-OAEP(-256), AES KW or AES-GCM KW; `enc` AES-GCM or AES-CBC-HMAC; and no `zip`
 * (which the caller refuses).
 */
export function handledHere(header: Record<string, unknown>, algorithms: readonly string[]): boolean {
  const { alg, enc } = header;
  return (
    typeof alg === 'string' &&
    algorithms.includes(alg) &&
    (alg === 'dir' ||
      Object.hasOwn(OAEP_HASH, alg) ||
      Object.hasOwn(KW_KEY_BYTES, alg) ||
      Object.hasOwn(GCMKW_KEY_BYTES, alg)) &&
    typeof enc === 'string' &&
    Object.hasOwn(CONTENT_KEY_BYTES, enc) &&
    header.zip === undefined
  );
}

/**
 * Decrypt a JWE {@link handledHere} accepts, with an RSA private key (`RSA-OAEP*`) or the
 * symmetric key (`dir`, the key wraps). Refuses any `crit` (no extension is understood), an IV
 * or tag of another size than `enc` takes, a content key of the wrong size for `enc`, a key of
 * the wrong type or size for `alg`, an RSA key that `rsaKeyProblem` refuses, and anything that does not
 * authenticate. The AAD is the ASCII protected header.
 * @param keyAlg the algorithm the key is for (its JWK `alg`), when it names one: then only a JWE of
 *   that algorithm opens with it ({@link keyAllows}).
 * @throws JweRefused `malformed`, `crit` or `failed`.
 */
export function decryptJwe(jwe: CompactJwe, key: JweKey, keyAlg?: string): Buffer {
  const { header, parts } = jwe;
  if (header.crit !== undefined) throw new JweRefused('crit');
  const alg = header.alg as string;
  if (!keyAllows(keyAlg, header)) throw new JweRefused('failed');
  const cekBytes = CONTENT_KEY_BYTES[header.enc as string];
  if (cekBytes === undefined) throw new JweRefused('failed');
  const encryptedKey = strictBase64url(parts[1]);
  // Every part is read before any key is used, so a malformed JWE is refused as such first.
  const content = readContentParts(jwe);
  let cek: JweKey;
  if (alg === 'dir') {
    if (encryptedKey.length !== 0 || symmetricSize(key) !== cekBytes) throw new JweRefused('failed');
    cek = key;
  } else if (Object.hasOwn(OAEP_HASH, alg)) {
    cek = rsaOaepUnwrap(alg, encryptedKey, key);
  } else if (Object.hasOwn(KW_KEY_BYTES, alg)) {
    cek = aesKeyUnwrap(encryptedKey, symmetricBytes(key, KW_KEY_BYTES[alg] as number));
  } else if (Object.hasOwn(GCMKW_KEY_BYTES, alg)) {
    cek = aesGcmKeyUnwrap(header, encryptedKey, symmetricBytes(key, GCMKW_KEY_BYTES[alg] as number));
  } else {
    throw new JweRefused('failed');
  }
  return decryptContentParts(jwe, content, cek);
}

/**
 * True when a key whose JWK names `keyAlg` may open a JWE with this header: a key names the
 * key-management algorithm it is for (`A128KW`, `A128GCMKW`, `RSA-OAEP-256`, ...), or, used
 * directly (`dir`), the content encryption (`A128GCM`). A key that names none opens any.
 * An AES key for the key wrap never opens a GCM key wrap, nor the reverse (RFC 7517 4.4).
 */
export function keyAllows(keyAlg: string | undefined, header: Record<string, unknown>): boolean {
  if (keyAlg === undefined) return true;
  return header.alg === keyAlg || (header.alg === 'dir' && header.enc === keyAlg);
}

/** Byte size of a symmetric key, or -1 for an asymmetric one. */
function symmetricSize(key: JweKey): number {
  if (Buffer.isBuffer(key)) return key.length;
  return key.type === 'secret' ? (key.symmetricKeySize ?? -1) : -1;
}

/** The bytes of a symmetric key of exactly `size` bytes. */
function symmetricBytes(key: JweKey, size: number): Buffer {
  if (symmetricSize(key) !== size) throw new JweRefused('failed');
  return Buffer.isBuffer(key) ? key : key.export();
}

/**
 * PKCS#8 PEM of each RSA key, made only on a runtime whose `privateDecrypt` refuses a KeyObject
 * (workerd's `nodejs_compat` before 2026-11). On Node a KeyObject is passed: parsing a PEM on
 * every call would cost 1.5 ms more per login.
 */
const pemOf = new WeakMap<KeyObject, string>();
let keyObjectRefused = false;

function rsaPrivateDecrypt(key: KeyObject, oaepHash: string, data: Buffer): Buffer {
  const padding = constants.RSA_PKCS1_OAEP_PADDING;
  let refusal: unknown;
  if (!keyObjectRefused) {
    try {
      return privateDecrypt({ key, padding, oaepHash }, data);
    } catch (err) {
      // OpenSSL's answer (ERR_OSSL_*): the key does not decrypt this. Anything else is the
      // runtime refusing the argument: try again with a PEM, which every runtime accepts.
      if (isOpenSslError(err)) throw new JweRefused('failed', err);
      refusal = err;
    }
  }
  let pem = pemOf.get(key);
  if (pem === undefined) {
    pem = String(key.export({ format: 'pem', type: 'pkcs8' }));
    pemOf.set(key, pem);
  }
  try {
    const cek = privateDecrypt({ key: pem, padding, oaepHash }, data);
    // The PEM worked where the KeyObject did not: use it from now on.
    if (refusal !== undefined) keyObjectRefused = true;
    return cek;
  } catch (err) {
    // OpenSSL's answer says why (not this key); otherwise the runtime's refusal of the KeyObject does.
    throw new JweRefused('failed', isOpenSslError(err) ? err : (refusal ?? err));
  }
}

function isOpenSslError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_OSSL');
}

/** @internal For tests: whether the PEM fallback of `privateDecrypt` is in use; `reset` clears it. */
export function pemFallbackInUse(reset = false): boolean {
  const inUse = keyObjectRefused;
  if (reset) keyObjectRefused = false;
  return inUse;
}

/**
 * RSAES-OAEP decryption (RFC 8017 7.1.2, empty label) of a content key under `RSA-OAEP` (SHA-1)
 * or `RSA-OAEP-256` (SHA-256, MGF1 with SHA-256), with an RSA private key {@link rsaKeyProblem} accepts.
 * @throws JweRefused `failed` when it does not decrypt.
 */
export function rsaOaepUnwrap(alg: string, encryptedKey: Buffer, key: JweKey): Buffer {
  if (
    Buffer.isBuffer(key) ||
    key.asymmetricKeyType !== 'rsa' ||
    key.type !== 'private' ||
    rsaKeyProblem(key) !== undefined
  ) {
    throw new JweRefused('failed');
  }
  const hash = OAEP_HASH[alg];
  if (hash === undefined || encryptedKey.length === 0) throw new JweRefused('failed');
  return rsaPrivateDecrypt(key, hash, encryptedKey);
}

/**
 * AES Key Wrap (RFC 3394) unwrap of a content key with `kek` (16, 24 or 32 bytes).
 * @throws JweRefused `failed` when it does not unwrap (the integrity check fails).
 */
export function aesKeyUnwrap(wrapped: Buffer, kek: Buffer): Buffer {
  // A wrapped key is whole 64-bit blocks, at least two of key and one of integrity value.
  if (wrapped.length < 24 || wrapped.length % 8 !== 0) throw new JweRefused('failed');
  try {
    const unwrap = createDecipheriv(`id-aes${kek.length * 8}-wrap` as 'id-aes256-wrap', kek, KW_IV);
    return Buffer.concat([unwrap.update(wrapped), unwrap.final()]);
  } catch (err) {
    throw new JweRefused('failed', err);
  }
}

/** AES-GCM key wrap (RFC 7518 4.7): the header's `iv` (96 bits) and `tag` (128 bits), no AAD. */
function aesGcmKeyUnwrap(header: Record<string, unknown>, encryptedKey: Buffer, kek: Buffer): Buffer {
  if (typeof header.iv !== 'string' || typeof header.tag !== 'string') throw new JweRefused('malformed');
  const iv = strictBase64url(header.iv);
  const tag = strictBase64url(header.tag);
  if (iv.length !== 12 || tag.length !== 16 || encryptedKey.length === 0) throw new JweRefused('failed');
  try {
    const decipher = createDecipheriv(`aes-${kek.length * 8}-gcm` as 'aes-256-gcm', kek, iv, { authTagLength: 16 });
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(encryptedKey), decipher.final()]);
  } catch (err) {
    throw new JweRefused('failed', err);
  }
}

/** The IV, ciphertext and tag of a JWE, decoded, with the IV and tag sizes its `enc` takes. */
interface ContentParts {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

export function readContentParts(jwe: CompactJwe): ContentParts {
  const [, , ivSeg, ciphertextSeg, tagSeg] = jwe.parts;
  const iv = strictBase64url(ivSeg);
  const ciphertext = strictBase64url(ciphertextSeg);
  const tag = strictBase64url(tagSeg);
  const cekBytes = CONTENT_KEY_BYTES[jwe.header.enc as string];
  const gcm = Object.hasOwn(GCM_KEY_BYTES, jwe.header.enc as string);
  // AES-GCM: a 96-bit IV and a 128-bit tag; CBC-HS: a 128-bit IV and a tag of half the key.
  if (cekBytes === undefined || iv.length !== (gcm ? 12 : 16) || tag.length !== (gcm ? 16 : cekBytes / 2)) {
    throw new JweRefused('failed');
  }
  return { iv, ciphertext, tag };
}

/**
 * The content step alone, with the content-encryption key already known (from the key
 * management step of another algorithm): AES-GCM or AES-CBC-HMAC as `enc` names, with the
 * IV, tag and key sizes it takes, the ASCII protected header as AAD.
 * @throws JweRefused `malformed` or `failed`.
 */
export function decryptContent(jwe: CompactJwe, cek: JweKey): Buffer {
  return decryptContentParts(jwe, readContentParts(jwe), cek);
}

function decryptContentParts(jwe: CompactJwe, parts: ContentParts, cek: JweKey): Buffer {
  const enc = jwe.header.enc as string;
  const cekBytes = CONTENT_KEY_BYTES[enc];
  if (cekBytes === undefined || symmetricSize(cek) !== cekBytes) throw new JweRefused('failed');
  const aad = Buffer.from(jwe.parts[0], 'ascii');
  if (Object.hasOwn(GCM_KEY_BYTES, enc)) return decryptGcm(aad, parts, cek, cekBytes);
  return decryptCbcHmac(aad, parts, Buffer.isBuffer(cek) ? cek : cek.export(), cekBytes);
}

function decryptGcm(aad: Buffer, { iv, ciphertext, tag }: ContentParts, cek: JweKey, keyBytes: number): Buffer {
  try {
    const decipher = createDecipheriv(`aes-${keyBytes * 8}-gcm` as 'aes-256-gcm', cek, iv, { authTagLength: 16 });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch (err) {
    throw new JweRefused('failed', err);
  }
}

/**
 * AES-CBC with HMAC-SHA2 (RFC 7518 5.2.2.2): the first half of the key is the MAC key, the second
 * the AES key; the tag is the first half of HMAC(AAD || IV || ciphertext || AL), compared in
 * constant time before anything is decrypted.
 */
function decryptCbcHmac(aad: Buffer, { iv, ciphertext, tag }: ContentParts, cek: Buffer, keyBytes: number): Buffer {
  const half = keyBytes / 2;
  const al = Buffer.alloc(8);
  al.writeBigUInt64BE(BigInt(aad.length * 8));
  const mac = createHmac(`sha${half * 16}`, cek.subarray(0, half))
    .update(aad)
    .update(iv)
    .update(ciphertext)
    .update(al)
    .digest();
  if (!timingSafeEqual(mac.subarray(0, half), tag)) throw new JweRefused('failed');
  return aesCbcDecrypt(cek.subarray(half), iv, ciphertext);
}

/**
 * AES-GCM decryption with the parameters JOSE uses (RFC 7518 5.3, 4.7): a 128-, 192- or 256-bit
 * key, a 96-bit IV and a 128-bit tag; nothing else is taken.
 * @throws JweRefused `failed` when the sizes differ or it does not authenticate.
 */
export function aesGcmDecrypt(key: Buffer, iv: Buffer, aad: Buffer, ciphertext: Buffer, tag: Buffer): Buffer {
  if (![16, 24, 32].includes(key.length) || iv.length !== 12 || tag.length !== 16) throw new JweRefused('failed');
  return decryptGcm(aad, { iv, ciphertext, tag }, key, key.length);
}

/**
 * AES-CBC decryption with PKCS#7 padding, the cipher step of AES-CBC-HMAC-SHA2 (RFC 7518
 * 5.2.2.2) once the tag has been checked: a 128-, 192- or 256-bit key and a 128-bit IV.
 * @throws JweRefused `failed` when the sizes differ or the padding is wrong.
 */
export function aesCbcDecrypt(key: Buffer, iv: Buffer, ciphertext: Buffer): Buffer {
  if (![16, 24, 32].includes(key.length) || iv.length !== 16) throw new JweRefused('failed');
  try {
    const decipher = createDecipheriv(`aes-${key.length * 8}-cbc` as 'aes-256-cbc', key, iv);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch (err) {
    throw new JweRefused('failed', err);
  }
}
