/**
 * ID-token validation: every rule is one named step below, with its own IdError code, run in
 * this order. The algorithm is pinned to RS256 by configuration and never taken from the token.
 *
 * jose parses the header and the claims; the RS256 signature itself is checked with one
 * synchronous `crypto.verify` over the ASCII of the first two segments. jose's own verify runs
 * on the libuv thread pool, and that hop cost ~100 µs of CPU per login here, a tenth of a
 * relying party's whole login. The token's shape is checked strictly before anything else.
 */
import { hash, verify, type KeyObject } from 'node:crypto';
// jose's subpaths, not its root: importing the root loads all of jose (most of this package's import time).
import { decodeJwt } from 'jose/jwt/decode';
import { decodeProtectedHeader } from 'jose/decode/protected_header';
import type { JWTPayload, ProtectedHeaderParameters } from 'jose';
import { epochSeconds, type Clock } from '../clock.js';
import { IdError } from '../errors.js';
import { MIN_RSA_BITS } from '../keys.js';
import type { IdTokenClaims } from './types.js';

/** The only ID-token signature algorithm accepted. */
export const ID_TOKEN_ALGORITHM = 'RS256';

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
  /** Finds the verification key for a header `kid` (possibly absent). */
  keyFor: (kid: string | undefined) => Promise<KeyObject>;
}

/**
 * Validate an ID token completely and return its claims.
 * @throws IdError with the code of the first rule the token breaks.
 */
export async function validateIdToken(idToken: unknown, expect: IdTokenExpectations): Promise<IdTokenClaims> {
  const token = requirePresent(idToken);
  const header = readHeader(token);
  requireAlgorithm(header);
  const payload = await verifySignature(token, header, expect);
  requireClaims(payload);
  checkIssuer(payload, expect.issuer);
  checkAudience(payload, expect.clientId);
  checkSubject(payload);
  checkExpiry(payload, expect);
  checkNotBefore(payload, expect);
  checkIssuedAt(payload, expect);
  checkNonce(payload, expect.nonce);
  checkAccessTokenHash(payload, expect.accessToken);
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
  if (!COMPACT_JWS.test(token)) {
    throw new IdError('id_token_malformed', 'The ID token is not a compact JWS (three dot-separated base64url parts).');
  }
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new IdError('id_token_malformed', 'The ID token header is not valid base64url JSON.');
  }
  // No JWS extension is supported, so any critical one (or an unencoded payload) is refused.
  if (header.crit !== undefined || header.b64 !== undefined) {
    throw new IdError('id_token_malformed', 'The ID token header uses a JWS extension (crit or b64) that is not supported.');
  }
  return header;
}

function requireAlgorithm(header: ProtectedHeaderParameters): void {
  if (header.alg !== ID_TOKEN_ALGORITHM) {
    const alg = typeof header.alg === 'string' && /^[\w-]{1,20}$/.test(header.alg) ? header.alg : 'unknown';
    throw new IdError('id_token_alg_not_allowed', `The ID token is signed with "${alg}"; only ${ID_TOKEN_ALGORITHM} is accepted.`);
  }
  if (header.kid !== undefined && typeof header.kid !== 'string') {
    throw new IdError('id_token_malformed', 'The ID token header has a kid that is not a string.');
  }
}

async function verifySignature(
  token: string,
  header: ProtectedHeaderParameters,
  expect: IdTokenExpectations,
): Promise<JWTPayload> {
  const key = await expect.keyFor(header.kid);
  // As jose does for RS256: a key under 2048 bits is refused whatever the key set gave.
  if (key.asymmetricKeyType !== 'rsa' || (key.asymmetricKeyDetails?.modulusLength ?? 0) < MIN_RSA_BITS) {
    throw new IdError('id_token_signature_invalid', `The ID token's key is not an RSA key of at least ${MIN_RSA_BITS} bits.`);
  }
  const lastDot = token.lastIndexOf('.');
  const signingInput = Buffer.from(token.slice(0, lastDot), 'ascii');
  const signature = Buffer.from(token.slice(lastDot + 1), 'base64url');
  let valid: boolean;
  try {
    // RSASSA-PKCS1-v1_5 with SHA-256 (RS256): node's default padding for an RSA key.
    valid = verify('sha256', signingInput, key, signature);
  } catch {
    valid = false;
  }
  if (!valid) {
    throw new IdError('id_token_signature_invalid', 'The ID token signature does not verify with the provider key.');
  }
  try {
    return decodeJwt(token);
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
    throw new IdError('id_token_issued_in_future', 'The ID token was issued in the future (iat); check the server clock.');
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

function checkAccessTokenHash(payload: JWTPayload, accessToken: string): void {
  const atHash = payload.at_hash;
  if (atHash === undefined) return;
  const digest = hash('sha256', accessToken, 'buffer');
  const expected = digest.subarray(0, digest.length / 2).toString('base64url');
  if (atHash !== expected) {
    throw new IdError('at_hash_mismatch', 'The access token does not match the ID token at_hash.');
  }
}
