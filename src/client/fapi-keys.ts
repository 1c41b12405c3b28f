/**
 * The app's FAPI 2.0 keys: assertion signing (`sig`) and ID-token decryption (`enc`), imported once
 * at construction; each mistake is a TypeError saying what to give. Only public members leave this
 * file ({@link publicJwk}).
 */
import { createPrivateKey, createPublicKey, KeyObject, type JsonWebKey } from 'node:crypto';
import { MIN_RSA_BITS, rsaKeyProblem } from '../jose/rsa-key.js';
import { jwkThumbprint, PUBLIC_MEMBERS } from '../jose/thumbprint.js';
import { isJwkText, parseJwkText } from '../jose/jwk-text.js';
import {
  checkDecrypter,
  checkSigner,
  isDecrypterReference,
  isSignerReference,
  type JweDecrypter,
  type JwsSigner,
} from '../jose/key-reference.js';

export { jwkThumbprint } from '../jose/thumbprint.js';

/**
 * A key as the app may give it: PEM text (PKCS#8, PKCS#1, SEC1), a private JWK, that JWK's JSON text
 * (a string whose first non-space character is `{`), or a node `KeyObject`.
 */
export type AppKeyInput = string | AppPrivateJwk | KeyObject;

/** A private JSON Web Key (RFC 7517): `kty` `EC`, `RSA` or `OKP` with its private member `d`, and an optional `kid`. */
export interface AppPrivateJwk {
  kty: string;
  kid?: string;
  [member: string]: unknown;
}

/** The client-assertion signature algorithms accepted, by key type (FAPI 2.0 5.4: PS256, ES256, EdDSA). */
export type { AssertionAlgorithm } from '../jose/jws-sign.js';
import type { AssertionAlgorithm } from '../jose/jws-sign.js';

/** The ID-token key-management algorithms accepted, by key type. */
export type IdTokenKeyAlgorithm = 'ECDH-ES+A256KW' | 'RSA-OAEP-256';

/** An imported client-assertion signing key. */
export interface SigningKey {
  /** The private key, or the public key of a {@link JwsSigner} (which then signs). */
  readonly key: KeyObject;
  /** The signer holding the private key elsewhere (an HSM or a KMS), when given one. */
  readonly signer?: JwsSigner | undefined;
  readonly alg: AssertionAlgorithm;
  readonly kid: string;
  /** The public JWK published in the app's JWKS (`use: sig`). */
  readonly publicJwk: PublicJwk;
}

/** An imported ID-token decryption key. */
export interface IdTokenDecryptionKey {
  /** The private key, or the public key of a {@link JweDecrypter} (which then decrypts). */
  readonly key: KeyObject;
  /** The decrypter holding the private key elsewhere (an HSM or a KMS), when given one. */
  readonly remote?: JweDecrypter | undefined;
  readonly alg: IdTokenKeyAlgorithm;
  readonly kid: string;
  /** RFC 7638 thumbprint of its public part: a JWE header may name the key by it too. */
  readonly thumbprint: string;
  /** The public JWK published in the app's JWKS (`use: enc`). */
  readonly publicJwk: PublicJwk;
}

/** A public JWK with its `kid`, `use` and `alg`: nothing private. */
export interface PublicJwk {
  kty: string;
  kid: string;
  use: 'sig' | 'enc';
  alg: string;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
}

/**
 * Imports the client-assertion key (or keys, for rotation: the first signs, all are published).
 * @throws TypeError naming `what` and saying what to give.
 */
export function importSigningKeys(value: unknown, what: string): SigningKey[] {
  return importKeyList(
    value,
    what,
    'an EC P-256 private key (ES256), or an RSA (PS256) or Ed25519 (EdDSA) private key, or a signer',
    signingAlgorithm,
    'sig',
    signerReference,
  );
}

/** A signer given in place of a private key: its public key, algorithm and `kid`, checked. */
function signerReference(value: unknown, name: string) {
  if (!isSignerReference(value)) return undefined;
  const { signer, publicKey, kid } = checkSigner(value, name);
  return { key: publicKey, signer, alg: signer.alg, kid };
}

