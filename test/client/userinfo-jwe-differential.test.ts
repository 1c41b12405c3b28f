/**
 * Spec 4.6: userinfo JWEs under RSA-OAEP(-256) or dir with AES-GCM are decrypted with node:crypto
 * (see jwe-gcm.ts), not jose, for speed. This differential test runs jose 6 (`compactDecrypt` with
 * the same allowlists) and our `decryptUserinfo` over the same hostile corpus, as the block key JWE
 * and as an attribute JWE, and shows they accept and refuse the same JWEs, with the same plaintext.
 * Where ours is stricter by design, the case says so and expects exactly that.
 */
import {
  constants,
  createCipheriv,
  generateKeyPairSync,
  publicEncrypt,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { compactDecrypt } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  ATTRIBUTE_ALGORITHMS,
  CONTENT_ENCRYPTIONS,
  decryptUserinfo,
  KEY_WRAP_ALGORITHMS,
} from '../../src/client/userinfo-crypto.js';
import type { DecryptionKey } from '../../src/keys.js';
import { pooledKeyObjects } from '../helpers/keys.js';
import { JWE_KEY_BYTES } from '../helpers/stub-provider.js';

const rsa = pooledKeyObjects();
const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
const asKey = (key: KeyObject): DecryptionKey[] => [{ key, kid: undefined, thumbprint: 't' }];
const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

const BLOCK_KEY = randomBytes(32);
const BLOCK_JWK = JSON.stringify({ kty: 'oct', k: b64(BLOCK_KEY) });
const GCM_BITS: Record<string, number> = { A128GCM: 128, A192GCM: 192, A256GCM: 256 };

interface Seal {
  header: Record<string, unknown> | string;
  plaintext: string | Buffer;
  /** The content key; a fresh one of the size `enc` needs when absent. */
  cek?: Buffer;
  /** `rsa` wraps the CEK with this public key (OAEP, the hash `alg` names); `dir` sends no key. */
  wrapWith?: KeyObject;
  iv?: Buffer;
  /** Change the five segments after sealing. */
  change?: (parts: string[]) => string[];
  /** Change the tag bytes after sealing. */
  tag?: (tag: Buffer) => Buffer;
}

/** A compact JWE sealed with node:crypto exactly as described, hostile parts included. */
function seal(s: Seal): string {
  const headerSeg = typeof s.header === 'string' ? s.header : b64(JSON.stringify(s.header));
  const header = typeof s.header === 'string' ? {} : s.header;
  const bits = GCM_BITS[String(header.enc)] ?? 256;
  const cek = s.cek ?? randomBytes(bits / 8);
  const iv = s.iv ?? randomBytes(12);
  let encryptedKey = Buffer.alloc(0);
  if (s.wrapWith !== undefined) {
    encryptedKey = publicEncrypt(
      {
        key: s.wrapWith,
        padding: constants.RSA_PKCS1_OAEP_PADDING,
        oaepHash: header.alg === 'RSA-OAEP' ? 'sha1' : 'sha256',
      },
      cek,
    );
  }
  const cipher = createCipheriv(`aes-${cek.length * 8}-gcm` as 'aes-256-gcm', cek, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(headerSeg, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(s.plaintext), cipher.final()]);
  const tag = (s.tag ?? ((t) => t))(cipher.getAuthTag());
  const parts = [headerSeg, b64(encryptedKey), b64(iv), b64(ciphertext), b64(tag)];
  return (s.change ?? ((p) => p))(parts).join('.');
}

/** Changes the unused low bits of the last character of a base64url segment: same bytes, non-canonical text. */
function nonCanonical(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(segment[segment.length - 1] as string);
  return segment.slice(0, -1) + (alphabet[last ^ 1] as string);
}
const at = (i: number, f: (segment: string) => string) => (parts: string[]) =>
  parts.map((p, j) => (j === i ? f(p) : p));

