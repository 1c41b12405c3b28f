/**
 * The checks every RSA key passes before it verifies, decrypts or signs anything, on every path
 * (a provider's key set, ID tokens, userinfo JWTs, the app's own keys): a modulus of at least
 * 2048 bits; a public exponent that is odd and between 3 and 2^256 (e = 1 makes every message
 * its own signature); and a modulus without the ROCA fingerprint (CVE-2017-15361: keys made by
 * a flawed Infineon generator, whose primes can be recovered). The answer for a key object is
 * kept, so a key is examined once.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

/** Smallest RSA modulus accepted, in bits. */
export const MIN_RSA_BITS = 2048;
/** Largest public exponent accepted (exclusive): NIST SP 800-56B 6.2.1 and FIPS 186-5 A.1.1. */
const MAX_EXPONENT = 1n << 256n;

const verdicts = new WeakMap<KeyObject, string | undefined>();

/**
 * Why the RSA key `key` (public or private) must not be used, as a short phrase for an error
 * message, or `undefined` when it is fine. A key of another type gives `'not an RSA key'`.
 */
export function rsaKeyProblem(key: KeyObject): string | undefined {
  if (verdicts.has(key)) return verdicts.get(key);
  const verdict = examine(key);
  verdicts.set(key, verdict);
  return verdict;
}

function examine(key: KeyObject): string | undefined {
  if (key.asymmetricKeyType !== 'rsa') return 'not an RSA key';
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < MIN_RSA_BITS) return `an RSA key of ${bits} bits (at least ${MIN_RSA_BITS} are needed)`;
  const e = key.asymmetricKeyDetails?.publicExponent;
  if (typeof e !== 'bigint' || e < 3n || e >= MAX_EXPONENT || e % 2n === 0n) {
    return 'an RSA key whose public exponent is not an odd number from 3 to 2^256';
  }
  const n = modulusOf(key);
  if (hasRocaFingerprint(n)) return 'an RSA key with the ROCA weakness (CVE-2017-15361); make a new key';
  return undefined;
}

function modulusOf(key: KeyObject): bigint {
  const jwk = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' });
  return BigInt(`0x${Buffer.from(String(jwk.n), 'base64url').toString('hex') || '0'}`);
}

/**
 * The small primes of the ROCA test: a modulus made by the flawed generator is, modulo each of
 * them, a power of 65537 (its primes are k * M + (65537^a mod M), M their product).
 */
const ROCA_PRIMES = [
  3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113,
  127, 131, 137, 139, 149, 151, 157, 163, 167,
];

/** For each ROCA prime p, the powers of 65537 modulo p (the subgroup it generates). */
let rocaPowers: readonly (readonly [bigint, ReadonlySet<number>])[] | undefined;

function powersOf65537(): readonly (readonly [bigint, ReadonlySet<number>])[] {
  rocaPowers ??= ROCA_PRIMES.map((p) => {
    const powers = new Set<number>();
    const g = 65537 % p;
    for (let x = 1; !powers.has(x); x = (x * g) % p) powers.add(x);
    return [BigInt(p), powers] as const;
  });
  return rocaPowers;
}

/** True when `n` modulo every ROCA prime is a power of 65537: the fingerprint of the weak generator. */
export function hasRocaFingerprint(n: bigint): boolean {
  return powersOf65537().every(([p, powers]) => powers.has(Number(n % p)));
}
