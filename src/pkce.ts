/** PKCE (RFC 7636, S256 only) and the random values of an authorization request. */
import { createHash, randomBytes } from 'node:crypto';

/** Shortest code verifier the service accepts. */
export const CODE_VERIFIER_MIN_LENGTH = 43;
/** Longest code verifier the service accepts. */
export const CODE_VERIFIER_MAX_LENGTH = 128;

const PKCE_CHARSET = /^[A-Za-z0-9\-._~]{43,128}$/;

/** True when `value` is 43-128 characters of `A-Z a-z 0-9 - . _ ~` (a valid verifier or challenge). */
export function isPkceString(value: unknown): value is string {
  return typeof value === 'string' && PKCE_CHARSET.test(value);
}

function checkLength(length: unknown, fn: string): number {
  if (
    typeof length !== 'number' ||
    !Number.isInteger(length) ||
    length < CODE_VERIFIER_MIN_LENGTH ||
    length > CODE_VERIFIER_MAX_LENGTH
  ) {
    throw new RangeError(
      `${fn}: length must be a whole number from ${CODE_VERIFIER_MIN_LENGTH} to ${CODE_VERIFIER_MAX_LENGTH}; got ${String(length)}`,
    );
  }
  return length;
}

/** `bytes` random bytes from the CSPRNG, base64url without padding. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/**
 * A code verifier of `length` base64url characters (unreserved, six random bits each) from the CSPRNG.
 * @throws RangeError when length is not a whole number from 43 to 128.
 */
export function generateCodeVerifier(length: number = CODE_VERIFIER_MIN_LENGTH): string {
  const n = checkLength(length, 'generateCodeVerifier');
  return randomBytes(Math.ceil((n * 3) / 4))
    .toString('base64url')
    .slice(0, n);
}

/**
 * The S256 code challenge: BASE64URL(SHA256(ASCII(codeVerifier))).
 * @throws TypeError when the verifier is not 43-128 characters of the allowed set.
 */
export function generateCodeChallenge(codeVerifier: string): string {
  if (!isPkceString(codeVerifier)) {
    throw new TypeError(
      'generateCodeChallenge: codeVerifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (use generateCodeVerifier())',
    );
  }
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}

/** A fresh verifier and its S256 challenge. Make a new pair for every authorization request. */
export function generatePkcePair(length: number = CODE_VERIFIER_MIN_LENGTH): {
  codeVerifier: string;
  codeChallenge: string;
} {
  const codeVerifier = generateCodeVerifier(length);
  return { codeVerifier, codeChallenge: generateCodeChallenge(codeVerifier) };
}

/** A `state` value: 256 random bits, base64url (43 characters). */
export function generateState(): string {
  return randomToken(32);
}

/** A `nonce` value: 256 random bits, base64url (43 characters). */
export function generateNonce(): string {
  return randomToken(32);
}
