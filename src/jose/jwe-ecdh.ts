/**
 * ECDH-ES key agreement (RFC 7518 4.6) on node:crypto for encrypted ID tokens, directly (`ECDH-ES`)
 * or with AES Key Wrap (`ECDH-ES+A128KW`/`A192KW`/`A256KW`): jose does it through WebCrypto at
 * many times the CPU (docs/internals.md). `test/client/id-token-jwe-differential.test.ts` shows
 * both make the same decisions.
 */
import { createECDH, createHash, ECDH, type KeyObject } from 'node:crypto';
import { EC_CURVES } from './ec-keygen.js';
import { aesKeyUnwrap, CONTENT_KEY_BYTES, JweRefused, strictBase64url, type CompactJwe } from './jwe-decrypt.js';

/** The key-wrapping key size in bits of each ECDH-ES key wrap; `ECDH-ES` alone derives the content key. */
const ECDH_KW_BITS: Readonly<Record<string, number>> = {
  'ECDH-ES+A128KW': 128,
  'ECDH-ES+A192KW': 192,
  'ECDH-ES+A256KW': 256,
};
/** The ECDH-ES key-management algorithms handled here. */
export const ECDH_ES_ALGORITHMS: readonly string[] = ['ECDH-ES', ...Object.keys(ECDH_KW_BITS)];

/**
 * The content-encryption key of a JWE under `ECDH-ES` (derived) or `ECDH-ES+A128KW`/`A192KW`/
 * `A256KW` (unwrapped), with the EC private key `key`.
 * @throws JweRefused `malformed` (no usable `epk`, `apu`, `apv`) or `failed` (wrong curve, a
 *   point not on it, an encrypted key where none belongs, a wrapped key that does not unwrap).
 */
export function ecdhEsContentKey(jwe: CompactJwe, key: KeyObject): Buffer {
  checkEcdhHeader(jwe);
  return contentKeyFromSecret(jwe, ecdhSharedSecret(key, jwe.header.epk));
}

/**
 * The header of an ECDH-ES JWE, checked before any key is used: an ECDH-ES `alg` and a known `enc`.
 * @throws JweRefused `failed`.
 */
export function checkEcdhHeader(jwe: CompactJwe): void {
  const alg = jwe.header.alg;
  // The caller picks this path by alg; checked again so no other caller can use it for another.
  if (typeof alg !== 'string' || !ECDH_ES_ALGORITHMS.includes(alg)) throw new JweRefused('failed');
  if (CONTENT_KEY_BYTES[jwe.header.enc as string] === undefined) throw new JweRefused('failed');
}

/**
 * The content-encryption key from the ECDH shared secret `shared` (made in process, or by a
 * decrypter that holds the key elsewhere): derived by the Concat KDF (`ECDH-ES`), or the key
 * the KDF's output unwraps (`ECDH-ES+A128KW`/`A192KW`/`A256KW`).
 * @throws JweRefused `malformed` (no usable `apu`, `apv`) or `failed`.
 */
export function contentKeyFromSecret(jwe: CompactJwe, shared: Buffer): Buffer {
  const { header, parts } = jwe;
  const alg = header.alg as string;
  const cekBytes = CONTENT_KEY_BYTES[header.enc as string] as number;
  const apu = optionalBytes(header.apu);
  const apv = optionalBytes(header.apv);
  const wrapped = strictBase64url(parts[1]);
  if (alg === 'ECDH-ES') {
    // Direct key agreement: the KDF makes the content key, for the algorithm `enc`; no encrypted key.
    if (wrapped.length !== 0) throw new JweRefused('failed');
    return concatKdf(shared, header.enc as string, apu, apv, cekBytes * 8);
  }
  const kwBits = ECDH_KW_BITS[alg] as number;
  const kek = concatKdf(shared, alg, apu, apv, kwBits);
  // The content key wrapped: its size plus one 64-bit integrity block.
  if (wrapped.length !== cekBytes + 8) throw new JweRefused('failed');
  return aesKeyUnwrap(wrapped, kek);
}

