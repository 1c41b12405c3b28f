/**
 * ID-token validation: every rule is one named step below, with its own IdError code, run in
 * this order. The accepted algorithms are the caller's allowlist (`algorithms`, RS256 by
 * default, as the spec signs); the token's `alg` is only ever checked against it, and the key
 * must be of the type that algorithm takes (`kty`, curve, size), whatever the key set gave.
 *
 * The token's shape is checked strictly before anything else; the header and the claims are
 * read here, and the signature is checked by `src/jose` (`verifyCompactJws`).
 * `test/client/id-token-differential.test.ts` shows the decisions match jose's, per algorithm.
 */
import type { KeyObject } from 'node:crypto';
// jose's types only: nothing of jose is loaded at run time.
import type { JWTPayload, ProtectedHeaderParameters } from 'jose';
import { epochSeconds, type Clock } from '../clock.js';
import { IdError } from '../errors.js';
import { JWS_SEGMENTS, MAX_ID_TOKEN_LENGTH, withinCompactLimits } from '../compact-limits.js';
import { decodeJsonSegment } from '../encoding.js';
import {
  isJwsAlgorithm,
  JWS_ALGORITHMS,
  type JwsAlgorithm,
  keyFitsAlgorithm,
  keyNeeded,
  verifyCompactJws,
} from '../jose/jws-verify.js';
import type { IdTokenClaims } from './types.js';
import { accessTokenHash } from './token-hash.js';

export { keyFitsAlgorithm } from '../jose/jws-verify.js';

/** The ID-token signature algorithm accepted by default (the spec's service signs RS256). */
export const ID_TOKEN_ALGORITHM = 'RS256';

/**
 * Every ID-token signature algorithm this client can verify: RS256 (the spec), and those the
 * FAPI 2.0 profile allows (5.4.1: PS256, ES256, EdDSA with Ed25519), with ES384 and ES512 for
 * P-384 and P-521 keys. `none` and the HMAC algorithms are never accepted.
 */
export const ID_TOKEN_SIGNING_ALGORITHMS = JWS_ALGORITHMS;

/** One of {@link ID_TOKEN_SIGNING_ALGORITHMS}. */
export type IdTokenSigningAlgorithm = JwsAlgorithm;

/** The default allowlist: RS256 only. */
export const DEFAULT_ID_TOKEN_ALGORITHMS: readonly IdTokenSigningAlgorithm[] = Object.freeze([ID_TOKEN_ALGORITHM]);

/**
 * A signing-algorithm allowlist as an option gives it, checked: a non-empty array of
 * {@link ID_TOKEN_SIGNING_ALGORITHMS} names, returned frozen, without duplicates.
 * @param what the option's name, for the error (e.g. `IdClient: idTokenSigningAlgorithms`).
 * @throws TypeError that names the option and the accepted values.
 */
export function checkIdTokenAlgorithms(value: unknown, what: string): readonly IdTokenSigningAlgorithm[] {
  const accepted = ID_TOKEN_SIGNING_ALGORITHMS.join(', ');
  if (!Array.isArray(value) || value.length === 0) {
    throw new TypeError(`${what} must be a non-empty array of signature algorithms, among ${accepted}`);
  }
  for (const alg of value) {
    if (!(ID_TOKEN_SIGNING_ALGORITHMS as readonly unknown[]).includes(alg)) {
      const shown = typeof alg === 'string' && /^[\w+-]{1,20}$/.test(alg) ? `"${alg}"` : 'a value';
      throw new TypeError(
        `${what} lists ${shown} that is not an ID-token signature algorithm this client verifies; use ${accepted}`,
      );
    }
  }
  return Object.freeze([...new Set(value as IdTokenSigningAlgorithm[])]);
}

/** What a token is checked against. */
export interface IdTokenExpectations {
  /** Exact `iss`: `{origin}/v2`. */
  issuer: string;
  /** Our client id: in `aud`, and equal to `azp` when present (required with several audiences). */
  clientId: string;
  /** The nonce sent; `null` (or undefined) when none was sent. */
  nonce: string | null | undefined;
  /** The access token returned beside the ID token, for `at_hash`. */
  accessToken: string;
  /** Allowed clock skew, in seconds. */
  clockTolerance: number;
  clock: Clock;
  /**
   * The signature algorithms accepted (an allowlist; default `['RS256']`). The token's `alg` must
   * be one of them; check an app's option with {@link checkIdTokenAlgorithms}.
   */
  algorithms?: readonly string[];
  /**
   * Finds the verification key for a header `kid` (possibly absent) and the token's algorithm
   * (already checked against `algorithms`): a key of the type that algorithm takes.
   */
  keyFor: (kid: string | undefined, alg: IdTokenSigningAlgorithm) => Promise<KeyObject>;
}

