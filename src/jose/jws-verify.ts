/**
 * Compact JWS verification on node:crypto: the algorithm table (the digest, key type, curve and
 * signature size of each algorithm verified) and the one signature check, shared by ID tokens,
 * userinfo JWTs and anything else that verifies. One synchronous `crypto.verify` over the ASCII
 * of the first two segments: jose's own verify runs on the libuv thread pool, and that hop cost
 * ~100 µs of CPU per login, a tenth of a relying party's whole login.
 * `test/client/id-token-differential.test.ts` shows the decisions match jose's, per algorithm,
 * and `npm run wycheproof` holds them to Project Wycheproof's vectors.
 */
import { constants, verify, type KeyObject } from 'node:crypto';
import { strictBase64url } from './base64url.js';
import { EC_CURVES } from './ec-keygen.js';
import { joseToDer } from './ecdsa.js';
import { rsaKeyProblem } from './rsa-key.js';

/**
 * Every JWS algorithm verified: RS256, PS256, ES256, ES384, ES512 and EdDSA (Ed25519). `none`
 * and the HMAC algorithms are never accepted.
 */
export const JWS_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** One of {@link JWS_ALGORITHMS}. */
export type JwsAlgorithm = (typeof JWS_ALGORITHMS)[number];

/** What each algorithm needs: the node:crypto digest, and the key type, curve and signature size. */
interface AlgorithmRule {
  digest: string | null;
  keyType: 'rsa' | 'ec' | 'ed25519';
  /** The EC curve (its JOSE name), for ES*. */
  crv?: string;
  /** Signature length in bytes: IEEE P1363 r || s for ES*, 64 for Ed25519 (RSA: the modulus length). */
  signatureBytes?: number;
  pss?: boolean;
}

const RULES: Readonly<Record<JwsAlgorithm, AlgorithmRule>> = {
  RS256: { digest: 'sha256', keyType: 'rsa' },
  PS256: { digest: 'sha256', keyType: 'rsa', pss: true },
  ES256: { digest: 'sha256', keyType: 'ec', crv: 'P-256', signatureBytes: 64 },
  ES384: { digest: 'sha384', keyType: 'ec', crv: 'P-384', signatureBytes: 96 },
  ES512: { digest: 'sha512', keyType: 'ec', crv: 'P-521', signatureBytes: 132 },
  EdDSA: { digest: null, keyType: 'ed25519', signatureBytes: 64 },
};

/** True when `alg` is one of {@link JWS_ALGORITHMS} (an own name of the table, never `none` or HMAC). */
export function isJwsAlgorithm(alg: unknown): alg is JwsAlgorithm {
  return typeof alg === 'string' && Object.hasOwn(RULES, alg);
}

/**
 * True when `key` is a public key of the type `alg` takes: RSA for RS256 and PS256 passing
 * {@link rsaKeyProblem} (2048 bits or more, a sound exponent, no ROCA fingerprint), EC on the
 * curve for ES256/384/512, Ed25519 for EdDSA.
 */
export function keyFitsAlgorithm(key: KeyObject, alg: JwsAlgorithm): boolean {
  const rule = RULES[alg];
  if (key.type !== 'public' || key.asymmetricKeyType !== rule.keyType) return false;
  if (rule.keyType === 'rsa') return rsaKeyProblem(key) === undefined;
  if (rule.crv !== undefined) return key.asymmetricKeyDetails?.namedCurve === EC_CURVES[rule.crv]?.name;
  return true;
}

/** What `alg` needs of a key, as a phrase for an error message. */
export function keyNeeded(alg: JwsAlgorithm): string {
  const rule = RULES[alg];
  if (rule.keyType === 'rsa') return 'a sound RSA key of at least 2048 bits';
  if (rule.keyType === 'ec') return `an EC key on ${rule.crv}`;
  return 'an Ed25519 key';
}

/**
 * Whether the signature of the compact JWS `token` (three base64url parts) verifies under `alg`
 * with `key`, on node:crypto. The key must fit the algorithm ({@link keyFitsAlgorithm}); the
 * signature must be canonical base64url and exactly the length the algorithm gives (the
 * modulus length for RSA, RFC 8017 8.1.2 and 8.2.2 step 1; twice the field size for ECDSA,
 * RFC 7518 3.4; 64 bytes for Ed25519).
 */
export function verifyCompactJws(token: string, key: KeyObject, alg: JwsAlgorithm): boolean {
  const lastDot = token.lastIndexOf('.');
  if (lastDot < 0) return false;
  let signature: Buffer;
  try {
    signature = strictBase64url(token.slice(lastDot + 1));
  } catch {
    return false;
  }
  return verifySignature(alg, key, Buffer.from(token.slice(0, lastDot), 'ascii'), signature);
}

/**
 * Whether `signature` (in its JWS form) of `signingInput` verifies under `alg` with `key`: the
 * step {@link verifyCompactJws} ends with, for bytes already decoded.
 */
export function verifySignature(alg: JwsAlgorithm, key: KeyObject, signingInput: Buffer, signature: Buffer): boolean {
  if (!isJwsAlgorithm(alg) || !keyFitsAlgorithm(key, alg)) return false;
  const rule = RULES[alg];
  const expected = rule.signatureBytes ?? Math.ceil((key.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
  if (signature.length !== expected) return false;
  try {
    if (rule.keyType === 'ec') {
      // ECDSA: the JWS form is r || s, each exactly the curve's size.
      return verify(rule.digest, signingInput, key, joseToDer(signature, expected / 2));
    }
    if (rule.pss === true) {
      // RSASSA-PSS with SHA-256, MGF1 with SHA-256, a salt of the hash's size (RFC 7518 3.5).
      return verify(
        rule.digest,
        signingInput,
        { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
        signature,
      );
    }
    // RS256: RSASSA-PKCS1-v1_5, node's default padding for an RSA key; EdDSA: no digest.
    return verify(rule.digest, signingInput, key, signature);
  } catch {
    return false;
  }
}