interface Case {
  name: string;
  /** The JWE's header and whatever is hostile about it; plaintext and keys are filled per role. */
  seal: Omit<Seal, 'plaintext' | 'wrapWith' | 'cek'> & { cek?: Buffer; wrapWith?: KeyObject; plaintext?: Buffer };
  /** The private key to decrypt a block key JWE with (the 2048-bit key by default). */
  key?: KeyObject;
  /** Set when our decision differs from jose's on purpose: what ours does, and why. */
  stricterByDesign?: string;
}

const noncanonicalWhy =
  'the compact serialization is canonical unpadded base64url (RFC 7516 7.1); jose 6 on Node 20 decodes with atob, which ignores the stray low bits';
const paddingWhy =
  'the compact serialization is unpadded base64url (RFC 7516 2); jose 6 on Node 20 decodes with atob, which takes padding';
const whitespaceWhy =
  'no character outside base64url and the dots; jose 6 on Node 20 decodes with atob, which skips spaces';
const zipWhy =
  'compressed JWEs are refused (spec 4.6 allows no zip; a decompression bomb needs no key); jose 6 inflates DEF';

/** Cases common to both roles; `alg` is the role's algorithm. */
function corpus(alg: string): Case[] {
  const h = { alg, enc: 'A256GCM' };
  return [
    { name: 'a valid JWE (A256GCM)', seal: { header: h } },
    { name: 'a valid JWE with an unknown extra header', seal: { header: { ...h, kid: 'x', 'urn:x': 1 } } },
    {
      name: 'a valid JWE with an empty plaintext (empty ciphertext part)',
      seal: { header: h, plaintext: Buffer.alloc(0) },
    },
    { name: 'a tag truncated to 12 bytes', seal: { header: h, tag: (t) => t.subarray(0, 12) } },
    { name: 'a tag truncated to 15 bytes', seal: { header: h, tag: (t) => t.subarray(0, 15) } },
    { name: 'a tag one byte long (17 bytes)', seal: { header: h, tag: (t) => Buffer.concat([t, Buffer.from([0])]) } },
    { name: 'a flipped tag bit', seal: { header: h, tag: (t) => Buffer.from(t.map((b, i) => (i === 3 ? b ^ 1 : b))) } },
    { name: 'an empty tag', seal: { header: h, change: at(4, () => '') } },
    { name: 'a 16-byte IV', seal: { header: h, iv: randomBytes(16) } },
    { name: 'an 8-byte IV', seal: { header: h, iv: randomBytes(8) } },
    { name: 'an empty IV', seal: { header: h, change: at(2, () => '') } },
    {
      name: 'a flipped ciphertext bit',
      seal: {
        header: h,
        change: at(3, (s) => b64(Buffer.from(Buffer.from(s, 'base64url').map((b, i) => (i === 0 ? b ^ 1 : b))))),
      },
    },
    {
      name: 'a header changed after sealing (AAD)',
      seal: { header: h, change: at(0, () => b64(JSON.stringify({ ...h, kid: 'y' }))) },
    },
    {
      name: 'an IV segment with its last character changed (12 bytes leave no stray bits)',
      seal: { header: h, change: at(2, nonCanonical) },
    },
    {
      name: 'a non-canonical tag segment',
      seal: { header: h, change: at(4, nonCanonical) },
      stricterByDesign: noncanonicalWhy,
    },
    { name: 'a padded tag segment', seal: { header: h, change: at(4, (s) => `${s}==`) }, stricterByDesign: paddingWhy },
    {
      name: 'a space inside the IV segment',
      seal: { header: h, change: at(2, (s) => `${s.slice(0, 4)} ${s.slice(4)}`) },
      stricterByDesign: whitespaceWhy,
    },
    {
      name: "a standard-base64 '+' in the ciphertext segment",
      seal: { header: h, change: at(3, (s) => `${s.slice(0, 4)}+${s.slice(5)}`) },
    },
    { name: "a standard-base64 '/' in the tag segment", seal: { header: h, change: at(4, (s) => `/${s.slice(1)}`) } },
    { name: 'a header segment that is not an object', seal: { header: b64('["x"]') } },
    { name: 'a header segment that is not JSON', seal: { header: b64('{alg:dir}') } },
    { name: 'an empty header segment', seal: { header: '' } },
    { name: 'four parts', seal: { header: h, change: (p) => p.slice(0, 4) } },
    { name: 'six parts', seal: { header: h, change: (p) => [...p, 'x'] } },
    { name: 'all parts empty', seal: { header: h, change: () => ['', '', '', '', ''] } },
    {
      name: 'zip DEF with a deflated plaintext',
      seal: { header: { ...h, zip: 'DEF' }, plaintext: deflateRawSync(Buffer.from('x')) },
      stricterByDesign: zipWhy,
    },
    { name: 'zip with an unknown method', seal: { header: { ...h, zip: 'GZ' } } },
    { name: 'crit naming an unknown extension', seal: { header: { ...h, crit: ['urn:x'], 'urn:x': 1 } } },
    { name: 'crit naming a registered header (exp)', seal: { header: { ...h, crit: ['exp'], exp: 1 } } },
    { name: 'crit as an empty list', seal: { header: { ...h, crit: [] } } },
    { name: 'alg none', seal: { header: { alg: 'none', enc: 'A256GCM' } } },
    { name: 'alg RSA1_5', seal: { header: { alg: 'RSA1_5', enc: 'A256GCM' } } },
    { name: 'an unknown alg', seal: { header: { alg: 'RSA-OAEP-999', enc: 'A256GCM' } } },
    { name: 'alg missing', seal: { header: { enc: 'A256GCM' } } },
    { name: 'an unknown enc', seal: { header: { alg, enc: 'A512GCM' } } },
    { name: 'enc missing', seal: { header: { alg } } },
    { name: 'alg as a number', seal: { header: { alg: 7, enc: 'A256GCM' } } },
  ];
}

