/**
 * The checks every RSA key passes before it verifies, decrypts or signs anything, on every path
 * (a provider's key set, ID tokens, userinfo JWTs, the app's own keys): a modulus of at least
 * 2048 bits; a public exponent that is odd and from 3 to 2^256 (under e = 1 every message is its
 * own signature); and a modulus without the ROCA fingerprint (CVE-2017-15361: keys made by a
 * flawed Infineon generator, whose primes can be recovered). A key is examined once.
 */
import type { KeyObject } from 'node:crypto';

/** Smallest RSA modulus accepted, in bits. */
export const MIN_RSA_BITS = 2048;

const verdicts = new WeakMap<KeyObject, string | undefined>();

/**
 * Why the RSA key `key` (public or private) must not be used, as a phrase that follows "got" in an
 * error message (`1024 bits`), or `undefined` when it is sound; `'not an RSA key'` for another type.
 */
export function rsaKeyProblem(key: KeyObject): string | undefined {
  if (!verdicts.has(key)) verdicts.set(key, examine(key));
  return verdicts.get(key);
}

function examine(key: KeyObject): string | undefined {
  const details = key.asymmetricKeyDetails;
  if (key.asymmetricKeyType !== 'rsa') return 'not an RSA key';
  const bits = details?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) return `${bits} bits`;
  const e = details?.publicExponent ?? 0n;
  if (e < 3n || e >> 256n > 0n || (e & 1n) === 0n) return 'a public exponent that is not odd and from 3 to 2^256';
  const n = key.export({ format: 'jwk' }).n;
  return hasRocaFingerprint(BigInt(`0x${Buffer.from(String(n), 'base64url').toString('hex')}`))
    ? 'a modulus with the ROCA weakness (CVE-2017-15361)'
    : undefined;
}

/**
 * True when `n` has the ROCA fingerprint: modulo every odd prime below 168, it is a power of
 * 65537 (the flawed generator makes primes k * M + 65537^a mod M, M the product of those primes).
 */
export function hasRocaFingerprint(n: bigint): boolean {
  for (let p = 3; p < 168; p += 2) {
    let composite = false;
    for (let d = 3; d * d <= p; d += 2) composite ||= p % d === 0;
    if (composite) continue;
    const residue = Number(n % BigInt(p));
    // Walk the powers of 65537 modulo p until they come back to 1.
    for (let power = 1; power !== residue; ) {
      power = (power * (65537 % p)) % p;
      if (power === 1) return false;
    }
  }
  return true;
}
