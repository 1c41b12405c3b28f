/**
 * ES256 signing and verifying run on the key object alone (DER signatures) and convert to and from
 * the JWS form r || s here (src/jose/ecdsa.ts). node:crypto's own `ieee-p1363` encoding is the
 * reference: every converted signature verifies under it, and every signature it makes converts
 * to DER that verifies, on each curve, over enough signatures to meet integers with their high
 * bit set and with leading zero bytes (where DER and the JWS form differ most).
 */
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derToJose, joseToDer } from '../../src/jose/ecdsa.js';
import { generateEcJwkPair } from '../../src/keys.js';

const CURVES = [
  { crv: 'P-256', size: 32, digest: 'sha256' },
  { crv: 'P-384', size: 48, digest: 'sha384' },
  { crv: 'P-521', size: 66, digest: 'sha512' },
] as const;

describe('ECDSA signatures between DER and the JWS form, against node:crypto', () => {
  it.each(CURVES)('$crv: both ways, every signature verifies in the other form', ({ crv, size, digest }) => {
    const { privateJwk, publicJwk } = generateEcJwkPair(crv);
    const privateKey = createPrivateKey({ key: { ...privateJwk }, format: 'jwk' });
    const publicKey = createPublicKey({ key: { ...publicJwk }, format: 'jwk' });
    const p1363 = { key: publicKey, dsaEncoding: 'ieee-p1363' } as const;
    let leadingZero = 0;
    let highBit = 0;
    // At least 200 signatures, and on until integers of both kinds have been met (one in 256
    // starts with a zero byte on P-256 and P-384).
    for (let i = 0; i < 200 || (leadingZero < 2 && i < 20_000); i++) {
      const data = Buffer.from(`message ${i}`);
      const der = sign(digest, data, privateKey);
      const jose = derToJose(der, size);
      expect(jose).toHaveLength(2 * size);
      expect(verify(digest, data, p1363, jose)).toBe(true);
      // Canonical DER comes back byte for byte.
      expect(joseToDer(jose, size).equals(der)).toBe(true);
      const native = sign(digest, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      expect(verify(digest, data, publicKey, joseToDer(native, size))).toBe(true);
      for (const half of [jose.subarray(0, size), jose.subarray(size)]) {
        if (half[0] === 0) leadingZero += 1;
        if ((half[0]! & 0x80) !== 0) highBit += 1;
      }
    }
    expect(leadingZero).toBeGreaterThanOrEqual(2);
    // P-521's integers are 521 bits in 66 bytes: the first byte is 0 or 1, never a high bit.
    if (crv !== 'P-521') expect(highBit).toBeGreaterThan(100);
  });

  it('a changed signature still fails to verify after conversion, and zero is no signature', () => {
    const { privateJwk, publicJwk } = generateEcJwkPair('P-256');
    const privateKey = createPrivateKey({ key: { ...privateJwk }, format: 'jwk' });
    const publicKey = createPublicKey({ key: { ...publicJwk }, format: 'jwk' });
    const data = Buffer.from('proof');
    const jose = derToJose(sign('sha256', data, privateKey), 32);
    const changed = Buffer.from(jose);
    changed[40]! ^= 1;
    expect(verify('sha256', data, publicKey, joseToDer(changed, 32))).toBe(false);
    expect(verify('sha256', data, publicKey, joseToDer(Buffer.alloc(64), 32))).toBe(false);
  });

  it('refuses what is not a DER signature of the curve', () => {
    const { privateJwk } = generateEcJwkPair('P-384');
    const der = sign('sha384', Buffer.from('x'), createPrivateKey({ key: { ...privateJwk }, format: 'jwk' }));
    for (const bad of [
      Buffer.alloc(0),
      Buffer.from([0x31, 0x00]),
      der.subarray(0, der.length - 1),
      Buffer.concat([der, Buffer.from([0])]),
      Buffer.from([0x30, 0x06, 0x02, 0x01, 0x01, 0x03, 0x01, 0x01]),
    ]) {
      expect(() => derToJose(bad, 48)).toThrow('not a DER ECDSA signature of this curve');
    }
    // A P-384 signature has integers too long for P-256.
    expect(() => derToJose(der, 32)).toThrow('not a DER ECDSA signature of this curve');
  });
});
