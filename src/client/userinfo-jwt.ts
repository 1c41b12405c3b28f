/**
 * A provider's standard userinfo as `application/jwt` (OIDC Core 5.3.2): signed with an allowlisted
 * algorithm by a key of the provider's set, optionally encrypted; `iss` and `aud`, when present,
 * must match. Verified on node:crypto (jose's JWS was a large share of a worker bundle);
 * `test/client/userinfo-jwt-differential.test.ts` shows the decisions match jose's.
 */
import type { KeyObject } from 'node:crypto';
import { IdError } from '../errors.js';
import { JWS_SEGMENTS, MAX_USERINFO_JWT_LENGTH, withinCompactLimits } from '../compact-limits.js';
import type { IdTokenDecryptionKey } from './fapi-keys.js';
import type { IdTokenSigningAlgorithm } from './id-token.js';
import { verifyCompactJws } from '../jose/jws-verify.js';
import { decryptIdToken, isCompactJwe } from './id-token-jwe.js';

/** Three base64url parts: nothing else is decoded (Buffer would skip other characters). */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/;

/**
 * As jose's compact verification decides: the one JWS extension understood is `b64` (RFC 7797),
 * and only its default (`b64: true`, an encoded payload) is taken; `b64` outside `crit` is ignored.
 */
function onlyEncodedPayload(header: Record<string, unknown>): boolean {
  const { crit } = header;
  if (crit === undefined) return true;
  return Array.isArray(crit) && crit.length > 0 && crit.every((name) => name === 'b64') && header.b64 === true;
}

/** What a userinfo JWT is checked against. */
export interface UserinfoJwtExpectations {
  issuer: string;
  clientId: string;
  /** The signature algorithms accepted: the allowlist narrowed to the provider's `userinfo_signing_alg_values_supported`. */
  algorithms: readonly string[];
  decryptionKeys: readonly IdTokenDecryptionKey[];
  keyFor: (kid: string | undefined, alg: IdTokenSigningAlgorithm) => Promise<KeyObject>;
}

/**
 * The claims of a userinfo JWT.
 * @throws IdError `userinfo_malformed` (the answer cannot be read), `userinfo_alg_not_allowed`,
 *   or a key-set failure (`id_token_key_not_found`, an HTTP code).
 */
export async function readUserinfoJwt(
  token: string,
  expect: UserinfoJwtExpectations,
): Promise<Record<string, unknown>> {
  let jws = token;
  if (isCompactJwe(token)) {
    try {
      jws = await decryptIdToken(token, expect.decryptionKeys);
    } catch (err) {
      throw new IdError(
        'userinfo_malformed',
        'The encrypted userinfo response could not be decrypted with the ID-token decryption key.',
        { cause: err },
      );
    }
  }
  // Size and segment count before the header is parsed or any key set is fetched.
  if (!withinCompactLimits(jws, JWS_SEGMENTS, MAX_USERINFO_JWT_LENGTH)) {
    throw new IdError(
      'userinfo_malformed',
      `The userinfo response is not a compact JWT of three parts and at most ${MAX_USERINFO_JWT_LENGTH} characters.`,
    );
  }
  const dot = jws.indexOf('.');
  let header: { alg?: unknown; kid?: unknown; crit?: unknown };
  try {
    header = JSON.parse(Buffer.from(jws.slice(0, dot), 'base64url').toString('utf8')) as typeof header;
  } catch {
    throw new IdError('userinfo_malformed', 'The userinfo response is not a compact JWT.');
  }
  if (
    typeof header !== 'object' ||
    header === null ||
    typeof header.alg !== 'string' ||
    !expect.algorithms.includes(header.alg)
  ) {
    throw new IdError(
      'userinfo_alg_not_allowed',
      `The userinfo JWT is not signed with an algorithm this app accepts from this provider (idTokenSigningAlgorithms within its userinfo_signing_alg_values_supported: ${expect.algorithms.join(', ') || 'none'}).`,
    );
  }
  if (header.kid !== undefined && typeof header.kid !== 'string')
    throw new IdError('userinfo_malformed', 'The userinfo JWT header has a kid that is not a string.');
  const key = await expect.keyFor(header.kid, header.alg as IdTokenSigningAlgorithm);
  if (
    !COMPACT_JWS.test(jws) ||
    !onlyEncodedPayload(header as Record<string, unknown>) ||
    !verifyCompactJws(jws, key, header.alg as IdTokenSigningAlgorithm)
  ) {
    throw new IdError('userinfo_malformed', 'The userinfo JWT signature does not verify with the provider key.');
  }
  const payload = Buffer.from(jws.slice(dot + 1, jws.lastIndexOf('.')), 'base64url');
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    throw new IdError('userinfo_malformed', 'The userinfo JWT payload is not JSON.');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims))
    throw new IdError('userinfo_malformed', 'The userinfo JWT payload is not a JSON object.');
  const c = claims as Record<string, unknown>;
  if (c.iss !== undefined && c.iss !== expect.issuer)
    throw new IdError('userinfo_malformed', 'The userinfo JWT names another issuer.');
  if (c.aud !== undefined && !(Array.isArray(c.aud) ? c.aud : [c.aud]).includes(expect.clientId)) {
    throw new IdError('userinfo_malformed', 'The userinfo JWT is meant for another audience.');
  }
  return c;
}
