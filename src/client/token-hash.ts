/**
 * The hash behind `at_hash` (OIDC Core 3.1.3.6, 3.2.2.9). An algorithm not listed has no known
 * hash, and the token is refused rather than checked with a guess.
 */
import { hash } from 'node:crypto';
import { IdError } from '../errors.js';

/** The hash of each JWS algorithm whose `at_hash` can be checked. EdDSA is Ed25519's (Ed448 would need SHAKE256). */
const HASH_OF: Readonly<Record<string, 'sha256' | 'sha384' | 'sha512'>> = {
  RS256: 'sha256',
  PS256: 'sha256',
  ES256: 'sha256',
  RS384: 'sha384',
  PS384: 'sha384',
  ES384: 'sha384',
  RS512: 'sha512',
  PS512: 'sha512',
  ES512: 'sha512',
  EdDSA: 'sha512',
  Ed25519: 'sha512',
};

/**
 * The hash algorithm `at_hash` uses under the JWS algorithm `alg`.
 * @throws IdError `id_token_alg_not_allowed` when `alg` has no known hash (an unknown algorithm fails closed).
 */
export function atHashAlgorithm(alg: unknown): 'sha256' | 'sha384' | 'sha512' {
  const found = typeof alg === 'string' && Object.hasOwn(HASH_OF, alg) ? HASH_OF[alg] : undefined;
  if (found === undefined) {
    throw new IdError(
      'id_token_alg_not_allowed',
      'The ID token is signed with an algorithm whose at_hash hash is unknown; it is refused rather than checked with a guessed hash.',
    );
  }
  return found;
}

/** The `at_hash` of `accessToken` under the JWS algorithm `alg`. @throws IdError as {@link atHashAlgorithm}. */
export function accessTokenHash(alg: unknown, accessToken: string): string {
  const digest = hash(atHashAlgorithm(alg), accessToken, 'buffer');
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
