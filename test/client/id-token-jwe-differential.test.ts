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
    new CompactEncrypt(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM', ...h })
      .encrypt(key);
  const good = await encEc();
  const goodRsa = await new CompactEncrypt(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
    .encrypt(rsaPublic);
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
    [
      'tampered header (aad)',
      withHeader(good, (h) => {
        h.kid = 'x';
      }),
      ec.privateKey,
    ],
    [
      'epk on P-384 for a P-256 key',
      withHeader(good, (h) => {
        h.epk = (JSON.parse(Buffer.from(p384.split('.')[0]!, 'base64url').toString()) as { epk: unknown }).epk;
      }),
      ec.privateKey,
    ],
    ['epk off the curve', offCurve, ec.privateKey],
    [
      'epk missing',
      withHeader(good, (h) => {
        delete h.epk;
      }),
      ec.privateKey,
    ],
    [
      'epk with a private member',
      withHeader(good, (h) => {
        h.epk = { ...(h.epk as object), d: 'AAAA' };
      }),
      ec.privateKey,
    ],
    [
      'crit',
      withHeader(good, (h) => {
        h.crit = ['exp'];
        h.exp = 1;
      }),
      ec.privateKey,
    ],
    [
      'zip',
      withHeader(good, (h) => {
        h.zip = 'DEF';
      }),
      ec.privateKey,
    ],
    [
      'wrapped key cut short',
      (() => {
        const p = good.split('.');
        p[1] = p[1]!.slice(0, 20);
        return p.join('.');
      })(),
      ec.privateKey,
    ],
    ['rsa token, ec key', goodRsa, ec.privateKey],
  ];
}

function createPrivateRsa(): KeyObject {
  return importIdTokenDecryptionKeys(rsa.privateKeyPem, 'k')[0]!.key;
}