/** The in-process keys of a list (a `dpopKey`, which must stay in memory): no signer. */
export function importInMemorySigningKeys(value: unknown, what: string): SigningKey[] {
  return importKeyList(
    value,
    what,
    'an EC P-256 private key (ES256), or an RSA (PS256) or Ed25519 (EdDSA) private key',
    signingAlgorithm,
    'sig',
  );
}

/**
 * Imports the ID-token decryption key (or keys, for rotation: all decrypt, all are published).
 * @throws TypeError naming `what` and saying what to give.
 */
export function importIdTokenDecryptionKeys(value: unknown, what: string): IdTokenDecryptionKey[] {
  return importKeyList(
    value,
    what,
    'an EC private key (P-256, P-384 or P-521, for ECDH-ES+A256KW) or an RSA private key (RSA-OAEP-256), or a decrypter',
    decryptionAlgorithm,
    'enc',
    (key, name) => {
      if (!isDecrypterReference(key)) return undefined;
      const { decrypter, publicKey, kid } = checkDecrypter(key, name);
      return { key: publicKey, remote: decrypter, alg: decryptionAlgorithm(publicKey, name), kid };
    },
  );
}

/** Each private key of `value`, its algorithm (`algorithmOf` refuses a key of no allowed one) and its public JWK. */
function importKeyList<A extends string>(
  value: unknown,
  what: string,
  expected: string,
  algorithmOf: (key: KeyObject, name: string) => A,
  use: 'sig' | 'enc',
  reference?: (key: unknown, name: string) => { key: KeyObject; alg: A; kid: string | undefined } | undefined,
): { key: KeyObject; alg: A; kid: string; thumbprint: string; publicJwk: PublicJwk }[] {
  return importList(value, what, (key, name) => {
    const held = reference?.(key, name);
    if (held !== undefined) {
      const jwk = publicJwk(held.key, held.kid, use, held.alg);
      return { ...held, kid: jwk.kid, thumbprint: jwkThumbprint({ ...jwk }), publicJwk: jwk };
    }
    const imported = importPrivate(key, name, expected);
    const alg = algorithmOf(imported.key, name);
    const jwk = publicJwk(imported.key, imported.kid, use, alg);
    return { key: imported.key, alg, kid: jwk.kid, thumbprint: jwkThumbprint({ ...jwk }), publicJwk: jwk };
  });
}

function importList<T>(value: unknown, what: string, one: (key: unknown, name: string) => T): T[] {
  if (value === undefined || value === null || value === '') {
    throw new TypeError(
      `${what} is required in the fapi2 profile: give a private key as PEM, a JWK (an object or its JSON text) or a KeyObject (see docs/fapi2.md for the commands that make one)`,
    );
  }
  const list = Array.isArray(value) ? (value as unknown[]) : [value];
  if (list.length === 0)
    throw new TypeError(`${what} must be a private key, or a non-empty array of them (the first is current)`);
  const keys = list.map((key, i) => one(key, Array.isArray(value) ? `${what}[${i}]` : what));
  const kids = new Set<string>();
  for (const key of keys as unknown as { kid: string }[]) {
    if (kids.has(key.kid))
      throw new TypeError(`${what} lists two keys with the kid "${key.kid}"; give each key once, with its own kid`);
    kids.add(key.kid);
  }
  return keys;
}

