/**
 * Encrypted ID tokens are decrypted with node:crypto (ECDH-ES+A256KW and RSA-OAEP-256, A256GCM);
 * jose 6's compactDecrypt, pinned to the same algorithms, is the reference. Over one corpus of
 * good and hostile tokens (tampered parts, another key, an ephemeral key on another curve or off
 * the curve, apu/apv, a wrapped key of the wrong size, crit, zip), both accept the same tokens
 * with the same plaintext and refuse the same ones.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactEncrypt, compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import { importIdTokenDecryptionKeys } from '../../src/client/fapi-keys.js';
import { decryptIdToken } from '../../src/client/id-token-jwe.js';
import { testKeyPair } from '../helpers/keys.js';

const payload = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = testKeyPair('rp');
const rsaPublic = createPublicKey(rsa.publicKeyPem);

function seg(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
function withHeader(jwe: string, edit: (h: Record<string, unknown>) => void): string {
  const parts = jwe.split('.');
  const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as Record<string, unknown>;
  edit(header);
  parts[0] = seg(header);
  return parts.join('.');
}
function flip(jwe: string, index: number): string {
  const parts = jwe.split('.');
  const bytes = Buffer.from(parts[index]!, 'base64url');
  if (bytes.length > 0) bytes[0] = bytes[0]! ^ 1;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

async function corpus(): Promise<[string, string, KeyObject][]> {
  const encEc = (h: Record<string, unknown> = {}, key: KeyObject = ec.publicKey) =>
    new CompactEncrypt(new TextEncoder().encode(payload)).setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', ...h }).encrypt(key);
  const good = await encEc();
  const goodRsa = await new CompactEncrypt(new TextEncoder().encode(payload)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' }).encrypt(rsaPublic);
  const withApu = await new CompactEncrypt(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM' })
    .setKeyManagementParameters({ apu: new TextEncoder().encode('Alice'), apv: new TextEncoder().encode('Bob') })
    .encrypt(ec.publicKey);
  const p384 = await encEc({}, ec384.publicKey);
  const offCurve = withHeader(good, (h) => {
    const epk = h.epk as Record<string, string>;
    h.epk = { ...epk, y: epk.x };
  });
  return [
    ['good ECDH-ES+A256KW', good, ec.privateKey],
    ['good RSA-OAEP-256', goodRsa, createPrivateRsa()],
    ['apu and apv', withApu, ec.privateKey],
    ['another key', good, other.privateKey],
    ['tampered wrapped key', flip(good, 1), ec.privateKey],
    ['tampered iv', flip(good, 2), ec.privateKey],
    ['tampered ciphertext', flip(good, 3), ec.privateKey],
    ['tampered tag', flip(good, 4), ec.privateKey],
    ['tampered header (aad)', withHeader(good, (h) => { h.kid = 'x'; }), ec.privateKey],
    ['epk on P-384 for a P-256 key', withHeader(good, (h) => { h.epk = (JSON.parse(Buffer.from(p384.split('.')[0]!, 'base64url').toString()) as { epk: unknown }).epk; }), ec.privateKey],
    ['epk off the curve', offCurve, ec.privateKey],
    ['epk missing', withHeader(good, (h) => { delete h.epk; }), ec.privateKey],
    ['epk with a private member', withHeader(good, (h) => { h.epk = { ...(h.epk as object), d: 'AAAA' }; }), ec.privateKey],
    ['crit', withHeader(good, (h) => { h.crit = ['exp']; h.exp = 1; }), ec.privateKey],
    ['zip', withHeader(good, (h) => { h.zip = 'DEF'; }), ec.privateKey],
    ['wrapped key cut short', (() => { const p = good.split('.'); p[1] = p[1]!.slice(0, 20); return p.join('.'); })(), ec.privateKey],
    ['rsa token, ec key', goodRsa, ec.privateKey],
  ];
}

function createPrivateRsa(): KeyObject {
  return importIdTokenDecryptionKeys(rsa.privateKeyPem, 'k')[0]!.key;
}

async function jose(token: string, key: KeyObject): Promise<string | 'refused'> {
  try {
    const { plaintext } = await compactDecrypt(token, key, { keyManagementAlgorithms: ['ECDH-ES+A256KW', 'RSA-OAEP-256'], contentEncryptionAlgorithms: ['A256GCM'] });
    return new TextDecoder().decode(plaintext);
  } catch {
    return 'refused';
  }
}

async function ours(token: string, key: KeyObject): Promise<string | 'refused'> {
  try {
    return await decryptIdToken(token, importIdTokenDecryptionKeys(key, 'k'));
  } catch {
    return 'refused';
  }
}

describe('encrypted ID tokens: node:crypto against jose 6', () => {
  it('makes the same decision as jose on every token of the corpus', async () => {
    const cases = await corpus();
    const accepted: string[] = [];
    for (const [name, token, key] of cases) {
      const reference = await jose(token, key);
      expect(await ours(token, key), name).toBe(reference);
      if (reference !== 'refused') accepted.push(name);
    }
    expect(accepted).toEqual(['good ECDH-ES+A256KW', 'good RSA-OAEP-256', 'apu and apv']);
  });
});
