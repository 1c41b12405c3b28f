import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createProvider,
  DEFAULT_PERSONAS,
  isValidNric,
  nricCheckLetter,
  type ProviderOptions,
} from '../../src/provider/index.js';
import { pooledKeyObjects, testKeyPair } from '../helpers/keys.js';

const publicKey = testKeyPair('rp').publicKeyPem;
const client = { clientId: 'a', clientSecret: 'secret-of-a', redirectUris: ['https://rp.example/cb'], publicKey };

function mistakesOf(options: unknown): string {
  try {
    createProvider(options as ProviderOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error('createProvider accepted the options');
}

describe('configuration is refused at start with one clear message per mistake', () => {
  it('lists every mistake of a bad config together', () => {
    const message = mistakesOf({
      baseUrl: 'http://127.0.0.1:4000/some/path',
      clients: [
        { ...client, redirectUris: ['http://rp.example/cb'] },
        { ...client, publicKey: '-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----' },
        { ...client, clientId: 'b', clientSecret: 'super-secret-value', publicKey: 'not a key', colour: 'blue' },
      ],
      autoApprove: 'nobody',
      ttl: { code: 0 },
      subjectSecret: 'short',
    });
    expect(message).toMatch(/has 9 mistakes/);
    expect(message).toMatch(/baseUrl .* must be an origin only/);
    expect(message).toMatch(
      /clients\[0\]\.redirectUris\[0\] "http:\/\/rp\.example\/cb" uses http on a non-loopback host/,
    );
    expect(message).toMatch(/clients\[1\]\.clientId "a" is a duplicate/);
    expect(message).toMatch(/clients\[1\]\.publicKey must be a PEM RSA public key .* got a "CERTIFICATE" PEM block/);
    expect(message).toMatch(/clients\[2\] has an unknown option "colour"/);
    expect(message).toMatch(/clients\[2\]\.publicKey must be a PEM RSA public key .*not PEM/);
    expect(message).toMatch(/autoApprove "nobody" is not a persona id/);
    expect(message).toMatch(/ttl\.code must be a whole number/);
    expect(message).toMatch(/subjectSecret must be a string of at least 16 characters/);
    expect(message.split('\n').filter((l) => l.startsWith('  - '))).toHaveLength(9);
    expect(message).not.toContain('super-secret-value');
    expect(message).not.toMatch(/short/);
  });

  it('requires baseUrl and at least one client', () => {
    const message = mistakesOf({});
    expect(message).toMatch(/baseUrl is required/);
    expect(message).toMatch(/clients must be a non-empty array/);
  });

  it('refuses an RSA key under 2048 bits, a subjectSecret under 16 characters and an unreadable signing key file', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString();
    const message = mistakesOf({
      baseUrl: 'http://127.0.0.1:1',
      clients: [{ ...client, publicKey: small }],
      subjectSecret: 'x'.repeat(15),
      signingKey: { file: '/nonexistent/key.pem' },
    });
    expect(message).toMatch(/at least 2048 bits/);
    expect(message).toMatch(/subjectSecret must be a string of at least 16/);
    expect(message).toMatch(/signingKey file "\/nonexistent\/key\.pem" cannot be read/);
  });

  it('refuses personas with a wrong check letter, an impossible date or a duplicate id', () => {
    const good = DEFAULT_PERSONAS[0]!;
    const message = mistakesOf({
      baseUrl: 'http://127.0.0.1:1',
      clients: [client],
      personas: [
        good,
        { ...good, 'profile.nric_number': 'S1234567A' },
        { ...good, id: 'x', 'profile.passport_expiry_date': '2030-02-30' },
      ],
    });
    expect(message).toMatch(/personas\[1\]\.id "ada" is a duplicate/);
    expect(message).toMatch(/personas\[1\]\["profile\.nric_number"\] must be .* check letter/);
    expect(message).toMatch(/personas\[2\]\["profile\.passport_expiry_date"\] must be a real date/);
  });

  it('accepts http redirect URIs on loopback hosts, PKCS#1 and JWK public keys, and a signing key from a file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nd-id-'));
    const keyFile = join(dir, 'signing.pem');
    writeFileSync(keyFile, testKeyPair('signing').privateKeyPkcs1Pem);
    const pkcs1 = pooledKeyObjects().publicKey;
    const provider = createProvider({
      baseUrl: 'http://localhost:4000/',
      clients: [
        { ...client, redirectUris: ['http://localhost:3000/cb', 'http://127.0.0.1:3000/cb', 'http://[::1]:3000/cb'] },
        { ...client, clientId: 'b', publicKey: pkcs1.export({ format: 'pem', type: 'pkcs1' }).toString() },
        { ...client, clientId: 'c', publicKey: pkcs1.export({ format: 'jwk' }) },
      ],
      signingKey: { file: keyFile },
    });
    expect(provider.baseUrl).toBe('http://localhost:4000');
    expect(provider.issuer).toBe('http://localhost:4000/v2');
  });
});

describe('default personas', () => {
  it('are at least five fictional people with valid identity numbers and YYYY-MM-DD dates', () => {
    expect(DEFAULT_PERSONAS.length).toBeGreaterThanOrEqual(5);
    expect(new Set(DEFAULT_PERSONAS.map((p) => p.id)).size).toBe(DEFAULT_PERSONAS.length);
    for (const p of DEFAULT_PERSONAS) {
      expect(isValidNric(p['profile.nric_number'])).toBe(true);
      expect(p['profile.passport_expiry_date']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    }
    expect(new Set(DEFAULT_PERSONAS.map((p) => p['profile.nric_number'][0]))).toEqual(
      new Set(['S', 'T', 'F', 'G', 'M']),
    );
  });

  it('compute check letters as the published examples do', () => {
    expect(nricCheckLetter('S', '1234567')).toBe('D');
    expect(isValidNric('S1234567D')).toBe(true);
    expect(isValidNric('T1234567J')).toBe(true);
    expect(isValidNric('F1234567N')).toBe(true);
    expect(isValidNric('G1234567X')).toBe(true);
    expect(isValidNric('M1234567K')).toBe(true);
    expect(isValidNric('S1234567A')).toBe(false);
    expect(isValidNric('X1234567D')).toBe(false);
  });
});