/**
 * Validate an ID token completely and return its claims.
 * @throws IdError with the code of the first rule the token breaks.
 */
export async function validateIdToken(idToken: unknown, expect: IdTokenExpectations): Promise<IdTokenClaims> {
  const token = requirePresent(idToken);
  const header = readHeader(token);
  const alg = requireAlgorithm(header, expect.algorithms ?? DEFAULT_ID_TOKEN_ALGORITHMS);
  const payload = await verifySignature(token, header, alg, expect);
  requireClaims(payload);
  checkIssuer(payload, expect.issuer);
  checkAudience(payload, expect.clientId);
  checkSubject(payload);
  checkExpiry(payload, expect);
  checkNotBefore(payload, expect);
  checkIssuedAt(payload, expect);
  checkNonce(payload, expect.nonce);
  checkAccessTokenHash(payload, expect.accessToken, header.alg);
  return payload as IdTokenClaims;
}

function requirePresent(idToken: unknown): string {
  if (typeof idToken !== 'string' || idToken === '') {
    throw new IdError('id_token_missing', 'The token endpoint answered without an id_token.');
  }
  return idToken;
}

/**
 * Three unpadded base64url segments, the first two non-empty: the only compact JWS shape
 * accepted. (An empty signature is left for the algorithm and signature steps to refuse.)
 */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

function readHeader(token: string): ProtectedHeaderParameters {
  // Size and shape first: nothing is decoded, and no key set fetched, for an oversized token.
  if (!withinCompactLimits(token, JWS_SEGMENTS, MAX_ID_TOKEN_LENGTH)) {
    throw new IdError(
      'id_token_malformed',
      `The ID token is not a compact JWS of three parts and at most ${MAX_ID_TOKEN_LENGTH} characters.`,
    );
  }
  if (!COMPACT_JWS.test(token)) {
    throw new IdError('id_token_malformed', 'The ID token is not a compact JWS (three dot-separated base64url parts).');
  }
  let header: ProtectedHeaderParameters;
  try {
    header = decodeJsonSegment(token, 0) as ProtectedHeaderParameters;
  } catch {
    throw new IdError('id_token_malformed', 'The ID token header is not valid base64url JSON.');
  }
  // No JWS extension is supported, so any critical one (or an unencoded payload) is refused.
  if (header.crit !== undefined || header.b64 !== undefined) {
    throw new IdError(
      'id_token_malformed',
      'The ID token header uses a JWS extension (crit or b64) that is not supported.',
    );
  }
  return header;
}

/** The token's `alg`, when the allowlist has it (and this client verifies it: never none or HMAC). */
function requireAlgorithm(header: ProtectedHeaderParameters, algorithms: readonly string[]): IdTokenSigningAlgorithm {
  const { alg } = header;
  if (typeof alg !== 'string' || !algorithms.includes(alg) || !isJwsAlgorithm(alg)) {
    const shown = typeof alg === 'string' && /^[\w-]{1,20}$/.test(alg) ? alg : 'unknown';
    const allowed = algorithms.filter(isJwsAlgorithm);
    throw new IdError(
      'id_token_alg_not_allowed',
      `The ID token is signed with "${shown}"; only ${allowed.join(', ') || 'RS256'} ${allowed.length > 1 ? 'are' : 'is'} accepted.`,
    );
  }
  if (header.kid !== undefined && typeof header.kid !== 'string') {
    throw new IdError('id_token_malformed', 'The ID token header has a kid that is not a string.');
  }
  return alg as IdTokenSigningAlgorithm;
}

async function verifySignature(
  token: string,
  header: ProtectedHeaderParameters,
  alg: IdTokenSigningAlgorithm,
  expect: IdTokenExpectations,
): Promise<JWTPayload> {
  const key = await expect.keyFor(header.kid, alg);
  // As jose does: a key that is not of the algorithm's type (or an RSA key under 2048 bits) is
  // refused whatever the key set gave.
  if (!keyFitsAlgorithm(key, alg)) {
    throw new IdError(
      'id_token_signature_invalid',
      `The ID token's key is not of the type ${alg} takes (${keyNeeded(alg)}).`,
    );
  }
  if (!verifyCompactJws(token, key, alg)) {
    throw new IdError('id_token_signature_invalid', 'The ID token signature does not verify with the provider key.');
  }
  try {
    return decodeJsonSegment(token, 1) as JWTPayload;
  } catch {
    throw new IdError('id_token_malformed', 'The ID token payload is not a JSON object.');
  }
}