async function jose(token: string, key: KeyObject): Promise<string | 'refused'> {
  try {
    const { plaintext } = await compactDecrypt(token, key, {
      keyManagementAlgorithms: ['ECDH-ES+A256KW', 'RSA-OAEP-256'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
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

/**
 * Every key management and content encryption accepted for ID tokens: ECDH-ES (direct),
 * ECDH-ES+A128KW/A192KW/A256KW on P-256, P-384 and P-521, RSA-OAEP-256, each with the AES-GCM
 * and AES-CBC-HMAC contents; per pair, the valid token and its hostile variants.
 */
const ec521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const ALL_ALGS = ['ECDH-ES', 'ECDH-ES+A128KW', 'ECDH-ES+A192KW', 'ECDH-ES+A256KW', 'RSA-OAEP-256'];
const ALL_ENCS = ['A128GCM', 'A192GCM', 'A256GCM', 'A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512'];

async function joseAll(token: string, key: KeyObject): Promise<string | 'refused'> {
  try {
    const { plaintext } = await compactDecrypt(token, key, {
      keyManagementAlgorithms: ALL_ALGS,
      contentEncryptionAlgorithms: ALL_ENCS,
    });
    return new TextDecoder().decode(plaintext);
  } catch {
    return 'refused';
  }
}

async function pairCorpus(
  alg: string,
  enc: string,
  pair: { publicKey: KeyObject; privateKey: KeyObject },
): Promise<[string, string, KeyObject][]> {
  const good = await new CompactEncrypt(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg, enc })
    .encrypt(pair.publicKey);
  const parts = good.split('.');
  const withPart = (i: number, value: string) => parts.map((p, j) => (j === i ? value : p)).join('.');
  const cases: [string, string, KeyObject][] = [
    ['valid', good, pair.privateKey],
    ['tampered iv', flip(good, 2), pair.privateKey],
    ['tampered ciphertext', flip(good, 3), pair.privateKey],
    ['tampered tag', flip(good, 4), pair.privateKey],
    [
      'tag cut by one byte',
      withPart(4, Buffer.from(parts[4]!, 'base64url').subarray(1).toString('base64url')),
      pair.privateKey,
    ],
    [
      'header changed (aad)',
      withHeader(good, (h) => {
        h.kid = 'x';
      }),
      pair.privateKey,
    ],
    [
      'enc relabelled',
      withHeader(good, (h) => {
        h.enc = enc === 'A256GCM' ? 'A128GCM' : 'A256GCM';
      }),
      pair.privateKey,
    ],
  ];
  if (alg.startsWith('ECDH-ES')) {
    const other = generateKeyPairSync('ec', { namedCurve: pair.privateKey.asymmetricKeyDetails!.namedCurve! });
    cases.push(['another key on the curve', good, other.privateKey]);
    cases.push([
      'apu changed',
      withHeader(good, (h) => {
        h.apu = 'QWxpY2U';
      }),
      pair.privateKey,
    ]);
    if (alg === 'ECDH-ES') {
      cases.push([
        'an encrypted key where none belongs',
        withPart(1, Buffer.alloc(40, 1).toString('base64url')),
        pair.privateKey,
      ]);
    } else {
      cases.push(['tampered wrapped key', flip(good, 1), pair.privateKey]);
      cases.push([
        'wrapped key cut by 8 bytes',
        withPart(1, Buffer.from(parts[1]!, 'base64url').subarray(8).toString('base64url')),
        pair.privateKey,
      ]);
      cases.push(['no wrapped key', withPart(1, ''), pair.privateKey]);
      cases.push([
        'relabelled as ECDH-ES',
        withHeader(good, (h) => {
          h.alg = 'ECDH-ES';
        }),
        pair.privateKey,
      ]);
    }
  } else {
    cases.push(['tampered encrypted key', flip(good, 1), pair.privateKey]);
  }
  return cases;
}

const rsaPair = { publicKey: rsaPublic, privateKey: createPrivateRsa() };
const PAIRS = ALL_ALGS.flatMap((alg) => ALL_ENCS.map((enc) => [alg, enc] as const));

describe('encrypted ID tokens, every accepted pair: node:crypto against jose 6', () => {
  it.each(PAIRS)('%s with %s: same decision on every variant, on each curve', async (alg, enc) => {
    const keys = alg.startsWith('RSA') ? [rsaPair] : [ec, ec384, ec521];
    for (const pair of keys) {
      const accepted: string[] = [];
      for (const [name, token, key] of await pairCorpus(alg, enc, pair)) {
        const reference = await joseAll(token, key);
        expect({ name, ours: await ours(token, key) }).toEqual({ name, ours: reference });
        if (reference !== 'refused') accepted.push(name);
      }
      expect(accepted).toEqual(['valid']);
    }
  });
});

describe('what an encrypted ID token holds (the CVE-2026-29000 class)', () => {
  const claims = Buffer.from(
    JSON.stringify({ iss: 'https://id.example/v2', sub: 'x', aud: 'c', exp: 2e9, iat: 1e9 }),
  ).toString('base64url');
  const inner: [string, string, string][] = [
    ['an unsigned JWT (alg none)', `${seg({ alg: 'none' })}.${claims}.`, 'id_token_malformed'],
    [
      'an unsigned JWT (alg none) with a signature part',
      `${seg({ alg: 'none' })}.${claims}.c2ln`,
      'id_token_alg_not_allowed',
    ],
    ['an HMAC-signed JWT (HS256)', `${seg({ alg: 'HS256' })}.${claims}.c2lnbmF0dXJl`, 'id_token_alg_not_allowed'],
    ['an HMAC-signed JWT (HS512)', `${seg({ alg: 'HS512' })}.${claims}.c2lnbmF0dXJl`, 'id_token_alg_not_allowed'],
    ['a bare JSON claims object', Buffer.from(JSON.stringify({ sub: 'x' })).toString(), 'id_token_malformed'],
    ['another JWE (nested encryption, no signature)', 'eyJhbGciOiJkaXIifQ..aXY.Y3Q.dGFn', 'id_token_malformed'],
  ];

  it.each(inner)('refuses a JWE around %s, though it decrypts', async (_name, plaintext, code) => {
    const jwe = await new CompactEncrypt(new TextEncoder().encode(plaintext))
      .setProtectedHeader({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM' })
      .encrypt(ec.publicKey);
    // jose decrypts it (it is a valid JWE); what is inside is what makes it a forgery
    expect(await joseAll(jwe, ec.privateKey)).toBe(plaintext);
    await expect(decryptIdToken(jwe, importIdTokenDecryptionKeys(ec.privateKey, 'k'))).rejects.toMatchObject({ code });
  });

  it('returns a JWE around a signed JWT (the control)', async () => {
    const jwe = await new CompactEncrypt(new TextEncoder().encode(payload))
      .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256CBC-HS512' })
      .encrypt(ec.publicKey);
    expect(await decryptIdToken(jwe, importIdTokenDecryptionKeys(ec.privateKey, 'k'))).toBe(payload);
  });
});
