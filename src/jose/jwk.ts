/**
 * A provider's public signing keys as JWKs (RFC 7517), read strictly: only the public members of
 * RSA, EC (P-256/384/521) and OKP (Ed25519) keys reach node:crypto, and every RSA key passes
 * {@link rsaKeyProblem}.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { rsaKeyProblem } from './rsa-key.js';
import { PUBLIC_MEMBERS } from './thumbprint.js';
import { EC_CURVES } from './ec-keygen.js';

/** A usable verification key, its id and the algorithm its JWK names (if any). */
export interface VerificationJwk {
  kid: string | undefined;
  /** The JWK's `alg`; undefined when the provider states none. */
  alg: string | undefined;
  key: KeyObject;
}

/** The curves accepted per key type: those of ES256/ES384/ES512 and of EdDSA (Ed25519). */
const CURVES: Readonly<Record<string, readonly string[]>> = { EC: Object.keys(EC_CURVES), OKP: ['Ed25519'] };

/**
 * An RSA, EC (P-256/384/521) or Ed25519 public key meant for signatures, or undefined for any
 * other entry (skipped): an encryption key, a private key, another curve, an RSA key that
 * {@link rsaKeyProblem} refuses (under 2048 bits, an unsound exponent, the ROCA fingerprint).
 */
export function importVerificationJwk(entry: unknown): VerificationJwk | undefined {
  if (typeof entry !== 'object' || entry === null) return undefined;
  const jwk = entry as JWK & { key_ops?: unknown };
  const members = typeof jwk.kty === 'string' ? PUBLIC_MEMBERS[jwk.kty] : undefined;
  if (members === undefined || !Object.hasOwn(PUBLIC_MEMBERS, jwk.kty as string)) return undefined;
  const publicJwk: Record<string, string> = { kty: jwk.kty as string };
  for (const m of members) {
    const value = (jwk as Record<string, unknown>)[m];
    if (typeof value !== 'string') return undefined;
    publicJwk[m] = value;
  }
  const curves = CURVES[jwk.kty as string];
  if (curves !== undefined && !curves.includes(publicJwk.crv as string)) return undefined;
  if (jwk.d !== undefined) return undefined; // a private key has no business in a public key set
  if (jwk.use !== undefined && jwk.use !== 'sig') return undefined;
  if (jwk.alg !== undefined && typeof jwk.alg !== 'string') return undefined;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes('verify'))) return undefined;
  if (jwk.kid !== undefined && typeof jwk.kid !== 'string') return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: publicJwk, format: 'jwk' });
  } catch {
    return undefined;
  }
  if (key.asymmetricKeyType === 'rsa' && rsaKeyProblem(key) !== undefined) return undefined;
  return { kid: jwk.kid, alg: jwk.alg, key };
}
