/**
 * The provider's own ID-token signing keys from its options, so a restart keeps every `kid`:
 * `signingKey` (the RS256 key) and `signingKeys` (a private JWKS, one key per algorithm, each
 * with its `alg`). Each is text (PEM, or JWK / JWKS JSON), an object, or `{ file }` holding either.
 * A mistake never echoes the key.
 */
import { createPrivateKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isRecord } from '../encoding.js';
import { importRsaPrivateKey } from '../keys.js';
import { ID_TOKEN_SIGNING_ALGS, type IdTokenSigningAlg } from './crypto.js';
import { parsedIfJson } from './key-text.js';

/** One private key per algorithm, as given; the others are generated at start-up. */
export type SigningKeyMap = Partial<Record<IdTokenSigningAlg, KeyObject>>;

/** The key type and curve each algorithm signs with. */
const KEY_TYPE_OF: Readonly<Record<IdTokenSigningAlg, { kty: string; crv?: string; node: string }>> = {
  RS256: { kty: 'RSA', node: 'rsa' },
  PS256: { kty: 'RSA', node: 'rsa' },
  ES256: { kty: 'EC', crv: 'P-256', node: 'ec' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', node: 'ed25519' },
};

/** Smallest RSA signing key accepted. */
const MIN_RSA_BITS = 2048;

/** The option's value, or the text of its `{ file }`; undefined (with a mistake) when unreadable. */
function contentOf(value: unknown, name: string, what: string, mistakes: string[]): unknown {
  if (!isRecord(value) || 'kty' in value || 'keys' in value) return value;
  const file = value['file'];
  if (typeof file !== 'string' || file === '') {
    mistakes.push(`${name} must be ${what}, or { file: "path" } to read one`);
    return undefined;
  }
  try {
    return readFileSync(file, 'utf8');
  } catch {
    mistakes.push(`${name} file "${file}" cannot be read`);
    return undefined;
  }
}

/** A private JWK as the key `alg` signs with. */
function importPrivateJwk(jwk: Record<string, unknown>, alg: IdTokenSigningAlg, what: string): KeyObject {
  const want = KEY_TYPE_OF[alg];
  if (jwk['kty'] !== want.kty || (want.crv !== undefined && jwk['crv'] !== want.crv)) {
    throw new TypeError(`${what} must be a ${want.kty}${want.crv ? ` ${want.crv}` : ''} key for ${alg}`);
  }
  if (typeof jwk['d'] !== 'string') throw new TypeError(`${what} is a public JWK; give the private one (with "d")`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch {
    throw new TypeError(`${what} is not a readable private JWK`);
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (key.asymmetricKeyType === 'rsa' && (bits ?? 0) < MIN_RSA_BITS)
    throw new TypeError(`${what} must be an RSA key of at least ${MIN_RSA_BITS} bits; got ${bits ?? 0} bits`);
  return key;
}

/** `signingKey`: the RS256 key, as PEM or JWK (text or object), or `{ file }` holding either. */
export function checkSigningKey(value: unknown, mistakes: string[]): KeyObject | undefined {
  if (value === undefined) return undefined;
  const what = 'an RSA private key (PEM text, or a JWK as JSON text or an object)';
  const given = parsedIfJson(contentOf(value, 'signingKey', what, mistakes), 'signingKey', mistakes);
  if (given === undefined) return undefined;
  try {
    if (isRecord(given)) return importPrivateJwk(given, 'RS256', 'signingKey');
    return importRsaPrivateKey(given as string, 'signingKey');
  } catch (err) {
    mistakes.push(err instanceof Error ? err.message : 'signingKey is not a usable RSA private key');
    return undefined;
  }
}

/** `signingKeys`: a private JWKS (object, JSON text or `{ file }`), each key with an `alg` the provider signs with, one per `alg`. */
export function checkSigningKeys(value: unknown, mistakes: string[]): SigningKeyMap {
  const keys: SigningKeyMap = {};
  if (value === undefined) return keys;
  const what = 'a private JWKS { "keys": [...] } (an object, or its JSON text)';
  const given = parsedIfJson(contentOf(value, 'signingKeys', what, mistakes), 'signingKeys', mistakes);
  if (given === undefined) return keys;
  const list = isRecord(given) ? given['keys'] : undefined;
  if (!Array.isArray(list)) {
    mistakes.push(`signingKeys must be ${what}`);
    return keys;
  }
  list.forEach((jwk: unknown, i) => {
    const what = `signingKeys.keys[${i}]`;
    const alg = isRecord(jwk) ? jwk['alg'] : undefined;
    if (!isRecord(jwk) || !ID_TOKEN_SIGNING_ALGS.includes(alg as IdTokenSigningAlg)) {
      mistakes.push(`${what} must be a private JWK with "alg" one of ${ID_TOKEN_SIGNING_ALGS.join(', ')}`);
    } else if (keys[alg as IdTokenSigningAlg] !== undefined) {
      mistakes.push(`${what}: a second ${String(alg)} key; give one key per algorithm`);
    } else {
      try {
        keys[alg as IdTokenSigningAlg] = importPrivateJwk(jwk, alg as IdTokenSigningAlg, what);
      } catch (err) {
        mistakes.push(err instanceof Error ? err.message : `${what} is not a usable key`);
      }
    }
  });
  return keys;
}

/** Both options together: `signingKey` is the RS256 key, so `signingKeys` must not hold one too. */
export function checkSigningKeyOptions(raw: Record<string, unknown>, mistakes: string[]): SigningKeyMap {
  const rs256 = checkSigningKey(raw['signingKey'], mistakes);
  const keys = checkSigningKeys(raw['signingKeys'], mistakes);
  if (rs256 === undefined) return keys;
  if (keys.RS256 !== undefined) mistakes.push('signingKey and an RS256 key in signingKeys: give the RS256 key once');
  return { ...keys, RS256: rs256 };
}
