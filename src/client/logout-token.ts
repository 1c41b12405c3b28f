/**
 * Logout-token validation (OpenID Connect Back-Channel Logout 1.0, 2.6): a JWT the provider
 * POSTs to the app to end a person's sessions. Every rule is one named step with its own IdError
 * code, run in this order. The signature is checked as the ID token's is (same allowlist, same
 * key set, same node:crypto verification); the claims are those of a logout token, not an ID token.
 */
import type { KeyObject } from 'node:crypto';
import { epochSeconds, type Clock } from '../clock.js';
import { JWS_SEGMENTS, MAX_ID_TOKEN_LENGTH, withinCompactLimits } from '../compact-limits.js';
import { decodeJsonSegment, isRecord } from '../encoding.js';
import { IdError, isIdError, type IdErrorCode } from '../errors.js';
import type { IdTokenDecryptionKey } from './fapi-keys.js';
import { verifyCompactJws } from '../jose/jws-verify.js';
import { ID_TOKEN_SIGNING_ALGORITHMS, type IdTokenSigningAlgorithm } from './id-token.js';
import { decryptIdToken, isCompactJwe, type IdTokenDecryptionOptions } from './id-token-jwe.js';

/** The member of `events` that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The `typ` header a logout token may carry (Back-Channel Logout 1.0, 2.4). */
export const LOGOUT_TOKEN_TYPE = 'logout+jwt';

/** The claims of a valid logout token: `sub`, `sid` or both. */
export interface LogoutTokenClaims {
  iss: string;
  aud: string | string[];
  /** Issued at, in seconds since the epoch. */
  iat: number;
  /** Expiry, in seconds since the epoch, when the token has one. */
  exp?: number;
  /** The token's unique id: used once only. */
  jti: string;
  /** The person whose sessions end (all of theirs at this issuer), when given. */
  sub?: string;
  /** The provider's session whose sign-ins end, when given. */
  sid?: string;
  [claim: string]: unknown;
}

/** What a client gives to check its provider's logout tokens against (`IdClient.logoutTokenChecks()`). */
export interface LogoutTokenChecks {
  issuer: string;
  clientId: string;
  /** The ID-token signature allowlist. */
  algorithms: readonly string[];
  /** Allowed clock skew, in seconds. */
  clockTolerance: number;
  clock: Clock;
  keyFor: (kid: string | undefined, alg: IdTokenSigningAlgorithm) => Promise<KeyObject>;
  /** The ID-token decryption keys, for an encrypted logout token. */
  decryptionKeys: readonly IdTokenDecryptionKey[];
  /** The ID-token encryption allowlists (`alg`, `enc`) the app configured. Default: every one the ID token takes. */
  decryption?: IdTokenDecryptionOptions;
}

/** What a logout token is checked against: the client's checks and the oldest `iat` taken. */
export interface LogoutTokenExpectations extends LogoutTokenChecks {
  /** Oldest `iat` accepted, in seconds before now. */
  maxAge: number;
}

/** The error codes of refused logout tokens, for the docs and tests. */
export const LOGOUT_TOKEN_CODES = [
  'logout_token_missing',
  'logout_token_malformed',
  'logout_token_alg_not_allowed',
  'logout_token_typ_invalid',
  'logout_token_signature_invalid',
  'logout_token_iss_mismatch',
  'logout_token_aud_mismatch',
  'logout_token_iat_invalid',
  'logout_token_expired',
  'logout_token_jti_missing',
  'logout_token_events_invalid',
  'logout_token_sub_sid_missing',
  'logout_token_nonce_present',
] as const satisfies readonly IdErrorCode[];

function refuse(code: (typeof LOGOUT_TOKEN_CODES)[number], message: string): never {
  throw new IdError(code, message);
}

/**
 * Validates a logout token completely and returns its claims (the `jti` is not consumed here:
 * the receiver does that once the token is otherwise valid).
 * @throws IdError with the code of the first rule the token breaks, or a key-set failure
 *   (`id_token_key_not_found`, an HTTP code).
 */
export async function validateLogoutToken(given: unknown, expect: LogoutTokenExpectations): Promise<LogoutTokenClaims> {
  if (typeof given !== 'string' || given === '') refuse('logout_token_missing', 'The request carries no logout_token.');
  const token = await decrypted(given, expect);
  const header = readHeader(token);
  const alg = requireAlgorithm(header, expect.algorithms);
  const key = await expect.keyFor(header.kid as string | undefined, alg);
  if (!verifyCompactJws(token, key, alg))
    refuse('logout_token_signature_invalid', 'The logout token signature does not verify with the provider key.');
  const claims = readClaims(token);
  checkIssuerAndAudience(claims, expect);
  checkTimes(claims, expect);
  checkLogoutClaims(claims);
  return claims as LogoutTokenClaims;
}

/**
 * The JWS inside an encrypted logout token, or the token itself: under the ID token's encryption
 * allowlists and keys, only the key its `kid` names (or, with no `kid`, the only key that fits),
 * so an unauthenticated POST costs at most one decryption, never one per key.
 */
