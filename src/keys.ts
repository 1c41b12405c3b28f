/**
 * RSA key handling with node:crypto only: PEM clean-up, PKCS#1 to PKCS#8, and import of the
 * keys this library works with.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { rsaKeyProblem } from './jose/rsa-key.js';
import { rsaThumbprint } from './jose/thumbprint.js';
import type { JweDecrypter } from './jose/key-reference.js';
import { isJwkText, parseJwkText } from './jose/jwk-text.js';

export { MIN_RSA_BITS } from './jose/rsa-key.js';
export { rsaThumbprint } from './jose/thumbprint.js';
export { generateEcJwkPair, type EcJwk } from './jose/ec-keygen.js';

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
  const problem = rsaKeyProblem(key);
  if (problem !== undefined)
    throw new TypeError(`${what} must be a sound RSA key of at least 2048 bits; got ${problem}`);
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
  /** The private key, or the public key of a decrypter (`remote`), which then decrypts. */
  key: KeyObject;
  /** The decrypter holding the private key elsewhere (an HSM or a KMS), when given one. */
  remote?: JweDecrypter | undefined;
  /** The JWK's `kid`, when the key was given as a JWK with one. */
  kid: string | undefined;
  /** RFC 7638 SHA-256 thumbprint of the public part (base64url). */
  thumbprint: string;
}

/**
 * Import one private key given as PEM (PKCS#1 or PKCS#8), as an RSA private JWK object, or as
 * that JWK's JSON text (a string whose first non-space character is `{`).
 * @throws TypeError naming `what` when it is not such a key of at least 2048 bits. Never echoes the key.
 */
export function importRsaPrivateKeyOrJwk(given: string | RsaPrivateJwk, what = 'privateKey'): DecryptionKey {
  const key = isJwkText(given) ? (parseJwkText(given, what) as RsaPrivateJwk) : given;
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
