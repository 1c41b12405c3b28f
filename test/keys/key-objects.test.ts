/**
 * The key objects checked at construction: each missing or wrong member is a TypeError that names
 * it; a decrypter is never given an ephemeral key off its curve; a signer's DER signature is
 * refused with the conversion to use; and the DPoP key stays in memory.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactEncrypt, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import type { JweDecrypter, JwsSigner } from '../../src/client.js';
import { IdClient } from '../../src/client/id-client.js';
import { createClientAssertion } from '../../src/client/client-assertion.js';
import { importIdTokenDecryptionKeys, importSigningKeys } from '../../src/client/fapi-keys.js';
import { decryptIdToken } from '../../src/client/id-token-jwe.js';
import { systemClock } from '../../src/clock.js';
import { testKeyPair } from '../helpers/keys.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecJwk = { ...(ec.publicKey.export({ format: 'jwk' }) as { kty: string; x: string; y: string }), kid: 'ec-1' };
const rsa = testKeyPair('rp');
const rsaJwk = {
  ...(createPublicKey(rsa.publicKeyPem).export({ format: 'jwk' }) as Record<string, string>),
  kid: 'rsa-1',
};

const signer: JwsSigner = { alg: 'ES256', publicJwk: ecJwk, sign: async () => new Uint8Array(64) };
const fapi = (extra: object) =>
  new IdClient({
    clientId: 'c',
    hostname: 'https://id.example',
    redirectUri: 'https://rp.example/cb',
    profile: 'fapi2',
    clientAssertionKey: signer,
    ...extra,
  } as ConstructorParameters<typeof IdClient>[0]);
const base = (privateKey: unknown) =>
  new IdClient({
    clientId: 'c',
    clientSecret: 's',
    hostname: 'https://id.example',
    privateKey,
  } as ConstructorParameters<typeof IdClient>[0]);

describe('a signer given as clientAssertionKey', () => {
  it.each([
    ['no sign function', { alg: 'ES256', publicJwk: ecJwk }, /clientAssertionKey is a signer without a sign function/],
    [
      'no alg',
      { publicJwk: ecJwk, sign: async () => new Uint8Array() },
      /clientAssertionKey\.alg must be one of ES256, PS256, EdDSA/,
    ],
    ['no publicJwk', { alg: 'ES256', sign: async () => new Uint8Array() }, /clientAssertionKey\.publicJwk is required/],
    [
      'no kid',
      { alg: 'ES256', publicJwk: { ...ecJwk, kid: undefined }, sign: async () => new Uint8Array() },
      /publicJwk has no kid/,
    ],
    [
      'a private JWK',
      { alg: 'ES256', publicJwk: { ...ecJwk, d: 'AAAA' }, sign: async () => new Uint8Array() },
      /holds a private member/,
    ],
    [
      'a key of another kind than alg',
      { alg: 'PS256', publicJwk: ecJwk, sign: async () => new Uint8Array() },
      /is not a key for PS256/,
    ],
  ])('refuses %s, naming it', (_what, value, message) => {
    expect(() => fapi({ clientAssertionKey: value })).toThrow(TypeError);
    expect(() => fapi({ clientAssertionKey: value })).toThrow(message);
  });

  it('is published under its kid, with its public members only', () => {
    expect(fapi({}).publicJwks().keys).toEqual([
      { kty: 'EC', crv: 'P-256', x: ecJwk.x, y: ecJwk.y, kid: 'ec-1', use: 'sig', alg: 'ES256' },
    ]);
  });

  it('refuses a DER signature, naming the conversion', async () => {
    const [key] = importSigningKeys({ ...signer, sign: async () => new Uint8Array(71) }, 'clientAssertionKey');
    await expect(createClientAssertion(key!, 'c', 'https://id.example/v2', systemClock)).rejects.toThrow(
      /64 bytes of r \|\| s: convert a DER signature with derToJose/,
    );
  });

  it('is refused as the DPoP key, which stays in memory', () => {
    expect(() => fapi({ dpopKey: signer })).toThrow(/dpopKey must be an EC P-256 private key held in memory/);
  });
});

describe('a decrypter given as privateKey or idTokenDecryptionKey', () => {
  const unwrap = async () => new Uint8Array(32);
  it.each([
    ['an RSA key without unwrap', { publicJwk: rsaJwk }, /privateKey states an RSA key but has no unwrap function/],
    [
      'an EC key (the block key is RSA only)',
      { publicJwk: ecJwk, deriveSharedSecret: unwrap },
      /privateKey\.publicJwk must be an RSA key/,
    ],
    ['a private JWK', { publicJwk: { ...rsaJwk, d: 'AAAA' }, unwrap }, /privateKey\.publicJwk holds a private member/],
  ])('as privateKey, refuses %s, naming it', (_what, value, message) => {
    expect(() => base(value)).toThrow(message);
  });

  it('as idTokenDecryptionKey, refuses an EC key without deriveSharedSecret, naming its index', () => {
    const key: KeyObject = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect(() => fapi({ idTokenDecryptionKey: [key, { publicJwk: ecJwk }] })).toThrow(
      /idTokenDecryptionKey\[1\] states an EC key but has no deriveSharedSecret function/,
    );
  });

  it('mixes with in-process keys in one list and is published beside them', () => {
    const decrypter: JweDecrypter = { publicJwk: { ...ecJwk, kid: 'hsm-enc' }, deriveSharedSecret: unwrap };
    const key = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey;
    const client = fapi({ idTokenDecryptionKey: [decrypter, key] });
    expect(
      client
        .publicJwks()
        .keys.filter((k) => k.use === 'enc')
        .map((k) => [k.kid === 'hsm-enc', k.crv]),
    ).toEqual([
      [true, 'P-256'],
      [false, 'P-384'],
    ]);
  });
});

describe('what a decrypter is given', () => {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicJwk = {
    ...(pair.publicKey.export({ format: 'jwk' }) as { kty: string; x: string; y: string }),
    kid: 'e',
  };

  async function encryptedIdToken(): Promise<string> {
    const inner = await new SignJWT({ sub: 's' })
      .setProtectedHeader({ alg: 'ES256' })
      .sign(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    return new CompactEncrypt(new TextEncoder().encode(inner))
      .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM' })
      .encrypt(pair.publicKey);
  }

  it('never an ephemeral key off its curve: the ID token is refused before the HSM is asked', async () => {
    const calls: unknown[] = [];
    const keys = importIdTokenDecryptionKeys(
      {
        publicJwk,
        deriveSharedSecret: async (epk: unknown) => {
          calls.push(epk);
          return new Uint8Array(32);
        },
      },
      'idTokenDecryptionKey',
    );
    const [header, ...rest] = (await encryptedIdToken()).split('.');
    const parsed = JSON.parse(Buffer.from(header!, 'base64url').toString()) as { epk: { y: string } };
    parsed.epk.y = Buffer.alloc(32, 7).toString('base64url'); // a point not on P-256
    const forged = [Buffer.from(JSON.stringify(parsed)).toString('base64url'), ...rest].join('.');
    await expect(decryptIdToken(forged, keys)).rejects.toMatchObject({ code: 'id_token_decrypt_failed' });
    expect(calls).toEqual([]);
  });

  it('the JWE epk as a public JWK, and a failing HSM is id_token_decrypt_failed with nothing of the key in the message', async () => {
    const calls: Record<string, unknown>[] = [];
    const keys = importIdTokenDecryptionKeys(
      {
        publicJwk,
        deriveSharedSecret: async (epk: Record<string, unknown>) => {
          calls.push(epk);
          throw new Error('CKR_DEVICE_ERROR');
        },
      },
      'idTokenDecryptionKey',
    );
    const err = (await decryptIdToken(await encryptedIdToken(), keys).catch((e: unknown) => e)) as Error;
    expect(err).toMatchObject({ code: 'id_token_decrypt_failed' });
    expect(Object.keys(calls[0]!).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    expect(err.message).not.toContain(publicJwk.x);
  });
});