/** Block key cases: RSA-OAEP-256 and RSA-OAEP to the client's key. */
const BLOCK_CASES: Case[] = [
  ...corpus('RSA-OAEP-256'),
  { name: 'RSA-OAEP (SHA-1), valid', seal: { header: { alg: 'RSA-OAEP', enc: 'A256GCM' } } },
  { name: 'A128GCM, valid', seal: { header: { alg: 'RSA-OAEP-256', enc: 'A128GCM' } } },
  { name: 'A192GCM, valid', seal: { header: { alg: 'RSA-OAEP-256', enc: 'A192GCM' } } },
  {
    name: 'a 16-byte CEK for A256GCM',
    seal: { header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' }, cek: randomBytes(16) },
  },
  {
    name: 'a 32-byte CEK for A128GCM',
    seal: { header: { alg: 'RSA-OAEP-256', enc: 'A128GCM' }, cek: randomBytes(32) },
  },
  {
    name: 'an empty encrypted key',
    seal: { header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' }, change: at(1, () => '') },
  },
  {
    name: 'a truncated encrypted key',
    seal: { header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' }, change: at(1, (s) => s.slice(0, 100)) },
  },
  {
    name: 'RSA-OAEP-256 labelled RSA-OAEP',
    seal: {
      header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' },
      change: at(0, () => b64(JSON.stringify({ alg: 'RSA-OAEP', enc: 'A256GCM' }))),
    },
  },
  {
    name: 'a 1024-bit RSA key',
    seal: { header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' }, wrapWith: weak.publicKey },
    key: weak.privateKey,
  },
  { name: 'alg dir for the block key', seal: { header: { alg: 'dir', enc: 'A256GCM' }, cek: BLOCK_KEY } },
];

/** Attribute cases: dir with the block key. */
const ATTRIBUTE_CASES: Case[] = [
  ...corpus('dir'),
  {
    name: 'dir A128GCM with a 32-byte block key',
    seal: { header: { alg: 'dir', enc: 'A128GCM' }, cek: randomBytes(16) },
  },
  {
    name: 'dir with an encrypted key part',
    seal: { header: { alg: 'dir', enc: 'A256GCM' }, change: at(1, () => b64(randomBytes(40))) },
  },
  { name: 'dir sealed with another key', seal: { header: { alg: 'dir', enc: 'A256GCM' }, cek: randomBytes(32) } },
  {
    name: 'RSA-OAEP-256 for an attribute',
    seal: { header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' }, wrapWith: rsa.publicKey },
  },
];

const PLAINTEXT = Buffer.from('Ada Lovelace, née Byron');
const keyOptions = {
  keyManagementAlgorithms: [...KEY_WRAP_ALGORITHMS],
  contentEncryptionAlgorithms: [...CONTENT_ENCRYPTIONS],
};
const attributeOptions = {
  keyManagementAlgorithms: [...ATTRIBUTE_ALGORITHMS],
  contentEncryptionAlgorithms: [...CONTENT_ENCRYPTIONS],
};
const validBlockJwe = seal({
  header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' },
  plaintext: BLOCK_JWK,
  wrapWith: rsa.publicKey,
});

type Decision = { accepted: true; plaintext: string } | { accepted: false };

async function decide(run: () => Promise<Uint8Array | string>): Promise<Decision> {
  try {
    return { accepted: true, plaintext: Buffer.from(await run()).toString('latin1') };
  } catch {
    return { accepted: false };
  }
}

function blockJwe(c: Case): string {
  const wrapWith = c.seal.wrapWith ?? (c.seal.cek === BLOCK_KEY ? undefined : rsa.publicKey);
  return seal({ ...c.seal, plaintext: c.seal.plaintext ?? BLOCK_JWK, wrapWith });
}

function attributeJwe(c: Case): string {
  return seal({ ...c.seal, plaintext: c.seal.plaintext ?? PLAINTEXT, cek: c.seal.cek ?? BLOCK_KEY });
}

function expectSame(c: Case, jose: Decision, ours: Decision): void {
  if (c.stricterByDesign !== undefined) {
    expect({ jose: jose.accepted, ours: ours.accepted }).toEqual({ jose: true, ours: false });
  } else {
    expect(ours).toEqual(jose);
  }
}

describe('userinfo JWE decryption: node:crypto path versus jose 6', () => {
  it.each(BLOCK_CASES.map((c) => [c.name, c] as const))('block key JWE, %s: same decision', async (_name, c) => {
    const jwe = blockJwe(c);
    const key = c.key ?? rsa.privateKey;
    const jose = await decide(async () => (await compactDecrypt(jwe, key, keyOptions)).plaintext);
    // Ours then reads the plaintext as a JWK: userinfo_key_invalid means the JWE itself was accepted.
    const ours = await decide(async () => {
      try {
        await decryptUserinfo(asKey(key), jwe, {});
      } catch (err) {
        if ((err as { code?: string }).code !== 'userinfo_key_invalid') throw err;
      }
      return c.seal.plaintext ?? BLOCK_JWK;
    });
    expectSame(c, jose, ours);
  });

  it.each(ATTRIBUTE_CASES.map((c) => [c.name, c] as const))('attribute JWE, %s: same decision', async (_name, c) => {
    const jwe = attributeJwe(c);
    const jose = await decide(
      async () => (await compactDecrypt(jwe, new Uint8Array(BLOCK_KEY), attributeOptions)).plaintext,
    );
    const ours = await decide(async () => {
      const { name } = await decryptUserinfo(asKey(rsa.privateKey), validBlockJwe, { name: jwe });
      return Buffer.from(name ?? '', 'utf8');
    });
    expectSame(c, jose, ours);
  });

  it('accepts the valid JWEs on both paths (the corpus is not refused wholesale)', async () => {
    const good = attributeJwe({ name: 'good', seal: { header: { alg: 'dir', enc: 'A256GCM' } } });
    expect((await compactDecrypt(good, new Uint8Array(BLOCK_KEY), attributeOptions)).plaintext).toEqual(
      new Uint8Array(PLAINTEXT),
    );
    expect(await decryptUserinfo(asKey(rsa.privateKey), validBlockJwe, { name: good })).toEqual({
      name: PLAINTEXT.toString('utf8'),
    });
  });

  it('decrypts an allowlisted pair the service does not use (A256KW, A256CBC-HS512)', async () => {
    const { CompactEncrypt } = await import('jose');
    const kw = await new CompactEncrypt(new Uint8Array(PLAINTEXT))
      .setProtectedHeader({ alg: 'A256KW', enc: 'A256CBC-HS512' })
      .encrypt(new Uint8Array(BLOCK_KEY));
    expect(await decryptUserinfo(asKey(rsa.privateKey), validBlockJwe, { name: kw })).toEqual({
      name: PLAINTEXT.toString('utf8'),
    });
  });
});

/**
 * Every other allowlisted pair is decrypted with node:crypto too: the AES key wraps (A128KW,
 * A192KW, A256KW), the AES-GCM key wraps (A128GCMKW, A192GCMKW, A256GCMKW), and the AES-CBC-HMAC
 * contents, for attributes and for the block key. Per pair: the valid JWE and its hostile
 * variants, jose 6 (same allowlists) against ours.
 */
function flipAt(index: number, byte = 0) {
  return (parts: string[]) =>
    parts.map((p, j) =>
      j === index ? b64(Buffer.from(Buffer.from(p, 'base64url').map((b, i) => (i === byte ? b ^ 1 : b)))) : p,
    );
}
function editHeader(jwe: string, edit: (h: Record<string, unknown>) => void): string {
  const parts = jwe.split('.');
  const header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString()) as Record<string, unknown>;
  edit(header);
  parts[0] = b64(JSON.stringify(header));
  return parts.join('.');
}

interface Variant {
  name: string;
  jwe: string;
  /** The key to decrypt with; the pair's key by default. */
  key?: Buffer;
  stricterByDesign?: string;
}

async function variants(
  alg: string,
  enc: string,
  key: Buffer,
  plaintext: Uint8Array,
  encryptTo: Uint8Array | KeyObject,
): Promise<Variant[]> {
  const { CompactEncrypt } = await import('jose');
  const good = await new CompactEncrypt(plaintext).setProtectedHeader({ alg, enc }).encrypt(encryptTo);
  const change = (f: (parts: string[]) => string[]) => f(good.split('.')).join('.');
  const cbc = enc.includes('CBC');
  const out: Variant[] = [
    { name: 'valid', jwe: good },
    { name: 'a flipped IV bit', jwe: change(flipAt(2)) },
    { name: 'a flipped first ciphertext bit', jwe: change(flipAt(3)) },
    { name: 'a flipped last tag bit', jwe: change(flipAt(4, cbc ? JWE_KEY_BYTES[enc]! / 2 - 1 : 15)) },
    { name: 'a tag cut by one byte', jwe: change(at(4, (s) => b64(Buffer.from(s, 'base64url').subarray(1)))) },
    {
      name: 'a tag with a byte more',
      jwe: change(at(4, (s) => b64(Buffer.concat([Buffer.from(s, 'base64url'), Buffer.from([0])])))),
    },
    { name: 'an empty tag', jwe: change(at(4, () => '')) },
    {
      name: 'a header changed after sealing (AAD)',
      jwe: editHeader(good, (h) => {
        h.kid = 'y';
      }),
    },
    {
      name: 'enc relabelled to another size',
      jwe: editHeader(good, (h) => {
        h.enc = enc === 'A128GCM' ? 'A256GCM' : 'A128GCM';
      }),
    },
    { name: 'a 12-byte IV for CBC / a 16-byte IV for GCM', jwe: change(at(2, () => b64(randomBytes(cbc ? 12 : 16)))) },
    {
      name: 'crit naming an unknown extension',
      jwe: editHeader(good, (h) => {
        h.crit = ['urn:x'];
        h['urn:x'] = 1;
      }),
    },
  ];
  if (alg !== 'dir' && !alg.startsWith('RSA')) {
    out.push(
      { name: 'a flipped encrypted-key bit', jwe: change(flipAt(1, 3)) },
      {
        name: 'an encrypted key cut by 8 bytes',
        jwe: change(at(1, (s) => b64(Buffer.from(s, 'base64url').subarray(8)))),
      },
      { name: 'an empty encrypted key', jwe: change(at(1, () => '')) },
      { name: 'another key of the same size', jwe: good, key: randomBytes(key.length) },
      { name: 'a key 8 bytes longer', jwe: good, key: Buffer.concat([key, randomBytes(8)]) },
    );
  }
  if (alg.includes('GCMKW')) {
    out.push(
      {
        name: 'the key-wrap tag header flipped',
        jwe: editHeader(good, (h) => {
          h.tag = b64(Buffer.from(Buffer.from(String(h.tag), 'base64url').map((b, i) => (i === 0 ? b ^ 1 : b))));
        }),
      },
      {
        name: 'the key-wrap iv header missing',
        jwe: editHeader(good, (h) => {
          delete h.iv;
        }),
      },
      {
        name: 'the key-wrap tag header a number',
        jwe: editHeader(good, (h) => {
          h.tag = 7;
        }),
      },
      {
        name: 'the key-wrap iv header 16 bytes',
        jwe: editHeader(good, (h) => {
          h.iv = b64(randomBytes(16));
        }),
      },
    );
  }
  if (alg === 'dir') out.push({ name: 'an encrypted key part', jwe: change(at(1, () => b64(randomBytes(40)))) });
  return out;
}

const ATTRIBUTE_PAIRS = ATTRIBUTE_ALGORITHMS.flatMap((alg) =>
  CONTENT_ENCRYPTIONS.map((enc) => [alg, enc] as const),
).filter(([alg, enc]) => !(alg === 'dir' && enc.endsWith('GCM')));

describe('userinfo attributes under every other allowlisted pair: node:crypto versus jose 6', () => {
  it.each(ATTRIBUTE_PAIRS)('attribute JWE, %s with %s: same decision on every variant', async (alg, enc) => {
    const keyBytes = randomBytes(alg === 'dir' ? JWE_KEY_BYTES[enc]! : JWE_KEY_BYTES[alg]!);
    const block = seal({
      header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' },
      plaintext: JSON.stringify({ kty: 'oct', k: b64(keyBytes) }),
      wrapWith: rsa.publicKey,
    });
    const accepted: string[] = [];
    for (const v of await variants(alg, enc, keyBytes, new Uint8Array(PLAINTEXT), new Uint8Array(keyBytes))) {
      const key = v.key ?? keyBytes;
      const jose = await decide(
        async () => (await compactDecrypt(v.jwe, new Uint8Array(key), attributeOptions)).plaintext,
      );
      const blockJwe =
        key === keyBytes
          ? block
          : seal({
              header: { alg: 'RSA-OAEP-256', enc: 'A256GCM' },
              plaintext: JSON.stringify({ kty: 'oct', k: b64(key) }),
              wrapWith: rsa.publicKey,
            });
      const ours = await decide(async () =>
        Buffer.from((await decryptUserinfo(asKey(rsa.privateKey), blockJwe, { name: v.jwe })).name ?? '', 'utf8'),
      );
      expect({ variant: v.name, ...ours }).toEqual({ variant: v.name, ...jose });
      if (jose.accepted) accepted.push(v.name);
    }
    expect(accepted).toEqual(['valid']);
  });

  it.each(
    CONTENT_ENCRYPTIONS.filter((e) => e.includes('CBC')).flatMap((enc) =>
      KEY_WRAP_ALGORITHMS.map((alg) => [alg, enc] as const),
    ),
  )('block key JWE, %s with %s: same decision on every variant', async (alg, enc) => {
    const accepted: string[] = [];
    for (const v of await variants(alg, enc, Buffer.alloc(0), new TextEncoder().encode(BLOCK_JWK), rsa.publicKey)) {
      const jose = await decide(async () => (await compactDecrypt(v.jwe, rsa.privateKey, keyOptions)).plaintext);
      const ours = await decide(async () => {
        await decryptUserinfo(asKey(rsa.privateKey), v.jwe, {});
        return BLOCK_JWK;
      });
      expect({ variant: v.name, ...ours }).toEqual({ variant: v.name, ...jose });
      if (jose.accepted) accepted.push(v.name);
    }
    expect(accepted).toEqual(['valid']);
  });
});
