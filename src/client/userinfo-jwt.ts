/**
 * A provider's standard userinfo answered as `application/jwt` (OpenID Connect Core 5.3.2):
 * signed with an algorithm of the app's allowlist by a key of the provider's key set, and
 * optionally encrypted to the app's ID-token decryption key. Its `iss` and `aud`, when present,
 * must be the provider and this client.
 */
import type { KeyObject } from 'node:crypto';
import { compactVerify } from 'jose/jws/compact/verify';
import { IdError } from '../errors.js';
import type { IdTokenDecryptionKey } from './fapi-keys.js';
import type { IdTokenSigningAlgorithm } from './id-token.js';
import { decryptIdToken, isCompactJwe } from './id-token-jwe.js';

/** What a userinfo JWT is checked against. */
export interface UserinfoJwtExpectations {
  issuer: string;
  clientId: string;
  /** The signature algorithms accepted (the ID-token allowlist). */
  algorithms: readonly string[];
  decryptionKeys: readonly IdTokenDecryptionKey[];
  keyFor: (kid: string | undefined, alg: IdTokenSigningAlgorithm) => Promise<KeyObject>;
}

/**
 * The claims of a userinfo JWT.
 * @throws IdError `userinfo_malformed` (the answer cannot be read), `userinfo_alg_not_allowed`,
 *   or a key-set failure (`id_token_key_not_found`, an HTTP code).
 */
export async function readUserinfoJwt(token: string, expect: UserinfoJwtExpectations): Promise<Record<string, unknown>> {
  let jws = token;
  if (isCompactJwe(token)) {
    try {
      jws = await decryptIdToken(token, expect.decryptionKeys);
    } catch (err) {
      throw new IdError('userinfo_malformed', 'The encrypted userinfo response could not be decrypted with the ID-token decryption key.', { cause: err });
    }
  }
  const dot = jws.indexOf('.');
  let header: { alg?: unknown; kid?: unknown; crit?: unknown };
  try {
    header = JSON.parse(Buffer.from(jws.slice(0, dot), 'base64url').toString('utf8')) as typeof header;
  } catch {
    throw new IdError('userinfo_malformed', 'The userinfo response is not a compact JWT.');
  }
  if (typeof header !== 'object' || header === null || typeof header.alg !== 'string' || !expect.algorithms.includes(header.alg)) {
    throw new IdError('userinfo_alg_not_allowed', `The userinfo JWT is not signed with an algorithm of idTokenSigningAlgorithms (${expect.algorithms.join(', ')}).`);
  }
  if (header.kid !== undefined && typeof header.kid !== 'string') throw new IdError('userinfo_malformed', 'The userinfo JWT header has a kid that is not a string.');
  const key = await expect.keyFor(header.kid, header.alg as IdTokenSigningAlgorithm);
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(jws, key, { algorithms: [...expect.algorithms] }));
  } catch {
    throw new IdError('userinfo_malformed', 'The userinfo JWT signature does not verify with the provider key.');
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    throw new IdError('userinfo_malformed', 'The userinfo JWT payload is not JSON.');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) throw new IdError('userinfo_malformed', 'The userinfo JWT payload is not a JSON object.');
  const c = claims as Record<string, unknown>;
  if (c.iss !== undefined && c.iss !== expect.issuer) throw new IdError('userinfo_malformed', 'The userinfo JWT names another issuer.');
  if (c.aud !== undefined && !(Array.isArray(c.aud) ? c.aud : [c.aud]).includes(expect.clientId)) {
    throw new IdError('userinfo_malformed', 'The userinfo JWT is meant for another audience.');
  }
  return c;
}
