/**
 * A login's DPoP key is made with node:crypto's `createECDH` (its raw scalar and point written as
 * a JWK), and the proofs and client assertions are signed under a header encoded once per key.
 * jose is the reference: it imports the JWKs, verifies the tokens against the public JWK and
 * computes the thumbprint; node:crypto's own JWK export of the imported key must give back the
 * same members, including a private scalar whose first byte is zero (left-padded to the curve's
 * size, RFC 7518 6.2.2.1, which `ECDH.getPrivateKey` does not do).
 */
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { createClientAssertion } from '../../src/client/client-assertion.js';
import { createDpopProof, generateDpopKey, restoreDpopKey } from '../../src/client/dpop.js';
import { importSigningKeys } from '../../src/client/fapi-keys.js';
import { generateEcJwkPair } from '../../src/keys.js';

const SIZES = { 'P-256': 32, 'P-384': 48, 'P-521': 66 } as const;
const now = 1_800_000_000_000;
const clock = () => now;
const url = new URL('https://id.example/v2/oauth/token');

describe('EC key pairs made with createECDH, against node:crypto and jose', () => {
  it.each(Object.keys(SIZES) as (keyof typeof SIZES)[])(
    '%s: the JWK is the key node:crypto and jose import, every member at its full size',
    async (crv) => {
      for (let i = 0; i < 20; i++) {
        const { privateJwk, publicJwk } = generateEcJwkPair(crv);
        expect(publicJwk).toEqual({ kty: 'EC', crv, x: privateJwk.x, y: privateJwk.y });
        const imported = createPrivateKey({ key: { ...privateJwk }, format: 'jwk' });
        // node:crypto writes back what was given: the point belongs to the scalar.
        expect(imported.export({ format: 'jwk' })).toEqual(privateJwk);
        expect(createPublicKey(imported).export({ format: 'jwk' })).toEqual(publicJwk);
        for (const m of ['x', 'y', 'd'] as const)
          expect(Buffer.from(privateJwk[m]!, 'base64url')).toHaveLength(SIZES[crv]);
        await expect(
          importJWK({ ...privateJwk }, crv === 'P-256' ? 'ES256' : crv === 'P-384' ? 'ES384' : 'ES512'),
        ).resolves.toBeDefined();
      }
    },
  );

  it('each call makes a new key pair, though the curve generator is kept between calls', () => {
    const pairs = Array.from({ length: 200 }, () => generateEcJwkPair('P-256').privateJwk);
    expect(new Set(pairs.map((p) => p.d)).size).toBe(200);
    expect(new Set(pairs.map((p) => p.x)).size).toBe(200);
    // An earlier pair still holds together after later ones were made: its point is its scalar's.
    const { d: _d, ...publicJwk } = pairs[0]!;
    const data = Buffer.from('proof');
    const signature = sign('sha256', data, createPrivateKey({ key: { ...pairs[0]! }, format: 'jwk' }));
    expect(verify('sha256', data, createPublicKey({ key: publicJwk, format: 'jwk' }), signature)).toBe(true);
  });

  it('P-256: a private scalar with a leading zero byte is padded, and node:crypto exports the same d', () => {
    // One scalar in 256 starts with a zero byte; find three.
    let found = 0;
    for (let i = 0; i < 20_000 && found < 3; i++) {
      const { privateJwk } = generateEcJwkPair('P-256');
      const d = Buffer.from(privateJwk.d!, 'base64url');
      expect(d).toHaveLength(32);
      if (d[0] !== 0) continue;
      found += 1;
      const imported = createPrivateKey({ key: { ...privateJwk }, format: 'jwk' });
      expect(imported.export({ format: 'jwk' })).toEqual(privateJwk);
    }
    expect(found).toBe(3);
  });
});