function requireClaims(payload: JWTPayload): void {
  for (const claim of ['iss', 'sub', 'aud', 'exp', 'iat'] as const) {
    if (payload[claim] === undefined) {
      throw new IdError('id_token_claim_missing', `The ID token has no "${claim}" claim.`);
    }
  }
}

function checkIssuer(payload: JWTPayload, issuer: string): void {
  if (payload.iss !== issuer) {
    throw new IdError('id_token_iss_mismatch', `The ID token issuer is not ${issuer}.`);
  }
}

function checkAudience(payload: JWTPayload, clientId: string): void {
  const { aud } = payload;
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (!audiences.includes(clientId)) {
    throw new IdError('id_token_aud_mismatch', 'The ID token audience does not include this clientId.');
  }
  // OIDC Core 3.1.3.7: azp, when present, must be this client; with several audiences it must be present.
  if (payload.azp !== undefined && payload.azp !== clientId) {
    throw new IdError('id_token_azp_mismatch', 'The ID token azp (authorized party) is not this clientId.');
  }
  if (audiences.length > 1 && payload.azp === undefined) {
    throw new IdError(
      'id_token_azp_mismatch',
      'The ID token has several audiences, so its azp must equal this clientId, and it has none.',
    );
  }
}

function checkSubject(payload: JWTPayload): void {
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw new IdError('id_token_sub_invalid', 'The ID token sub is not a non-empty string.');
  }
}

function checkExpiry(payload: JWTPayload, expect: IdTokenExpectations): void {
  const exp = payload.exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) {
    throw new IdError('id_token_malformed', 'The ID token claim "exp" is not a number.');
  }
  if (exp <= epochSeconds(expect.clock) - expect.clockTolerance) {
    throw new IdError('id_token_expired', 'The ID token has expired (exp is in the past).');
  }
}

function checkNotBefore(payload: JWTPayload, expect: IdTokenExpectations): void {
  const nbf = payload.nbf;
  if (nbf === undefined) return;
  if (typeof nbf !== 'number' || !Number.isFinite(nbf)) {
    throw new IdError('id_token_malformed', 'The ID token claim "nbf" is not a number.');
  }
  if (nbf > epochSeconds(expect.clock) + expect.clockTolerance) {
    throw new IdError('id_token_not_yet_valid', 'The ID token is not valid yet (nbf is in the future).');
  }
}

function checkIssuedAt(payload: JWTPayload, expect: IdTokenExpectations): void {
  const iat = payload.iat;
  if (typeof iat !== 'number' || !Number.isFinite(iat)) {
    throw new IdError('id_token_malformed', 'The ID token claim "iat" is not a number.');
  }
  if (iat > epochSeconds(expect.clock) + expect.clockTolerance) {
    throw new IdError(
      'id_token_issued_in_future',
      'The ID token was issued in the future (iat); check the server clock.',
    );
  }
  // The person cannot have authenticated after the token was issued: a later auth_time would pass every step-up.
  const authTime = payload.auth_time;
  if (
    authTime !== undefined &&
    (typeof authTime !== 'number' || !Number.isFinite(authTime) || authTime > iat + expect.clockTolerance)
  ) {
    throw new IdError('id_token_malformed', 'The ID token claim "auth_time" is not a time at or before its "iat".');
  }
}

function checkNonce(payload: JWTPayload, nonce: string | null | undefined): void {
  const claim = payload.nonce;
  if (nonce === null || nonce === undefined) {
    if (claim !== undefined) {
      throw new IdError(
        'nonce_unexpected',
        'The ID token carries a nonce but none was sent; pass the nonce returned by authorizationUrl to callback.',
      );
    }
    return;
  }
  if (claim === undefined) {
    throw new IdError('nonce_missing', 'A nonce was sent but the ID token carries none.');
  }
  if (claim !== nonce) {
    throw new IdError('nonce_mismatch', 'The ID token nonce differs from the one sent with this login.');
  }
}

function checkAccessTokenHash(payload: JWTPayload, accessToken: string, alg: unknown): void {
  const atHash = payload.at_hash;
  if (atHash === undefined) return;
  // The hash of the token's own algorithm; one with no known hash is refused (fails closed).
  const expected = accessTokenHash(alg, accessToken);
  if (atHash !== expected) {
    throw new IdError('at_hash_mismatch', 'The access token does not match the ID token at_hash.');
  }
}