async function decrypted(token: string, expect: LogoutTokenChecks): Promise<string> {
  if (!isCompactJwe(token)) return token;
  try {
    return await decryptIdToken(token, expect.decryptionKeys, expect.decryption, 'named');
  } catch (err) {
    if (isIdError(err) && err.code === 'id_token_jwe_alg_not_allowed')
      refuse(
        'logout_token_alg_not_allowed',
        'The logout token is encrypted with an algorithm outside the ID-token allowlist.',
      );
    refuse(
      'logout_token_malformed',
      'The encrypted logout token could not be decrypted with the ID-token key it names.',
    );
  }
}

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function readHeader(token: string): Record<string, unknown> {
  if (!withinCompactLimits(token, JWS_SEGMENTS, MAX_ID_TOKEN_LENGTH) || !COMPACT_JWS.test(token))
    refuse('logout_token_malformed', 'The logout token is not a compact JWS of three base64url parts.');
  let header: Record<string, unknown>;
  try {
    header = decodeJsonSegment(token, 0);
  } catch {
    refuse('logout_token_malformed', 'The logout token header is not valid base64url JSON.');
  }
  if (header.crit !== undefined || header.b64 !== undefined)
    refuse(
      'logout_token_malformed',
      'The logout token header uses a JWS extension (crit or b64) that is not supported.',
    );
  if (header.kid !== undefined && typeof header.kid !== 'string')
    refuse('logout_token_malformed', 'The logout token header has a kid that is not a string.');
  // 2.4: explicit typing is recommended; when present it must say logout+jwt (case-insensitive media type, RFC 8725 3.11).
  if (header.typ !== undefined) {
    const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : '';
    if (typ !== LOGOUT_TOKEN_TYPE && typ !== `application/${LOGOUT_TOKEN_TYPE}`)
      refuse('logout_token_typ_invalid', `The logout token's typ header is not "${LOGOUT_TOKEN_TYPE}".`);
  }
  return header;
}

function requireAlgorithm(header: Record<string, unknown>, algorithms: readonly string[]): IdTokenSigningAlgorithm {
  const { alg } = header;
  if (
    typeof alg !== 'string' ||
    !algorithms.includes(alg) ||
    !(ID_TOKEN_SIGNING_ALGORITHMS as readonly string[]).includes(alg)
  ) {
    refuse(
      'logout_token_alg_not_allowed',
      `The logout token is not signed with an algorithm of the ID-token allowlist (${algorithms.join(', ')}).`,
    );
  }
  return alg as IdTokenSigningAlgorithm;
}

function readClaims(token: string): Record<string, unknown> {
  try {
    return decodeJsonSegment(token, 1);
  } catch {
    refuse('logout_token_malformed', 'The logout token payload is not a JSON object.');
  }
}

function checkIssuerAndAudience(claims: Record<string, unknown>, expect: LogoutTokenExpectations): void {
  if (claims.iss !== expect.issuer)
    refuse('logout_token_iss_mismatch', `The logout token issuer is not ${expect.issuer}.`);
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(expect.clientId))
    refuse('logout_token_aud_mismatch', 'The logout token audience does not include this clientId.');
}

function checkTimes(claims: Record<string, unknown>, expect: LogoutTokenExpectations): void {
  const now = epochSeconds(expect.clock);
  const { iat, exp } = claims;
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    refuse('logout_token_iat_invalid', 'The logout token has no numeric "iat" claim.');
  if (iat > now + expect.clockTolerance)
    refuse('logout_token_iat_invalid', 'The logout token was issued in the future (iat); check the server clock.');
  if (iat < now - expect.maxAge - expect.clockTolerance)
    refuse('logout_token_iat_invalid', 'The logout token was issued too long ago (iat) to be accepted.');
  if (exp !== undefined && (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= now - expect.clockTolerance))
    refuse('logout_token_expired', 'The logout token has expired (exp is in the past).');
}

function checkLogoutClaims(claims: Record<string, unknown>): void {
  if (typeof claims.jti !== 'string' || claims.jti === '' || claims.jti.length > 256)
    refuse('logout_token_jti_missing', 'The logout token has no "jti" claim of at most 256 characters.');
  const events = claims.events;
  if (!isRecord(events) || !isRecord(events[BACKCHANNEL_LOGOUT_EVENT]))
    refuse(
      'logout_token_events_invalid',
      `The logout token's "events" claim has no ${BACKCHANNEL_LOGOUT_EVENT} object.`,
    );
  const { sub, sid } = claims;
  const hasSub = typeof sub === 'string' && sub !== '';
  const hasSid = typeof sid === 'string' && sid !== '';
  if ((sub !== undefined && !hasSub) || (sid !== undefined && !hasSid) || (!hasSub && !hasSid))
    refuse('logout_token_sub_sid_missing', 'The logout token names neither a "sub" nor a "sid" (non-empty strings).');
  // 2.4: a nonce is prohibited, so an ID token can never pass for a logout token.
  if (claims.nonce !== undefined) refuse('logout_token_nonce_present', 'The logout token carries a "nonce" claim.');
}