describe('DPoP proofs and client assertions under a header encoded once per key, against jose', () => {
  it('every proof of a login key verifies with jose under its public JWK; dpop_jkt is jose thumbprint; the restored key signs the same header', async () => {
    const { key, stored } = generateDpopKey();
    const proofs = [
      createDpopProof(key, { htm: 'POST', url, clock }),
      createDpopProof(key, { htm: 'POST', url, clock, nonce: 'n-1' }),
      createDpopProof(key, { htm: 'GET', url, clock, accessToken: 'access-token' }),
    ];
    const restored = restoreDpopKey(stored);
    proofs.push(createDpopProof(restored, { htm: 'GET', url, clock }));
    const jwk = { kty: 'EC', crv: 'P-256', x: stored.x, y: stored.y };
    expect(key.jkt).toBe(await calculateJwkThumbprint(jwk));
    expect(restored.jkt).toBe(key.jkt);
    const publicKey = await importJWK(jwk, 'ES256');
    const jtis = new Set<unknown>();
    for (const proof of proofs) {
      expect(decodeProtectedHeader(proof)).toEqual({ typ: 'dpop+jwt', jwk, alg: 'ES256' });
      const { payload } = await jwtVerify(proof, publicKey, {
        typ: 'dpop+jwt',
        algorithms: ['ES256'],
        currentDate: new Date(now),
      });
      jtis.add(payload.jti);
    }
    expect(jtis.size).toBe(proofs.length);
    // Another login's key gets its own header, never the first one's.
    const other = generateDpopKey();
    const otherProof = createDpopProof(other.key, { htm: 'POST', url, clock });
    expect(decodeProtectedHeader(otherProof).jwk).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: other.stored.x,
      y: other.stored.y,
    });
    await expect(compactVerify(otherProof, publicKey)).rejects.toThrow();
  });

  it('the callback in the process that started the login takes its key object once; otherwise the kept key is imported', async () => {
    const { key, stored } = generateDpopKey();
    // Only the very key kept finds the started login's key object, and only once.
    // A kept key with another private scalar: Node 20 imports the mismatched pair, Node 24 refuses
    // it as an invalid JWK; either way it never finds the started login's key object.
    const changed = generateDpopKey().stored;
    let mismatched: unknown;
    try {
      mismatched = restoreDpopKey({ ...stored, d: changed.d });
    } catch (err) {
      expect((err as Error).message).toMatch(/Invalid JWK EC key/);
    }
    expect(mismatched).not.toBe(key);
    expect(restoreDpopKey(stored)).toBe(key);
    const imported = restoreDpopKey(stored);
    expect(imported).not.toBe(key);
    expect(imported.jkt).toBe(key.jkt);
    const jwk = { kty: 'EC', crv: 'P-256', x: stored.x, y: stored.y };
    const { payload } = await jwtVerify(
      createDpopProof(imported, { htm: 'POST', url, clock }),
      await importJWK(jwk, 'ES256'),
      { typ: 'dpop+jwt', algorithms: ['ES256'], currentDate: new Date(now) },
    );
    expect(payload.htm).toBe('POST');
  });

  it('assertions of two keys, alternately: each header names its own kid and verifies with jose under its own key only', async () => {
    const keys = importSigningKeys(
      [0, 1].map((i) => ({ ...generateEcJwkPair('P-256').privateJwk, kid: `k-${i}` })),
      'clientAssertionKey',
    );
    for (let round = 0; round < 2; round++) {
      for (const [i, signing] of keys.entries()) {
        const token = await createClientAssertion(signing, 'client', 'https://id.example/v2', clock);
        expect(decodeProtectedHeader(token)).toEqual({ typ: 'JWT', kid: `k-${i}`, alg: 'ES256' });
        await expect(
          jwtVerify(token, createPublicKey(signing.key), {
            audience: 'https://id.example/v2',
            issuer: 'client',
            currentDate: new Date(now),
          }),
        ).resolves.toBeDefined();
        await expect(compactVerify(token, createPublicKey(keys[1 - i]!.key))).rejects.toThrow();
      }
    }
  });
});