/** An ephemeral public key read from a JWE's `epk`: its JWK curve name, node's, and its coordinates. */
export interface EphemeralPoint {
  crv: 'P-256' | 'P-384' | 'P-521';
  curve: string;
  bytes: number;
  x: Buffer;
  y: Buffer;
}

/**
 * The ephemeral public JWK `epk` (RFC 7518 4.6.1.1), read: an EC JWK on P-256, P-384 or P-521
 * with coordinates of exactly the curve's size and no private member.
 * @throws JweRefused `malformed` when it is not such a key.
 */
export function ephemeralPoint(epk: unknown): EphemeralPoint {
  if (typeof epk !== 'object' || epk === null || Array.isArray(epk)) throw new JweRefused('malformed');
  const jwk = epk as Record<string, unknown>;
  if (jwk.kty !== 'EC' || typeof jwk.crv !== 'string') throw new JweRefused('malformed');
  if (jwk.d !== undefined || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') throw new JweRefused('malformed');
  const curve = Object.hasOwn(EC_CURVES, jwk.crv) ? EC_CURVES[jwk.crv] : undefined;
  if (curve === undefined) throw new JweRefused('malformed');
  const x = strictBase64url(jwk.x);
  const y = strictBase64url(jwk.y);
  if (x.length !== curve.bytes || y.length !== curve.bytes) throw new JweRefused('malformed');
  return { crv: jwk.crv as EphemeralPoint['crv'], curve: curve.name, bytes: curve.bytes, x, y };
}

/**
 * The ECDH shared secret of the app's EC private key `key` and the ephemeral public JWK `epk`
 * ({@link ephemeralPoint}), on the key's curve, and a point on that curve.
 * @throws JweRefused `malformed` (no usable `epk`) or `failed` (another curve, a point not on it).
 */
export function ecdhSharedSecret(key: KeyObject, epk: unknown): Buffer {
  const point = ephemeralPoint(epk);
  if (
    key.asymmetricKeyType !== 'ec' ||
    key.type !== 'private' ||
    point.curve !== key.asymmetricKeyDetails?.namedCurve
  ) {
    throw new JweRefused('failed');
  }
  try {
    // The uncompressed point 04 || x || y; computeSecret refuses a point that is not on the curve.
    return agreementFor(key, point.curve).computeSecret(Buffer.concat([UNCOMPRESSED, point.x, point.y]));
  } catch {
    throw new JweRefused('failed');
  }
}

/**
 * True when the ephemeral point is on its curve: checked in process before a point is sent to a
 * decrypter that holds the key elsewhere (an invalid-curve point must never reach it).
 */
export function onCurve(point: EphemeralPoint): boolean {
  try {
    // convertKey decodes the point, which OpenSSL refuses when it is not on the curve.
    ECDH.convertKey(Buffer.concat([UNCOMPRESSED, point.x, point.y]), point.curve);
    return true;
  } catch {
    return false;
  }
}

/**
 * Concat KDF (NIST SP 800-56A 5.8.1, RFC 7518 4.6.2) with SHA-256: rounds of counter || Z ||
 * AlgorithmID || PartyUInfo || PartyVInfo || SuppPubInfo (keydatalen), cut to `bits`.
 */
function concatKdf(shared: Buffer, algorithmId: string, apu: Buffer, apv: Buffer, bits: number): Buffer {
  const otherInfo = Buffer.concat([
    lengthPrefixed(Buffer.from(algorithmId, 'ascii')),
    lengthPrefixed(apu),
    lengthPrefixed(apv),
    Uint32(bits),
  ]);
  const rounds = Math.ceil(bits / 256);
  const out: Buffer[] = [];
  for (let counter = 1; counter <= rounds; counter += 1) {
    out.push(createHash('sha256').update(Uint32(counter)).update(shared).update(otherInfo).digest());
  }
  return Buffer.concat(out).subarray(0, bits / 8);
}

const UNCOMPRESSED = Buffer.from([4]);
/** One key-agreement object per private key: it takes the ephemeral key as a raw point, cheaper than a JWK import per token. */
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
