import { createPrivateKey, generateKeyPairSync, privateDecrypt, publicEncrypt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { convertPkcs1ToPkcs8, importRsaPrivateKey, importRsaPublicKey, normalizePem } from '../../src/keys.js';
import { testKeyPair } from '../helpers/keys.js';

const pair = testKeyPair('rp');
const bodyLine = (pem: string) => pem.split('\n')[1]!;

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error('expected a TypeError');
}

describe('convertPkcs1ToPkcs8', () => {
  it('converts a PKCS#1 key to the same key in PKCS#8', () => {
    const pkcs8 = convertPkcs1ToPkcs8(pair.privateKeyPkcs1Pem);
    expect(pkcs8.startsWith('-----BEGIN PRIVATE KEY-----\n')).toBe(true);
    expect(pkcs8).toBe(pair.privateKeyPem);
    const secret = Buffer.from('round trip');
    const sealed = publicEncrypt(pair.publicKeyPem, secret);
    expect(privateDecrypt(createPrivateKey(pkcs8), sealed)).toEqual(secret);
  });

  it('accepts literal \\n escapes and surrounding quotes, as from an environment variable', () => {
    const escaped = `"${pair.privateKeyPkcs1Pem.trim().replace(/\n/g, '\\n')}"`;
    expect(convertPkcs1ToPkcs8(escaped)).toBe(pair.privateKeyPem);
  });

  it('accepts CRLF line endings', () => {
    expect(convertPkcs1ToPkcs8(pair.privateKeyPkcs1Pem.replace(/\n/g, '\r\n'))).toBe(pair.privateKeyPem);
  });

  it('refuses a PKCS#8 key and says what it expected, without echoing the key', () => {
    const message = messageOf(() => convertPkcs1ToPkcs8(pair.privateKeyPem));
    expect(message).toMatch(/PKCS#1/);
    expect(message).toContain('"PRIVATE KEY"');
    expect(message).not.toContain(bodyLine(pair.privateKeyPem));
  });

  it('refuses a public key', () => {
    expect(messageOf(() => convertPkcs1ToPkcs8(pair.publicKeyPem))).toContain('"PUBLIC KEY"');
  });

  it('refuses text that is not PEM', () => {
    expect(messageOf(() => convertPkcs1ToPkcs8('hello'))).toContain('not PEM');
  });

  it('refuses a non-string', () => {
    expect(messageOf(() => convertPkcs1ToPkcs8(42 as unknown as string))).toMatch(/PEM string/);
  });

  it('refuses a corrupted PKCS#1 block without echoing it', () => {
    const broken = pair.privateKeyPkcs1Pem.replace(bodyLine(pair.privateKeyPkcs1Pem), 'A'.repeat(64));
    const message = messageOf(() => convertPkcs1ToPkcs8(broken));
    expect(message).toMatch(/not a readable PKCS#1/);
    expect(message).not.toContain(bodyLine(pair.privateKeyPkcs1Pem).slice(0, 20));
  });

  it('refuses an EC key in an RSA PRIVATE KEY wrapper', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'sec1' })
      .toString()
      .replace(/EC PRIVATE KEY/g, 'RSA PRIVATE KEY');
    expect(messageOf(() => convertPkcs1ToPkcs8(ec))).toMatch(/not a readable PKCS#1/);
  });
});

describe('importRsaPrivateKey', () => {
  it('imports PKCS#1 and PKCS#8 to the same key', () => {
    const a = importRsaPrivateKey(pair.privateKeyPkcs1Pem);
    const b = importRsaPrivateKey(pair.privateKeyPem);
    expect(a.equals(b)).toBe(true);
  });

  it('refuses an EC private key with a clear error', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    const message = messageOf(() => importRsaPrivateKey(ec, 'privateKey'));
    expect(message).toBe('privateKey must be an RSA key; got a ec key');
  });

  it('refuses an RSA key shorter than 2048 bits', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ format: 'pem', type: 'pkcs8' })
      .toString();
    expect(messageOf(() => importRsaPrivateKey(small))).toMatch(/at least 2048 bits; got 1024/);
  });

  it('refuses a public key given as a private key', () => {
    expect(messageOf(() => importRsaPrivateKey(pair.publicKeyPem))).toContain('"PUBLIC KEY"');
  });

  it('refuses an empty string', () => {
    expect(messageOf(() => importRsaPrivateKey('  '))).toMatch(/must be a PEM string/);
  });
});

describe('importRsaPublicKey and normalizePem', () => {
  it('imports an SPKI PEM and a JWK', () => {
    const fromPem = importRsaPublicKey(pair.publicKeyPem);
    const fromJwk = importRsaPublicKey(fromPem.export({ format: 'jwk' }) as { kty: string });
    expect(fromPem.equals(fromJwk)).toBe(true);
  });

  it('refuses a private key given as a public key', () => {
    expect(messageOf(() => importRsaPublicKey(pair.privateKeyPem))).toContain('"PRIVATE KEY"');
  });

  it('turns escaped newlines back into line breaks and ends with one newline', () => {
    expect(normalizePem("'a\\nb\\r\\nc'")).toBe('a\nb\nc\n');
  });
});
