/**
 * `ECDH-ES+A256KW` key agreement (RFC 7518 4.6) with node:crypto, for encrypted ID tokens: the
 * ephemeral public key of the header agreed with the app's EC private key, Concat KDF (SHA-256)
 * to a 256-bit key-wrapping key, then AES-256 Key Wrap (RFC 3394) of the content key. jose 6
 * took about 1.5 ms of CPU for it through WebCrypto; this takes a tenth. The content is then
 * decrypted by `decryptGcmJwe`'s AES-GCM step. `test/client/id-token-jwe-differential.test.ts`
 * shows both paths make the same decisions.
 */
import { createDecipheriv, createECDH, createHash, type ECDH, type KeyObject } from 'node:crypto';
import { JweRefused, strictBase64url, type CompactJwe } from './jwe-gcm.js';

/** RFC 3394 default initial value. */
const KW_IV = Buffer.from('A6A6A6A6A6A6A6A6', 'hex');
const CURVES: Readonly<Record<string, string>> = { 'P-256': 'prime256v1', 'P-384': 'secp384r1', 'P-521': 'secp521r1' };
/** Bytes of one coordinate on each curve (RFC 7518 6.2.1.2: exactly this length). */
const COORDINATE_BYTES: Readonly<Record<string, number>> = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };

/**
 * The content-encryption key of a JWE under `ECDH-ES+A256KW`, unwrapped with `key`.
 * @throws JweRefused `malformed` (no usable `epk`, `apu`, `apv`) or `failed` (wrong curve, a
 *   point not on it, a wrapped key that does not unwrap).
 */
export function unwrapEcdhEsA256kw(jwe: CompactJwe, key: KeyObject): Buffer {
  const { header, parts } = jwe;
  // The caller picks this function by alg; checked again so no other caller can use it for another.
  if (header.alg !== 'ECDH-ES+A256KW') throw new JweRefused('failed');
  const epk = header.epk as Record<string, unknown> | undefined;
  if (typeof epk !== 'object' || epk === null || Array.isArray(epk) || epk.kty !== 'EC' || typeof epk.crv !== 'string') {
    throw new JweRefused('malformed');
  }
  if (epk.d !== undefined || typeof epk.x !== 'string' || typeof epk.y !== 'string') throw new JweRefused('malformed');
  const size = COORDINATE_BYTES[epk.crv];
  if (size === undefined || strictBase64url(epk.x).length !== size || strictBase64url(epk.y).length !== size) throw new JweRefused('malformed');
  if (key.asymmetricKeyType !== 'ec' || key.type !== 'private' || CURVES[epk.crv] !== key.asymmetricKeyDetails?.namedCurve) {
    throw new JweRefused('failed');
  }
  let shared: Buffer;
  try {
    // The uncompressed point 04 || x || y; computeSecret refuses a point that is not on the curve.
    shared = agreementFor(key, CURVES[epk.crv]!).computeSecret(Buffer.concat([UNCOMPRESSED, strictBase64url(epk.x), strictBase64url(epk.y)]));
  } catch {
    throw new JweRefused('failed');
  }
  const apu = optionalBytes(header.apu);
  const apv = optionalBytes(header.apv);
  // Concat KDF, one SHA-256 round: counter 1 || Z || AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo (keydatalen 256).
  const kek = createHash('sha256')
    .update(Uint32(1))
    .update(shared)
    .update(lengthPrefixed(Buffer.from('ECDH-ES+A256KW', 'ascii')))
    .update(lengthPrefixed(apu))
    .update(lengthPrefixed(apv))
    .update(Uint32(256))
    .digest();
  const wrapped = strictBase64url(parts[1]);
  if (wrapped.length !== 40) throw new JweRefused('failed'); // a 256-bit key wrapped: 32 + 8 bytes
  try {
    const unwrap = createDecipheriv('id-aes256-wrap', kek, KW_IV);
    return Buffer.concat([unwrap.update(wrapped), unwrap.final()]);
  } catch {
    throw new JweRefused('failed');
  }
}

const UNCOMPRESSED = Buffer.from([4]);
/**
 * One key-agreement object per private key, made on first use: it takes the ephemeral key as a
 * raw point, where importing it as a JWK for `diffieHellman` cost about twice the CPU per token.
 */
const agreements = new WeakMap<KeyObject, ECDH>();

function agreementFor(key: KeyObject, curve: string): ECDH {
  let ecdh = agreements.get(key);
  if (ecdh === undefined) {
    ecdh = createECDH(curve);
    const scalar = Buffer.from(String(key.export({ format: 'jwk' }).d), 'base64url');
    ecdh.setPrivateKey(scalar);
    scalar.fill(0);
    agreements.set(key, ecdh);
  }
  return ecdh;
}

function optionalBytes(value: unknown): Buffer {
  if (value === undefined) return Buffer.alloc(0);
  if (typeof value !== 'string') throw new JweRefused('malformed');
  return strictBase64url(value);
}

function Uint32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

function lengthPrefixed(bytes: Buffer): Buffer {
  return Buffer.concat([Uint32(bytes.length), bytes]);
}
