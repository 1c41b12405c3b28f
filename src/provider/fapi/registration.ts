/**
 * The FAPI 2.0 part of a client registration, checked at start-up: its public keys and ID-token
 * encryption. Names are camelCase like the rest of the registration (`jwksUri`,
 * `idTokenEncryptedResponseAlg` for RFC 7591's `jwks_uri`, ...); snake_case is refused with the
 * camelCase name.
 */
import { createPublicKey, type JsonWebKey as NodeJwk, type webcrypto } from 'node:crypto';
import { isRecord } from '../../encoding.js';
import { isLoopbackHost } from '../../loopback.js';
import type { IdTokenSigningAlg } from '../crypto.js';

/** The JWE key-management algorithms an ID token of a FAPI client can be encrypted with. */
export const ID_TOKEN_ENCRYPTION_ALGS = [
  'ECDH-ES',
  'ECDH-ES+A128KW',
  'ECDH-ES+A192KW',
  'ECDH-ES+A256KW',
  'RSA-OAEP-256',
] as const;
/** The JWE content encryptions of an ID token of a FAPI client. */
export const ID_TOKEN_ENCRYPTION_ENCS = [
  'A128GCM',
  'A192GCM',
  'A256GCM',
  'A128CBC-HS256',
  'A192CBC-HS384',
  'A256CBC-HS512',
] as const;
/** The JWE content encryption of a FAPI client's ID token when its registration names none. */
export const DEFAULT_ID_TOKEN_ENCRYPTION_ENC = 'A256GCM';
/** ID-token signature algorithms a FAPI client may register: FAPI 2.0 section 5.4.1's three, and the spec's RS256. */
export const FAPI_ID_TOKEN_SIGNING_ALGS = ['PS256', 'ES256', 'EdDSA', 'RS256'] as const;
/** The ID-token signature of a FAPI client whose registration names none: PS256, one of FAPI 2.0 section 5.4.1's. */
export const DEFAULT_FAPI_ID_TOKEN_SIGNING_ALG: IdTokenSigningAlg = 'PS256';
/** The JWS algorithms accepted for client assertions and DPoP proofs (never `none`, never HS*). */
export const FAPI_SIGNING_ALGS = ['ES256', 'PS256', 'EdDSA'] as const;

/** An `alg` header value as a refusal may name it: a short algorithm name, or a placeholder for anything else sent. */
export function algName(alg: unknown): string {
  return typeof alg === 'string' && /^[A-Za-z0-9+_-]{1,16}$/.test(alg) ? alg : '(not an algorithm name)';
}

/** A JWE key-management algorithm of an ID token. */
export type IdTokenEncryptionAlg = (typeof ID_TOKEN_ENCRYPTION_ALGS)[number];
/** A JWE content encryption of an ID token. */
export type IdTokenEncryptionEnc = (typeof ID_TOKEN_ENCRYPTION_ENCS)[number];

/** One public JWK of a client, as registered or fetched. */
export type PublicJwk = webcrypto.JsonWebKey & { kid?: string; use?: string; alg?: string };

/** The FAPI 2.0 registration of a client, validated. */
export interface FapiRegistration {
  /** The inline public JWKS, when registered that way. */
  jwks?: readonly PublicJwk[];
  /** The hosted JWKS, when registered that way. */
  jwksUri?: string;
  /** How its ID tokens are signed. */
  idTokenSigningAlg: IdTokenSigningAlg;
  /** How its ID tokens are encrypted. */
  idTokenEncryption: { alg: IdTokenEncryptionAlg; enc: IdTokenEncryptionEnc };
}

/** The algorithm a client's ID tokens are signed with: its registered one, RS256 for a base client (spec 2.1). */
export function idTokenAlgOf(client: { fapi?: FapiRegistration | undefined }): IdTokenSigningAlg {
  return client.fapi?.idTokenSigningAlg ?? 'RS256';
}

/** The registration keys of a FAPI client, beside the base ones. */
export const FAPI_CLIENT_KEYS = [
  'profile',
  'jwks',
  'jwksUri',
  'idTokenSignedResponseAlg',
  'idTokenEncryptedResponseAlg',
  'idTokenEncryptedResponseEnc',
] as const;

const SNAKE_CASE: Readonly<Record<string, string>> = {
  jwks_uri: 'jwksUri',
  id_token_signed_response_alg: 'idTokenSignedResponseAlg',
  id_token_encrypted_response_alg: 'idTokenEncryptedResponseAlg',
  id_token_encrypted_response_enc: 'idTokenEncryptedResponseEnc',
  client_id: 'clientId',
  redirect_uris: 'redirectUris',
};

