/**
 * RSA key handling with node:crypto only: PEM clean-up, PKCS#1 to PKCS#8, and import of the
 * keys this library works with.
 */
import { createECDH, createHash, createPrivateKey, createPublicKey, type ECDH, type KeyObject } from 'node:crypto';

/** Smallest RSA modulus accepted, in bits. */
export const MIN_RSA_BITS = 2048;

/**
 * Undo what environment variables and JSON do to PEM text: literal `\n` escapes become line
 * breaks, CRLF becomes LF, and surrounding quotes and blanks are trimmed.
 */
export function normalizePem(pem: string): string {
  let text = pem.trim();
  if ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"))) {
    text = text.slice(1, -1).trim();
  }
  return (
    text
      .replace(/\\r\\n|\\n/g, '\n')
      .replace(/\r\n/g, '\n')
      .trim() + '\n'
  );
}

function pemLabel(pem: string): string | undefined {
  return /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1];
}

function checkRsa(key: KeyObject, what: string): KeyObject {
  if (key.asymmetricKeyType !== 'rsa') {
    throw new TypeError(`${what} must be an RSA key; got a ${key.asymmetricKeyType ?? 'non-asymmetric'} key`);
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) {
    throw new TypeError(`${what} must be an RSA key of at least ${MIN_RSA_BITS} bits; got ${bits} bits`);
  }
  return key;
}

/**
 * Convert a PKCS#1 RSA private key (`-----BEGIN RSA PRIVATE KEY-----`) to PKCS#8
 * (`-----BEGIN PRIVATE KEY-----`).
 * @throws TypeError when the input is not a PKCS#1 RSA private key in PEM form.
 */