function importPrivate(given: unknown, what: string, expected: string): { key: KeyObject; kid: string | undefined } {
  const value = isJwkText(given) ? parseJwkText(given, what) : given;
  if (value instanceof KeyObject) {
    if (value.type === 'secret') throw new TypeError(`${what} is a symmetric (secret) key; give ${expected}`);
    if (value.type === 'public') {
      throw new TypeError(
        `${what} is a public key; give the private key (its public part is what you register and publish)`,
      );
    }
    return { key: value, kid: undefined };
  }
  if (typeof value === 'string') {
    const text = value.trim().replace(/\\r\\n|\\n/g, '\n');
    const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(text)?.[1];
    if (label === undefined)
      throw new TypeError(
        `${what} must be a PEM private key (-----BEGIN PRIVATE KEY-----) or a JWK (an object or its JSON text); got text that is not PEM`,
      );
    if (label.includes('PUBLIC') || label === 'CERTIFICATE') {
      throw new TypeError(
        `${what} is a "${label}" PEM block; give the private key (-----BEGIN PRIVATE KEY-----): its public part is what you register and publish`,
      );
    }
    try {
      return { key: createPrivateKey({ key: `${text}\n`, format: 'pem' }), kid: undefined };
    } catch {
      throw new TypeError(
        `${what} is not a readable PEM private key (encrypted keys are not accepted); give ${expected}`,
      );
    }
  }
  if (typeof value === 'object' && value !== null) {
    const jwk = value as AppPrivateJwk;
    if (jwk.kty === 'oct') throw new TypeError(`${what} is a symmetric (oct) JWK; give ${expected}`);
    if (typeof jwk.d !== 'string') {
      throw new TypeError(
        `${what} is a JWK without its private member "d" (a public key); give the private JWK: its public part is what you register and publish`,
      );
    }
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
    } catch {
      throw new TypeError(`${what} is not a readable private JWK; give ${expected}`);
    }
    const kid = typeof jwk.kid === 'string' && jwk.kid !== '' ? jwk.kid : undefined;
    return { key, kid };
  }
  throw new TypeError(`${what} must be ${expected}, as PEM, a JWK (an object or its JSON text) or a KeyObject`);
}

function signingAlgorithm(key: KeyObject, what: string): AssertionAlgorithm {
  const type = key.asymmetricKeyType;
  if (type === 'ec') {
    if (key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
      throw new TypeError(
        `${what} is an EC key on ${key.asymmetricKeyDetails?.namedCurve ?? 'an unknown curve'}; ES256 needs P-256 (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256)`,
      );
    }
    return 'ES256';
  }
  if (type === 'rsa') {
    checkRsaBits(key, what);
    return 'PS256';
  }
  if (type === 'ed25519') return 'EdDSA';
  throw new TypeError(
    `${what} is a ${type ?? 'non-asymmetric'} key; client assertions are signed with EC P-256 (ES256), RSA (PS256) or Ed25519 (EdDSA)`,
  );
}

function decryptionAlgorithm(key: KeyObject, what: string): IdTokenKeyAlgorithm {
  const type = key.asymmetricKeyType;
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (curve !== 'prime256v1' && curve !== 'secp384r1' && curve !== 'secp521r1') {
      throw new TypeError(
        `${what} is an EC key on ${curve ?? 'an unknown curve'}; ECDH-ES+A256KW needs P-256, P-384 or P-521`,
      );
    }
    return 'ECDH-ES+A256KW';
  }
  if (type === 'rsa') {
    checkRsaBits(key, what);
    return 'RSA-OAEP-256';
  }
  throw new TypeError(
    `${what} is a ${type ?? 'non-asymmetric'} key; ID tokens are encrypted to an EC key (ECDH-ES+A256KW) or an RSA key (RSA-OAEP-256)`,
  );
}

function checkRsaBits(key: KeyObject, what: string): void {
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS)
    throw new TypeError(`${what} is an RSA key of ${bits} bits; give one of at least ${MIN_RSA_BITS} bits`);
  const problem = rsaKeyProblem(key);
  if (problem !== undefined) throw new TypeError(`${what} is an RSA key with ${problem}; give another key`);
}

/**
 * The public JWK of `key` with only the public members of its type, its `kid` (the given one,
 * else the RFC 7638 thumbprint), `use` and `alg`.
 */
export function publicJwk(key: KeyObject, kid: string | undefined, use: 'sig' | 'enc', alg: string): PublicJwk {
  const full = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }) as Record<
    string,
    unknown
  >;
  const kty = String(full.kty);
  const members = PUBLIC_MEMBERS[kty] ?? [];
  const out: Record<string, unknown> = { kty };
  for (const m of members) if (typeof full[m] === 'string') out[m] = full[m];
  out.kid = kid ?? jwkThumbprint(out as { kty: string });
  out.use = use;
  out.alg = alg;
  return out as unknown as PublicJwk;
}