/** The camelCase registration key of a snake_case one, when there is one. */
export function camelCaseOf(key: string): string | undefined {
  return SNAKE_CASE[key];
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k', 'oth'];

/**
 * True for a JWK usable to encrypt with `alg` (by key type and curve): RSA for RSA-OAEP-256; EC
 * P-256, P-384, P-521 or OKP X25519 for the ECDH-ES family.
 */
export function fitsEncryptionAlg(jwk: PublicJwk, alg: IdTokenEncryptionAlg): boolean {
  if (jwk.use !== undefined && jwk.use !== 'enc') return false;
  if (jwk.alg !== undefined && jwk.alg !== alg) return false;
  if (alg === 'RSA-OAEP-256') return jwk.kty === 'RSA';
  return (
    (jwk.kty === 'EC' && ['P-256', 'P-384', 'P-521'].includes(jwk.crv ?? '')) ||
    (jwk.kty === 'OKP' && jwk.crv === 'X25519')
  );
}

/** The kind of key `alg` encrypts to, for a sentence that says what to publish. */
export function encryptionKeyKind(alg: string | undefined): string {
  return alg === 'RSA-OAEP-256' ? 'an RSA' : 'an EC P-256 (or P-384, P-521, OKP X25519)';
}

/** True for a JWK usable to verify a signature (assertion): not marked `enc`. */
export function isSigningJwk(jwk: PublicJwk): boolean {
  return jwk.use === undefined || jwk.use === 'sig';
}

/**
 * Checks a JWKS (`{ keys: [...] }`) of public keys: each key importable, no private member, a
 * `kid` on each (so a signature names its key). Adds one mistake per problem; returns the keys.
 */
export function checkPublicJwks(value: unknown, where: string, mistakes: string[]): PublicJwk[] {
  if (!isRecord(value) || !Array.isArray(value['keys']) || value['keys'].length === 0) {
    mistakes.push(`${where} must be a JWKS: { "keys": [ ...public JWKs... ] } with at least one key`);
    return [];
  }
  const keys: PublicJwk[] = [];
  const kids = new Set<string>();
  (value['keys'] as unknown[]).forEach((raw, i) => {
    const at = `${where}.keys[${i}]`;
    if (!isRecord(raw)) {
      mistakes.push(`${at} must be a JWK object`);
      return;
    }
    const privateMember = PRIVATE_MEMBERS.find((m) => m in raw);
    if (privateMember !== undefined) {
      mistakes.push(
        `${at} holds the private member "${privateMember}": register only the public key (remove d, p, q, dp, dq, qi, k)`,
      );
      return;
    }
    const kid = raw['kid'];
    if (typeof kid !== 'string' || !/^[\x21-\x7e]{1,128}$/.test(kid)) {
      mistakes.push(
        `${at}.kid is required: 1 to 128 visible ASCII characters (the kid your assertions and encryption name)`,
      );
      return;
    }
    if (kids.has(kid)) {
      mistakes.push(`${at} repeats the kid "${kid}"; each key needs its own`);
      return;
    }
    if (raw['use'] !== undefined && raw['use'] !== 'sig' && raw['use'] !== 'enc') {
      mistakes.push(`${at}.use must be "sig" or "enc" when given`);
      return;
    }
    try {
      createPublicKey({ key: raw as NodeJwk, format: 'jwk' });
    } catch {
      mistakes.push(`${at} is not a usable public key (kty EC with crv P-256, RSA, or OKP Ed25519 / X25519)`);
      return;
    }
    kids.add(kid);
    keys.push(raw as PublicJwk);
  });
  return keys;
}

/** Checks the jwksUri: https, or http on a loopback host. */
function checkJwksUri(value: unknown, where: string, mistakes: string[]): string | undefined {
  if (typeof value !== 'string' || value.length > 2048) {
    mistakes.push(`${where} must be the URL of the client's hosted JWKS (at most 2048 characters)`);
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    mistakes.push(`${where} "${value}" is not an absolute URL`);
    return undefined;
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    mistakes.push(`${where} "${value}" must use https (or http on a loopback host)`);
    return undefined;
  }
  if (url.username !== '' || url.hash !== '') {
    mistakes.push(`${where} must not hold credentials or a fragment`);
    return undefined;
  }
  return url.toString();
}

/**
 * The FAPI registration of one client (`raw`), or undefined for a base client. Adds one mistake
 * per problem, naming the field.
 */
export function checkFapiRegistration(
  raw: Record<string, unknown>,
  where: string,
  mistakes: string[],
): FapiRegistration | 'base' | undefined {
  const profile = raw['profile'];
  if (profile === undefined || profile === 'base') {
    for (const key of [
      'jwks',
      'jwksUri',
      'idTokenSignedResponseAlg',
      'idTokenEncryptedResponseAlg',
      'idTokenEncryptedResponseEnc',
    ]) {
      if (raw[key] !== undefined)
        mistakes.push(`${where}.${key} is for a FAPI 2.0 client: add "profile": "fapi2", or remove it`);
    }
    return 'base';
  }
  if (profile !== 'fapi2') {
    mistakes.push(
      `${where}.profile must be "fapi2" (FAPI 2.0 Security Profile) or left out (the service as the spec describes it)`,
    );
    return undefined;
  }
  const before = mistakes.length;
  if (raw['clientSecret'] !== undefined) {
    mistakes.push(
      `${where}.clientSecret must be left out: a fapi2 client authenticates with private_key_jwt, never a secret`,
    );
  }
  const { jwks, jwksUri } = raw;
  if ((jwks === undefined) === (jwksUri === undefined)) {
    mistakes.push(
      `${where} (fapi2) needs exactly one of jwks (the public JWKS inline) and jwksUri (the URL of the hosted JWKS)`,
    );
  }
  const alg = raw['idTokenEncryptedResponseAlg'];
  if (!ID_TOKEN_ENCRYPTION_ALGS.includes(alg as IdTokenEncryptionAlg)) {
    mistakes.push(
      `${where}.idTokenEncryptedResponseAlg must be one of ${ID_TOKEN_ENCRYPTION_ALGS.join(', ')} (how its ID tokens are encrypted)`,
    );
  }
  const enc = raw['idTokenEncryptedResponseEnc'] ?? DEFAULT_ID_TOKEN_ENCRYPTION_ENC;
  if (!ID_TOKEN_ENCRYPTION_ENCS.includes(enc as IdTokenEncryptionEnc)) {
    mistakes.push(
      `${where}.idTokenEncryptedResponseEnc must be one of ${ID_TOKEN_ENCRYPTION_ENCS.join(', ')}, or left out (${DEFAULT_ID_TOKEN_ENCRYPTION_ENC})`,
    );
  }
  const signing = raw['idTokenSignedResponseAlg'] ?? DEFAULT_FAPI_ID_TOKEN_SIGNING_ALG;
  if (!FAPI_ID_TOKEN_SIGNING_ALGS.includes(signing as (typeof FAPI_ID_TOKEN_SIGNING_ALGS)[number])) {
    mistakes.push(
      `${where}.idTokenSignedResponseAlg must be one of ${FAPI_ID_TOKEN_SIGNING_ALGS.join(', ')}, or left out (${DEFAULT_FAPI_ID_TOKEN_SIGNING_ALG}): FAPI 2.0 section 5.4.1 allows PS256, ES256 and EdDSA (Ed25519)`,
    );
  }
  const keys = jwks !== undefined ? checkPublicJwks(jwks, `${where}.jwks`, mistakes) : undefined;
  const uri = jwksUri !== undefined ? checkJwksUri(jwksUri, `${where}.jwksUri`, mistakes) : undefined;
  if (keys !== undefined && mistakes.length === before) {
    if (!keys.some(isSigningJwk))
      mistakes.push(`${where}.jwks has no signing key (use "sig", or no use): private_key_jwt needs one`);
    if (!keys.some((k) => fitsEncryptionAlg(k, alg as IdTokenEncryptionAlg))) {
      mistakes.push(
        `${where}.jwks has no key to encrypt ID tokens with ${String(alg)}: add ${encryptionKeyKind(alg as string)} key with "use": "enc"`,
      );
    }
  }
  if (mistakes.length > before) return undefined;
  return {
    ...(keys !== undefined ? { jwks: keys } : {}),
    ...(uri !== undefined ? { jwksUri: uri } : {}),
    idTokenSigningAlg: signing as IdTokenSigningAlg,
    idTokenEncryption: { alg: alg as IdTokenEncryptionAlg, enc: enc as IdTokenEncryptionEnc },
  };
}
