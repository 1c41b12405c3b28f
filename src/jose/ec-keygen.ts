/**
 * EC key pairs made as JWKs, for each login's DPoP key and the provider's test kit.
 */
import { createECDH, type ECDH } from 'node:crypto';

/** The members of an EC JWK that node:crypto writes. */
export interface EcJwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  d?: string;
}

/** The OpenSSL name of each curve, and the bytes of one coordinate (RFC 7518 6.2.1.2: exactly this length). */
export const EC_CURVES: Readonly<Record<string, { name: string; bytes: number }>> = {
  'P-256': { name: 'prime256v1', bytes: 32 },
  'P-384': { name: 'secp384r1', bytes: 48 },
  'P-521': { name: 'secp521r1', bytes: 66 },
};

const ecGenerators = new Map<string, ECDH>();

/**
 * A new EC key pair as private and public JWKs (`kty`, `x`, `y`, `crv`, and `d` in the private
 * one), made by node:crypto's `createECDH`: the raw scalar and point, no key object at all.
 * Two reasons. A key object made by `generateKeyPairSync` must never be exported: on Node 20 a
 * garbage collection during that export can deadlock the process (the key-generation job's
 * cleanup waits for the lock the export holds); and asking `generateKeyPairSync` to write JWKs
 * instead costs about three times what `createECDH` does (figures in docs/internals.md).
 * `d` is left-padded to the curve's size (RFC 7518 6.2.2.1), which `getPrivateKey` does not do.
 */
export function generateEcJwkPair(namedCurve: 'P-256' | 'P-384' | 'P-521'): { privateJwk: EcJwk; publicJwk: EcJwk } {
  const curve = EC_CURVES[namedCurve];
  // One generator per curve: each generateKeys() replaces its key pair with a new one, and
  // setting up the curve costs as much as the generation itself (one per login start). It holds
  // the last pair until the next call, as the login's session and key object hold it anyway.
  let ecdh = ecGenerators.get(namedCurve);
  if (ecdh === undefined) ecGenerators.set(namedCurve, (ecdh = createECDH(curve.name)));
  // The uncompressed point: 04 || x || y, each coordinate at its full size.
  const point = ecdh.generateKeys();
  const scalar = ecdh.getPrivateKey();
  const x = point.subarray(1, 1 + curve.bytes).toString('base64url');
  const y = point.subarray(1 + curve.bytes).toString('base64url');
  const padded =
    scalar.length === curve.bytes ? scalar : Buffer.concat([Buffer.alloc(curve.bytes - scalar.length), scalar]);
  const d = padded.toString('base64url');
  padded.fill(0);
  scalar.fill(0);
  return { privateJwk: { kty: 'EC', x, y, crv: namedCurve, d }, publicJwk: { kty: 'EC', x, y, crv: namedCurve } };
}