export function convertPkcs1ToPkcs8(pkcs1: string): string {
  if (typeof pkcs1 !== 'string') {
    throw new TypeError('convertPkcs1ToPkcs8: expected a PEM string beginning with -----BEGIN RSA PRIVATE KEY-----');
  }
  const pem = normalizePem(pkcs1);
  if (pemLabel(pem) !== 'RSA PRIVATE KEY') {
    throw new TypeError(
      'convertPkcs1ToPkcs8: expected a PKCS#1 RSA private key (-----BEGIN RSA PRIVATE KEY-----); ' +
        `got ${pemLabel(pem) ? `a "${pemLabel(pem)}" PEM block` : 'text that is not PEM'}`,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem', type: 'pkcs1' });
  } catch {
    throw new TypeError('convertPkcs1ToPkcs8: the PEM block is not a readable PKCS#1 RSA private key');
  }
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/**
 * Import an RSA private key (PKCS#1 or PKCS#8 PEM, `\n` escapes tolerated) of at least 2048 bits.
 * Import once and keep the KeyObject: never per request.
 * @throws TypeError naming `what` when the text is not such a key. The message never echoes the key.
 */
export function importRsaPrivateKey(pem: string, what = 'privateKey'): KeyObject {
  if (typeof pem !== 'string' || pem.trim() === '') {
    throw new TypeError(`${what} must be a PEM string (PKCS#1 or PKCS#8 RSA private key)`);
  }
  const text = normalizePem(pem);
  const label = pemLabel(text);
  if (label !== 'RSA PRIVATE KEY' && label !== 'PRIVATE KEY') {
    throw new TypeError(
      `${what} must be a PEM RSA private key (-----BEGIN RSA PRIVATE KEY----- or -----BEGIN PRIVATE KEY-----); ` +
        (label ? `got a "${label}" PEM block` : 'got text that is not PEM'),
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch {
    throw new TypeError(`${what} is not a readable ${label === 'PRIVATE KEY' ? 'PKCS#8' : 'PKCS#1'} private key`);
  }
  return checkRsa(key, what);
}

/**
 * Import an RSA public key of at least 2048 bits from PEM: SPKI (`PUBLIC KEY`) or PKCS#1
 * (`RSA PUBLIC KEY`), or a JWK object.
 * @throws TypeError naming `what` when it is not such a key.
 */
export function importRsaPublicKey(key: string | { kty?: unknown }, what = 'publicKey'): KeyObject {
  if (typeof key === 'object' && key !== null) {
    let obj: KeyObject;
    try {
      obj = createPublicKey({ key: key as import('node:crypto').JsonWebKey, format: 'jwk' });
    } catch {
      throw new TypeError(`${what} is not a readable RSA public JWK`);
    }
    return checkRsa(obj, what);
  }
  if (typeof key !== 'string' || key.trim() === '') {
    throw new TypeError(`${what} must be a PEM public key (-----BEGIN PUBLIC KEY-----) or an RSA JWK`);
  }
  const text = normalizePem(key);
  const label = pemLabel(text);
  if (label !== 'PUBLIC KEY' && label !== 'RSA PUBLIC KEY') {
    throw new TypeError(
      `${what} must be a PEM RSA public key (-----BEGIN PUBLIC KEY----- or -----BEGIN RSA PUBLIC KEY-----); ` +
        (label ? `got a "${label}" PEM block` : 'got text that is not PEM'),
    );
  }
  let obj: KeyObject;
  try {
    obj = createPublicKey({ key: text, format: 'pem' });
  } catch {
    throw new TypeError(`${what} is not a readable ${label} PEM block`);
  }
  return checkRsa(obj, what);
}

/** An RSA private key as a JSON Web Key (RFC 7517): `kty: "RSA"` with `n`, `e`, `d`, … and an optional `kid`. */
export interface RsaPrivateJwk {
  kty: string;
  kid?: string;
  [member: string]: unknown;
}

/** An imported decryption key, with the ids a JWE header may name it by. */
export interface DecryptionKey {
  key: KeyObject;
  /** The JWK's `kid`, when the key was given as a JWK with one. */
  kid: string | undefined;
  /** RFC 7638 SHA-256 thumbprint of the public part (base64url). */
  thumbprint: string;
}

/**
 * Import one private key given as PEM (PKCS#1 or PKCS#8) or as an RSA private JWK object.
 * @throws TypeError naming `what` when it is not such a key of at least 2048 bits. Never echoes the key.
 */
export function importRsaPrivateKeyOrJwk(key: string | RsaPrivateJwk, what = 'privateKey'): DecryptionKey {
  if (typeof key === 'object' && key !== null) {
    if (typeof key.d !== 'string')
      throw new TypeError(`${what} must be an RSA private JWK (with "d"); got a JWK without a private part`);
    let obj: KeyObject;
    try {
      obj = createPrivateKey({ key: key as import('node:crypto').JsonWebKey, format: 'jwk' });
    } catch {
      throw new TypeError(`${what} is not a readable RSA private JWK`);
    }
    checkRsa(obj, what);
    return {
      key: obj,
      kid: typeof key.kid === 'string' && key.kid !== '' ? key.kid : undefined,
      thumbprint: rsaThumbprint(obj),
    };
  }
  const obj = importRsaPrivateKey(key, what);
  return { key: obj, kid: undefined, thumbprint: rsaThumbprint(obj) };
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url) of an RSA key's public part. */
export function rsaThumbprint(key: KeyObject): string {
  const jwk = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }) as {
    e: string;
    n: string;
  };
  // Required members only, in lexicographic order, no whitespace (RFC 7638 section 3.2).
  const canonical = `{"e":"${jwk.e}","kty":"RSA","n":"${jwk.n}"}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/** The members of an EC JWK that node:crypto writes. */
export interface EcJwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  d?: string;
}

/** The OpenSSL name of each curve, and the bytes of one coordinate (RFC 7518 6.2.1.2: exactly this length). */
const EC_CURVES: Readonly<Record<'P-256' | 'P-384' | 'P-521', { name: string; bytes: number }>> = {
  'P-256': { name: 'prime256v1', bytes: 32 },
  'P-384': { name: 'secp384r1', bytes: 48 },
  'P-521': { name: 'secp521r1', bytes: 66 },
};

const ecGenerators = new Map<string, ECDH>();

/**
 * A new EC key pair as private and public JWKs (`kty`, `x`, `y`, `crv`, and `d` in the private
 * one), made by node:crypto's `createECDH`: the raw scalar and point, no key object at all.
 * Two reasons. A key object made by `generateKeyPairSync` must never be exported: on Node 20 a
 * garbage collection during that export can deadlock the process (the key-generation job's
 * cleanup waits for the lock the export holds); and asking `generateKeyPairSync` to write JWKs
 * instead costs about three times what `createECDH` does (figures in docs/internals.md).
 * `d` is left-padded to the curve's size (RFC 7518 6.2.2.1), which `getPrivateKey` does not do.
 */
export function generateEcJwkPair(namedCurve: 'P-256' | 'P-384' | 'P-521'): { privateJwk: EcJwk; publicJwk: EcJwk } {
  const curve = EC_CURVES[namedCurve];
  // One generator per curve: each generateKeys() replaces its key pair with a new one, and
  // setting up the curve costs as much as the generation itself (one per login start). It holds
  // the last pair until the next call, as the login's session and key object hold it anyway.
  let ecdh = ecGenerators.get(namedCurve);
  if (ecdh === undefined) ecGenerators.set(namedCurve, (ecdh = createECDH(curve.name)));
  // The uncompressed point: 04 || x || y, each coordinate at its full size.
  const point = ecdh.generateKeys();
  const scalar = ecdh.getPrivateKey();
  const x = point.subarray(1, 1 + curve.bytes).toString('base64url');
  const y = point.subarray(1 + curve.bytes).toString('base64url');
  const padded =
    scalar.length === curve.bytes ? scalar : Buffer.concat([Buffer.alloc(curve.bytes - scalar.length), scalar]);
  const d = padded.toString('base64url');
  padded.fill(0);
  scalar.fill(0);
  return { privateJwk: { kty: 'EC', x, y, crv: namedCurve, d }, publicJwk: { kty: 'EC', x, y, crv: namedCurve } };
}
