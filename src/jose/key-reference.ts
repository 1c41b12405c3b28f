/**
 * Keys by reference: a signer or a decrypter whose private key stays in an HSM or a KMS. The app
 * gives an object that signs (`sign`) or unwraps (`unwrap`, RSA-OAEP) or agrees (`deriveSharedSecret`,
 * ECDH) and says its public key; everything else (the JWS encoding, the Concat KDF, the AES key
 * unwrap, the content decryption) stays here. Each object is checked once, at construction
 * ({@link checkSigner}, {@link checkDecrypter}); a TypeError names what is missing.
 */
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import type { AssertionAlgorithm } from './jws-sign.js';
import { MIN_RSA_BITS, rsaKeyProblem } from './rsa-key.js';

/** The public members of a JWK, as a key reference states its public key. */
export interface ReferencePublicJwk {
  kty: string;
  kid?: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  [member: string]: unknown;
}

/**
 * A signing key held elsewhere: its JWS algorithm, its public JWK (with the `kid` the app
 * registered) and a function that signs the JWS signing input (ASCII `header.payload`) and
 * resolves to the JOSE signature: for ES256 the raw `r || s` (64 bytes, not DER), for PS256 the
 * RSASSA-PSS signature (SHA-256, MGF1 SHA-256, 32-byte salt), for EdDSA the Ed25519 signature.
 */
export interface JwsSigner {
  readonly alg: AssertionAlgorithm;
  readonly publicJwk: ReferencePublicJwk;
  sign(signingInput: Uint8Array): Promise<Uint8Array>;
}

/** The ephemeral public key of an ECDH-ES JWE (its `epk`), checked: on the decrypter's curve. */
export interface EphemeralPublicJwk {
  kty: 'EC';
  crv: 'P-256' | 'P-384' | 'P-521';
  x: string;
  y: string;
}

/**
 * A decryption key held elsewhere: its public JWK (an RSA key, or an EC key on P-256, P-384 or
 * P-521), and for RSA `unwrap`, the RSAES-OAEP decryption of a JWE's encrypted key (`alg` is
 * `RSA-OAEP-256`: SHA-256 and MGF1 SHA-256, or `RSA-OAEP`: SHA-1, for a userinfo block key), for
 * EC `deriveSharedSecret`, the raw ECDH shared secret (the x coordinate) with the JWE's `epk`.
 */
export interface JweDecrypter {
  /** The `kid` a JWE header names it by; default the public JWK's `kid`, else its RFC 7638 thumbprint. */
  readonly kid?: string;
  readonly publicJwk: ReferencePublicJwk;
  unwrap?(alg: string, encryptedKey: Uint8Array): Promise<Uint8Array>;
  deriveSharedSecret?(epk: EphemeralPublicJwk): Promise<Uint8Array>;
}

/** A checked signer, with its public key imported. */
export interface CheckedSigner {
  readonly signer: JwsSigner;
  readonly publicKey: KeyObject;
  readonly kid: string;
}

/** A checked decrypter, with its public key imported. */
export interface CheckedDecrypter {
  readonly decrypter: JweDecrypter;
  readonly publicKey: KeyObject;
  readonly kid: string | undefined;
}

/** True for an object given as a signer: it has a `sign` function or states a `publicJwk`. */
export function isSignerReference(value: unknown): boolean {
  return isObject(value) && (typeof value.sign === 'function' || 'publicJwk' in value);
}

/** True for an object given as a decrypter: it has `unwrap` or `deriveSharedSecret`, or states a `publicJwk`. */
export function isDecrypterReference(value: unknown): boolean {
  return (
    isObject(value) &&
    (typeof value.unwrap === 'function' || typeof value.deriveSharedSecret === 'function' || 'publicJwk' in value)
  );
}

const SIGNER_ALGORITHMS: readonly AssertionAlgorithm[] = ['ES256', 'PS256', 'EdDSA'];
const SIGNER_SHAPE = '{ alg, publicJwk (with kid), sign(signingInput) => Promise<signature> }';

/**
 * The signer, checked: an `alg` among ES256, PS256 and EdDSA, a public JWK of the key type that
 * algorithm takes (with a `kid`, no private member), and a `sign` function.
 * @throws TypeError naming `what` and the member missing or wrong.
 */
