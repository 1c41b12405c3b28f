/**
 * The sealed-cookie session seals and opens its compact JWE (dir + A256GCM) with node:crypto, not
 * jose's JWE (most of jose in a worker bundle). This differential test shows the cookie format and
 * the decisions are jose's: jose opens what the store seals, the store opens what jose seals, and
 * over a hostile corpus the store accepts exactly what the former jose path accepted
 * (`compactDecrypt` with `dir`/`A256GCM` allowlists, the cookie's name and kid checked, then
 * `exp`). Where ours is stricter by design, the case says so and expects exactly that.
 */
import { createCipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { CompactEncrypt, compactDecrypt, type CompactDecryptGetKey } from 'jose';
import { describe, expect, it } from 'vitest';
import { createCookieSession } from '../../src/adapters/cookie-session.js';

const SECRET = 'differential-cookie-secret-0123456789-abcd';
const OTHER_SECRET = 'another-cookie-secret-0123456789-abcdefgh';
const NAME = 'app.session';
const NOW = Date.UTC(2026, 0, 1);
const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** The key and kid the store derives for `secret` under `cookieName` (its documented scheme). */
function keyOf(secret: string, cookieName = NAME): { key: Uint8Array; kid: string } {
  const key = new Uint8Array(
    hkdfSync('sha256', secret, 'passport-nd-id', `cookie-session dir+A256GCM ${cookieName}`, 32),
  );
  return { key, kid: createHash('sha256').update(key).digest('base64url').slice(0, 16) };
}
const KEY = keyOf(SECRET);

const store = createCookieSession({ secret: [SECRET], cookieName: NAME, clock: () => NOW, maxAge: 60 * 60 * 1000 });
const request = (cookie?: string): Request =>
  new Request('https://app.example/', cookie === undefined ? {} : { headers: { cookie: `${NAME}=${cookie}` } });

/** The store's decision: the sealed `user`, or undefined when the cookie is refused. */
async function oursOpens(value: string): Promise<unknown> {
  return (await store.load(request(value))).get('user');
}

/** The former jose path's decision, exactly as the store made it before. */
async function joseOpens(value: string): Promise<unknown> {
  if (value.length > 3800 || !/^[A-Za-z0-9_.-]+$/.test(value)) return undefined;
  const keyFor: CompactDecryptGetKey = (header) => {
    if (header.cookie !== NAME) throw new Error('sealed for another cookie');
    if (header.kid !== KEY.kid) throw new Error('sealed with an unknown key');
    return KEY.key;
  };
  try {
    const { plaintext } = await compactDecrypt(value, keyFor, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    const payload = JSON.parse(new TextDecoder().decode(plaintext)) as {
      sid?: unknown;
      exp?: unknown;
      data?: { user?: unknown };
    };
    if (typeof payload.exp !== 'number' || payload.exp <= Math.floor(NOW / 1000)) return undefined;
    if (
      typeof payload.sid !== 'string' ||
      typeof payload.data !== 'object' ||
      payload.data === null ||
      Array.isArray(payload.data)
    )
      return undefined;
    return payload.data.user;
  } catch {
    return undefined;
  }
}

const HEADER = { alg: 'dir', enc: 'A256GCM', kid: KEY.kid, cookie: NAME };
const PAYLOAD = { sid: 'sid-1', data: { user: { sub: 'person-1' } }, exp: Math.floor(NOW / 1000) + 600 };

interface Seal {
  header?: Record<string, unknown> | string;
  payload?: unknown;
  plaintext?: Buffer;
  key?: Uint8Array;
  iv?: Buffer;
  encryptedKey?: Buffer;
  change?: (parts: string[]) => string[];
}

/** A compact JWE sealed with node:crypto exactly as described, hostile parts included. */
function seal(s: Seal = {}): string {
  const header = s.header ?? HEADER;
  const headerSeg = typeof header === 'string' ? header : b64(JSON.stringify(header));
  const key = Buffer.from(s.key ?? KEY.key);
  const iv = s.iv ?? randomBytes(12);
  const cipher = createCipheriv(`aes-${key.length * 8}-gcm` as 'aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(headerSeg, 'ascii'));
  const ciphertext = Buffer.concat([
    cipher.update(s.plaintext ?? Buffer.from(JSON.stringify(s.payload ?? PAYLOAD))),
    cipher.final(),
  ]);
  const parts = [headerSeg, b64(s.encryptedKey ?? Buffer.alloc(0)), b64(iv), b64(ciphertext), b64(cipher.getAuthTag())];
  return (s.change ?? ((p) => p))(parts).join('.');
}

function nonCanonical(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(segment[segment.length - 1] as string);
  return segment.slice(0, -1) + (alphabet[last ^ 1] as string);
}
const at = (i: number, f: (segment: string) => string) => (parts: string[]) =>
  parts.map((p, j) => (j === i ? f(p) : p));
const flip = (s: string): string => (s[1] === 'A' ? `${s[0]}B${s.slice(2)}` : `${s[0]}A${s.slice(2)}`);
const noncanonicalWhy =
  'the compact serialization is canonical unpadded base64url (RFC 7516 7.1); jose 6 on Node 20 decodes with atob, which ignores the stray low bits';

const CASES: { name: string; value: () => string; stricterByDesign?: string }[] = [
  { name: 'a well-formed seal', value: () => seal() },
  {
    name: 'sealed with another secret',
    value: () => seal({ header: { ...HEADER, kid: keyOf(OTHER_SECRET).kid }, key: keyOf(OTHER_SECRET).key }),
  },
  { name: "the right key's kid, another key", value: () => seal({ key: keyOf(OTHER_SECRET).key }) },
  { name: 'another cookie name in the header', value: () => seal({ header: { ...HEADER, cookie: 'other.session' } }) },
  { name: 'no cookie name in the header', value: () => seal({ header: { alg: 'dir', enc: 'A256GCM', kid: KEY.kid } }) },
  { name: 'no kid', value: () => seal({ header: { alg: 'dir', enc: 'A256GCM', cookie: NAME } }) },
  {
    name: 'enc A128GCM with a 16-byte key',
    value: () => seal({ header: { ...HEADER, enc: 'A128GCM' }, key: KEY.key.slice(0, 16) }),
  },
  { name: 'alg A256GCMKW', value: () => seal({ header: { ...HEADER, alg: 'A256GCMKW' } }) },
  { name: 'alg none', value: () => seal({ header: { ...HEADER, alg: 'none' } }) },
  { name: 'a crit header', value: () => seal({ header: { ...HEADER, crit: ['cookie'] } }) },
  {
    name: 'zip DEF with a deflated payload',
    value: () =>
      seal({ header: { ...HEADER, zip: 'DEF' }, plaintext: deflateRawSync(Buffer.from(JSON.stringify(PAYLOAD))) }),
    stricterByDesign:
      'the store never seals with zip, and inflating before the size of the plaintext is known invites a decompression bomb; jose 6 inflates it',
  },
  { name: 'an encrypted key under dir', value: () => seal({ encryptedKey: randomBytes(32) }) },
  { name: 'a 16-byte IV', value: () => seal({ iv: randomBytes(16) }) },
  { name: 'an 8-byte IV', value: () => seal({ iv: randomBytes(8) }) },
  { name: 'a truncated tag', value: () => seal({ change: at(4, (s) => s.slice(0, 16)) }) },
  { name: 'a changed header segment', value: () => seal({ change: at(0, flip) }) },
  { name: 'a changed IV', value: () => seal({ change: at(2, flip) }) },
  { name: 'a changed ciphertext', value: () => seal({ change: at(3, flip) }) },
  { name: 'a changed tag', value: () => seal({ change: at(4, flip) }) },
  { name: 'four parts', value: () => seal({ change: (p) => p.slice(0, 4) }) },
  { name: 'six parts', value: () => seal({ change: (p) => [...p, 'AAAA'] }) },
  { name: 'a header that is not JSON', value: () => seal({ header: b64('{"alg":"dir"') }) },
  { name: 'a header that is an array', value: () => seal({ header: b64('["dir"]') }) },
  { name: 'a payload that is not JSON', value: () => seal({ plaintext: Buffer.from('not json') }) },
  { name: 'a payload past its exp', value: () => seal({ payload: { ...PAYLOAD, exp: Math.floor(NOW / 1000) } }) },
  { name: 'a payload without sid', value: () => seal({ payload: { data: PAYLOAD.data, exp: PAYLOAD.exp } }) },
  { name: 'a payload whose data is an array', value: () => seal({ payload: { ...PAYLOAD, data: [1] } }) },
  {
    name: 'a non-canonical tag segment',
    value: () => seal({ change: at(4, nonCanonical) }),
    stricterByDesign: noncanonicalWhy,
  },
  {
    name: 'a non-canonical ciphertext segment',
    value: () => seal({ change: at(3, nonCanonical) }),
    stricterByDesign: noncanonicalWhy,
  },
];

describe('the sealed-cookie session against jose', () => {
  it('seals a compact JWE that jose opens with the derived key: the header, the sid, the data and exp', async () => {
    const session = await store.load(request());
    session.set('user', { sub: 'person-2' });
    const header = (await store.commit(session, request())) ?? '';
    const value = header.slice(header.indexOf('=') + 1, header.indexOf(';'));
    const { plaintext, protectedHeader } = await compactDecrypt(value, KEY.key, {
      keyManagementAlgorithms: ['dir'],
      contentEncryptionAlgorithms: ['A256GCM'],
    });
    expect(protectedHeader).toEqual(HEADER);
    expect(value.split('.')[1]).toBe('');
    const payload = JSON.parse(new TextDecoder().decode(plaintext)) as typeof PAYLOAD;
    expect(payload).toEqual({
      sid: session.id,
      data: { user: { sub: 'person-2' } },
      exp: Math.floor(NOW / 1000) + 3600,
    });
  });

  it('opens a cookie jose sealed the way the store used to', async () => {
    const value = await new CompactEncrypt(Buffer.from(JSON.stringify(PAYLOAD)))
      .setProtectedHeader(HEADER)
      .encrypt(KEY.key);
    expect(await oursOpens(value)).toEqual({ sub: 'person-1' });
  });

  for (const c of CASES) {
    it(`decides as jose: ${c.name}`, async () => {
      const value = c.value();
      const ours = await oursOpens(value);
      const jose = await joseOpens(value);
      if (c.stricterByDesign !== undefined) {
        expect(jose, 'jose accepts').toEqual({ sub: 'person-1' });
        expect(ours, c.stricterByDesign).toBeUndefined();
      } else {
        expect(ours).toEqual(jose);
      }
    });
  }

  it('the corpus holds both decisions', async () => {
    expect(await oursOpens(seal())).toEqual({ sub: 'person-1' });
    expect(await oursOpens(seal({ change: at(4, flip) }))).toBeUndefined();
  });
});
