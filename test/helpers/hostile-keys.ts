/**
 * RSA keys a provider (or an app) must never get to use, made here rather than copied from
 * anywhere: a key with public exponent 1, one with an even exponent, and one whose modulus has
 * the ROCA fingerprint (both primes 1 modulo every small prime the fingerprint test uses, so
 * the modulus is 65537^0 modulo each of them).
 */
import { createHash, createPrivateKey, generateKeyPairSync, generatePrimeSync, type KeyObject } from 'node:crypto';

const b64 = (n: bigint): string => {
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.from(hex, 'hex').toString('base64url');
};
const big = (text: string): bigint => BigInt(`0x${Buffer.from(text, 'base64url').toString('hex')}`);

function modInverse(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [((a % m) + m) % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  if (r0 !== 1n) throw new Error('not invertible');
  return ((s0 % m) + m) % m;
}

const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b));

/** A private RSA JWK from its primes and public exponent. */
function rsaJwk(p: bigint, q: bigint, e: bigint, d: bigint): Record<string, string> {
  return {
    kty: 'RSA',
    n: b64(p * q),
    e: b64(e),
    d: b64(d),
    p: b64(p),
    q: b64(q),
    dp: b64(d % (p - 1n)),
    dq: b64(d % (q - 1n)),
    qi: b64(modInverse(q, p)),
  };
}

/** The small primes of the ROCA fingerprint test. */
const ROCA_PRIMES = [
  3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113,
  127, 131, 137, 139, 149, 151, 157, 163, 167,
];

/** A 2048-bit RSA key (e = 65537) whose modulus has the ROCA fingerprint: its private key and public JWK. */
export function rocaKeyPair(): { privateKey: KeyObject; publicJwk: Record<string, string> } {
  const m = ROCA_PRIMES.reduce((acc, p) => acc * BigInt(p), 1n);
  const e = 65537n;
  const prime = (): bigint => {
    for (;;) {
      const p = generatePrimeSync(1024, { add: m, rem: 1n, bigint: true });
      if ((p - 1n) % e !== 0n) return p;
    }
  };
  const p = prime();
  let q = prime();
  // Two 1024-bit primes make a 2047- or 2048-bit modulus: only a full 2048-bit one is wanted.
  while (q === p || (p * q) >> 2047n !== 1n) q = prime();
  const lambda = ((p - 1n) * (q - 1n)) / gcd(p - 1n, q - 1n);
  const jwk = rsaJwk(p, q, e, modInverse(e, lambda));
  return { privateKey: createPrivateKey({ key: jwk, format: 'jwk' }), publicJwk: { kty: 'RSA', n: jwk.n!, e: jwk.e! } };
}

/** A fresh 2048-bit key pair's primes, for keys with another exponent. */
function freshPrimes(): { p: bigint; q: bigint } {
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  return { p: big(String(jwk.p)), q: big(String(jwk.q)) };
}

/** A 2048-bit RSA private JWK with e = 1 (and d = 1): every message is its own signature. */
export function exponentOnePrivateJwk(): Record<string, string> {
  const { p, q } = freshPrimes();
  return rsaJwk(p, q, 1n, 1n);
}

/** A 2048-bit RSA public JWK with the exponent `e` (e.g. 1, or an even one). */
export function publicJwkWithExponent(e: bigint): Record<string, string> {
  const { p, q } = freshPrimes();
  return { kty: 'RSA', n: b64(p * q), e: b64(e) };
}

/**
 * The RS256 "signature" that verifies under a key with e = 1 and modulus `n`: the EMSA-PKCS1-v1_5
 * encoding of the signing input itself (RFC 8017 9.2), as long as the modulus.
 */
export function exponentOneSignature(signingInput: string, nBase64url: string): string {
  const k = Buffer.from(nBase64url, 'base64url').length;
  const digestInfo = Buffer.concat([
    Buffer.from('3031300d060960864801650304020105000420', 'hex'),
    createHash('sha256').update(signingInput, 'ascii').digest(),
  ]);
  const padding = Buffer.alloc(k - digestInfo.length - 3, 0xff);
  return Buffer.concat([Buffer.from([0, 1]), padding, Buffer.from([0]), digestInfo]).toString('base64url');
}