export function checkSigner(value: unknown, what: string): CheckedSigner {
  const signer = value as Partial<JwsSigner> & Record<string, unknown>;
  if (typeof signer.sign !== 'function')
    throw new TypeError(`${what} is a signer without a sign function; give ${SIGNER_SHAPE}`);
  if (typeof signer.alg !== 'string' || !SIGNER_ALGORITHMS.includes(signer.alg))
    throw new TypeError(`${what}.alg must be one of ${SIGNER_ALGORITHMS.join(', ')}; give ${SIGNER_SHAPE}`);
  const publicKey = importReferenceJwk(signer.publicJwk, `${what}.publicJwk`);
  const kid = (signer.publicJwk as ReferencePublicJwk).kid;
  if (typeof kid !== 'string' || kid === '')
    throw new TypeError(`${what}.publicJwk has no kid; give the kid the key is registered under`);
  const fits =
    signer.alg === 'ES256'
      ? publicKey.asymmetricKeyType === 'ec' && publicKey.asymmetricKeyDetails?.namedCurve === 'prime256v1'
      : signer.alg === 'PS256'
        ? publicKey.asymmetricKeyType === 'rsa'
        : publicKey.asymmetricKeyType === 'ed25519';
  if (!fits)
    throw new TypeError(
      `${what}.publicJwk is not a key for ${signer.alg} (ES256: EC P-256, PS256: RSA, EdDSA: Ed25519)`,
    );
  checkRsaPublic(publicKey, `${what}.publicJwk`);
  return { signer: signer as JwsSigner, publicKey, kid };
}

/**
 * The decrypter, checked: a public JWK (RSA of at least 2048 bits, or EC on P-256, P-384 or P-521,
 * no private member), with `unwrap` for an RSA key or `deriveSharedSecret` for an EC key.
 * @param rsaOnly the userinfo block key, which only an RSA key opens.
 * @throws TypeError naming `what` and the member missing or wrong.
 */
export function checkDecrypter(value: unknown, what: string, rsaOnly = false): CheckedDecrypter {
  const decrypter = value as Partial<JweDecrypter> & Record<string, unknown>;
  const publicKey = importReferenceJwk(decrypter.publicJwk, `${what}.publicJwk`);
  const type = publicKey.asymmetricKeyType;
  if (type === 'rsa') {
    if (typeof decrypter.unwrap !== 'function')
      throw new TypeError(
        `${what} states an RSA key but has no unwrap function; give { publicJwk, unwrap(alg, encryptedKey) => Promise<contentKey> }`,
      );
    checkRsaPublic(publicKey, `${what}.publicJwk`);
  } else if (type === 'ec' && !rsaOnly) {
    const curve = publicKey.asymmetricKeyDetails?.namedCurve;
    if (curve !== 'prime256v1' && curve !== 'secp384r1' && curve !== 'secp521r1')
      throw new TypeError(
        `${what}.publicJwk is an EC key on ${curve ?? 'an unknown curve'}; give P-256, P-384 or P-521`,
      );
    if (typeof decrypter.deriveSharedSecret !== 'function')
      throw new TypeError(
        `${what} states an EC key but has no deriveSharedSecret function; give { publicJwk, deriveSharedSecret(epk) => Promise<sharedSecret> }`,
      );
  } else {
    throw new TypeError(
      `${what}.publicJwk must be ${rsaOnly ? 'an RSA key (RSA-OAEP)' : 'an RSA key (RSA-OAEP-256) or an EC key (ECDH-ES)'}; got a ${type ?? 'non-asymmetric'} key`,
    );
  }
  const kid = decrypter.kid ?? (decrypter.publicJwk as ReferencePublicJwk).kid;
  if (kid !== undefined && (typeof kid !== 'string' || kid === ''))
    throw new TypeError(`${what}.kid must be a non-empty string, or left out`);
  return { decrypter: decrypter as JweDecrypter, publicKey, kid };
}

function importReferenceJwk(jwk: unknown, what: string): KeyObject {
  if (!isObject(jwk) || typeof jwk.kty !== 'string')
    throw new TypeError(`${what} is required: the public JWK of the key (kty and its public members)`);
  if (jwk.d !== undefined || jwk.k !== undefined || jwk.p !== undefined)
    throw new TypeError(`${what} holds a private member; give the public JWK only (the private key stays where it is)`);
  try {
    return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new TypeError(`${what} is not a readable public JWK`);
  }
}

function checkRsaPublic(key: KeyObject, what: string): void {
  if (key.asymmetricKeyType !== 'rsa') return;
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS)
    throw new TypeError(`${what} is an RSA key of ${bits} bits; give one of at least ${MIN_RSA_BITS} bits`);
  const problem = rsaKeyProblem(key);
  if (problem !== undefined) throw new TypeError(`${what} is an RSA key with ${problem}; give another key`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
