/**
 * Section 3: the ID token's RS256 signature is checked with node:crypto (see id-token.ts), not
 * jose, for speed. This differential test runs jose 6 (`compactVerify` pinned to RS256, then
 * the payload read as a JSON object, as `jwtVerify` does) and our `validateIdToken` over the
 * same hostile corpus, and shows they accept and refuse the same tokens. Where ours is stricter
 * by design, the case says so and expects exactly that.
 */
import { constants, createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { validateIdToken } from '../../src/client/id-token.js';
import { pooledKeyObjects } from '../helpers/keys.js';

const NOW = 1_800_000_000;
const ISSUER = 'https://id.example/v2';
const CLIENT_ID = 'client-1';
const rsa = pooledKeyObjects();
const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');
const CLAIMS = { iss: ISSUER, sub: 'person-1', aud: CLIENT_ID, exp: NOW + 300, iat: NOW - 5, nonce: 'n-1' };

/** A token over exactly these header and payload segments, signed with `how`. */
function signed(
  headerSeg: string,
  payloadSeg: string,
  how: { key?: KeyObject; digest?: string | null; padding?: number } = {},
): string {
  const input = `${headerSeg}.${payloadSeg}`;
  const key = how.key ?? rsa.privateKey;
  const signature = sign(
    how.digest === undefined ? 'sha256' : how.digest,
    Buffer.from(input),
    how.padding === undefined ? key : { key, padding: how.padding },
  );
  return `${input}.${b64(signature)}`;
}

const token = (
  header: Record<string, unknown>,
  payload: Record<string, unknown> = CLAIMS,
  how?: Parameters<typeof signed>[2],
): string => signed(b64(JSON.stringify(header)), b64(JSON.stringify(payload)), how);

/** Changes the unused low bits of the last character of a base64url segment: same bytes, non-canonical text. */
function nonCanonical(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(segment[segment.length - 1] as string);
  return segment.slice(0, -1) + (alphabet[last ^ 1] as string);
}

function withSignature(jws: string, change: (sig: string) => string): string {
  const at = jws.lastIndexOf('.');
  return `${jws.slice(0, at)}.${change(jws.slice(at + 1))}`;
}

const RS256 = { alg: 'RS256', kid: 'k1' };
const good = token(RS256);
const [goodHeader = '', goodPayload = ''] = good.split('.');

interface Case {
  name: string;
  jws: string;
  key?: KeyObject;
  /** Set when our decision differs from jose's on purpose: what ours does, and why. */
  stricterByDesign?: string;
}

const CORPUS: Case[] = [
  { name: 'a valid RS256 token', jws: good },
  { name: 'alg none with an empty signature', jws: `${b64(JSON.stringify({ alg: 'none' }))}.${goodPayload}.` },
  { name: 'alg none with a signature', jws: token({ alg: 'none' }) },
  { name: 'alg HS256 keyed with the public key (algorithm confusion)', jws: token({ alg: 'HS256' }) },
  { name: 'alg RS512, correctly signed', jws: token({ alg: 'RS512' }, CLAIMS, { digest: 'sha512' }) },
  { name: 'alg PS256, correctly signed', jws: token({ alg: 'PS256' }, CLAIMS, { padding: 6 }) },
  { name: 'an unknown alg', jws: token({ alg: 'XS256' }) },
  { name: 'alg ES256 with an EC key', jws: token({ alg: 'ES256' }, CLAIMS, { key: ec.privateKey }), key: ec.publicKey },
  { name: 'a 1024-bit RSA key', jws: token(RS256, CLAIMS, { key: weak.privateKey }), key: weak.publicKey },
  { name: 'crit naming an unknown extension', jws: token({ ...RS256, crit: ['urn:x'], 'urn:x': 1 }) },
  { name: 'crit naming a registered header (exp)', jws: token({ ...RS256, crit: ['exp'], exp: 1 }) },
  {
    name: 'crit b64 with b64 true',
    jws: token({ ...RS256, crit: ['b64'], b64: true }),
    stricterByDesign:
      'no JWS extension is supported, so any crit is refused (jose accepts b64: true, which changes nothing)',
  },
  {
    name: 'crit b64 with an unencoded payload (b64 false)',
    jws: signed(b64(JSON.stringify({ ...RS256, crit: ['b64'], b64: false })), JSON.stringify(CLAIMS)),
  },
  { name: 'crit as an empty list', jws: token({ ...RS256, crit: [] }) },
  { name: 'zip DEF in a JWS header', jws: token({ ...RS256, zip: 'DEF' }) },
  {
    name: 'a kid that is not a string',
    jws: token({ alg: 'RS256', kid: 7 }),
    stricterByDesign: 'RFC 7515 4.1.4 makes kid a string; a number cannot name a key of the set',
  },
  { name: 'a header that is not an object', jws: signed(b64('"RS256"'), goodPayload) },
  { name: 'a header that is not JSON', jws: signed(b64('{alg:RS256}'), goodPayload) },
  { name: 'a payload that is not an object', jws: token(RS256, [1, 2] as unknown as Record<string, unknown>) },
  { name: 'a payload that is not JSON', jws: signed(goodHeader, b64('not json')) },
  { name: 'an empty payload', jws: signed(goodHeader, '') },
  { name: 'a non-canonical header segment, signed as sent', jws: signed(nonCanonical(goodHeader), goodPayload) },
  { name: 'a non-canonical payload segment, signed as sent', jws: signed(goodHeader, nonCanonical(goodPayload)) },
  {
    name: 'a non-canonical signature segment',
    jws: withSignature(good, nonCanonical),
    stricterByDesign:
      'one strict base64url decoder reads every JWS signature and JWE part (RFC 7515 2, RFC 4648 3.5); jose 6 ignores the stray bits',
  },
  {
    name: 'a padded signature',
    jws: withSignature(good, (s) => `${s}==`),
    stricterByDesign: 'the compact serialization is unpadded base64url (RFC 7515 2, 7.1); jose 6 tolerates the padding',
  },
  {
    name: 'a signature in standard base64',
    jws: withSignature(good, (s) => Buffer.from(s, 'base64url').toString('base64').replace(/=+$/, '')),
  },
  { name: 'a truncated signature (one character)', jws: withSignature(good, (s) => s.slice(0, -1)) },
  {
    name: 'a truncated signature (one byte)',
    jws: withSignature(good, (s) => b64(Buffer.from(s, 'base64url').subarray(1))),
  },
  {
    name: 'a signature with a byte more',
    jws: withSignature(good, (s) => b64(Buffer.concat([Buffer.from(s, 'base64url'), Buffer.from([0])]))),
  },
  {
    name: 'a signature with a leading zero byte',
    jws: withSignature(good, (s) => b64(Buffer.concat([Buffer.from([0]), Buffer.from(s, 'base64url')]))),
  },
  { name: 'a signature of zero bytes, full length', jws: withSignature(good, () => b64(Buffer.alloc(256))) },
  { name: 'an empty signature', jws: withSignature(good, () => '') },
  {
    name: 'a flipped signature bit',
    jws: withSignature(good, (s) => {
      const b = Buffer.from(s, 'base64url');
      b[10] = (b[10] as number) ^ 1;
      return b64(b);
    }),
  },
  {
    name: 'a payload changed after signing',
    jws: `${goodHeader}.${b64(JSON.stringify({ ...CLAIMS, sub: 'someone-else' }))}.${good.split('.')[2] ?? ''}`,
  },
  {
    name: 'a header with whitespace inside a segment',
    jws: `${goodHeader.slice(0, 5)} ${goodHeader.slice(5)}.${good.split('.').slice(1).join('.')}`,
  },
  { name: 'a token with a leading space', jws: ` ${good}` },
  {
    name: 'a token with a trailing newline',
    jws: `${good}\n`,
    stricterByDesign:
      'a token is compared as sent: no character outside base64url and the two dots (jose 6 tolerates trailing whitespace)',
  },
  { name: 'four segments', jws: `${good}.x` },
  { name: 'two segments', jws: `${goodHeader}.${goodPayload}` },
  { name: 'five segments (a JWE shape)', jws: `${goodHeader}..${goodPayload}.x.y` },
];

/** jose's decision: compactVerify pinned to RS256 with the key, then the payload as a JSON object. */
async function joseAccepts(c: Case): Promise<boolean> {
  try {
    const { payload } = await compactVerify(c.jws, c.key ?? rsa.publicKey, { algorithms: ['RS256'] });
    const claims: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims);
  } catch {
    return false;
  }
}

/** Our decision: the whole validation, with expectations every corpus payload meets. */
async function oursAccepts(c: Case): Promise<boolean> {
  try {
    await validateIdToken(c.jws, {
      issuer: ISSUER,
      clientId: CLIENT_ID,
      nonce: 'n-1',
      accessToken: 'at',
      clockTolerance: 0,
      clock: () => NOW * 1000,
      keyFor: () => Promise.resolve(c.key ?? rsa.publicKey),
    });
    return true;
  } catch {
    return false;
  }
}

describe('ID-token signature check: node:crypto path versus jose 6', () => {
  it.each(CORPUS.map((c) => [c.name, c] as const))('%s: same decision', async (_name, c) => {
    const [jose, ours] = [await joseAccepts(c), await oursAccepts(c)];
    if (c.stricterByDesign !== undefined) {
      expect({ jose, ours }).toEqual({ jose: true, ours: false });
    } else {
      expect(ours).toBe(jose);
    }
  });

  it('accepts the valid token on both paths (the corpus is not refused wholesale)', async () => {
    expect(await joseAccepts({ name: 'good', jws: good })).toBe(true);
    expect(await oursAccepts({ name: 'good', jws: good })).toBe(true);
  });
});

/**
 * The other signature algorithms (FAPI 2.0 5.4.1: PS256, ES256, EdDSA; ES384 and ES512 for
 * P-384 and P-521 keys): per algorithm, jose pinned to it and ours with it as the allowlist,
 * over a corpus of good and hostile tokens.
 */
const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const ec521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const ed25519 = generateKeyPairSync('ed25519');
const ed448 = generateKeyPairSync('ed448');
const rsaOther = pooledKeyObjects();
const PSS = constants.RSA_PKCS1_PSS_PADDING;

interface AlgSetup {
  alg: 'PS256' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA';
  privateKey: KeyObject;
  publicKey: KeyObject;
  sign: (input: Buffer, key: KeyObject) => Buffer;
  /** A key of the same type that did not sign. */
  otherPublic: KeyObject;
  /** A key of another type or curve that the algorithm must not take. */
  wrongType: {
    name: string;
    privateKey: KeyObject;
    publicKey: KeyObject;
    sign: (input: Buffer, key: KeyObject) => Buffer;
  };
}

const ecSign = (digest: string) => (input: Buffer, key: KeyObject) =>
  sign(digest, input, { key, dsaEncoding: 'ieee-p1363' });
const pssSign = (saltLength: number) => (input: Buffer, key: KeyObject) =>
  sign('sha256', input, { key, padding: PSS, saltLength });
const edSign = (input: Buffer, key: KeyObject) => sign(null, input, key);
const p256Other = generateKeyPairSync('ec', { namedCurve: 'P-256' });

const SETUPS: AlgSetup[] = [
  {
    alg: 'PS256',
    ...rsa,
    sign: pssSign(32),
    otherPublic: rsaOther.publicKey,
    wrongType: { name: 'an EC P-256 key', ...ec, sign: ecSign('sha256') },
  },
  {
    alg: 'ES256',
    ...ec,
    sign: ecSign('sha256'),
    otherPublic: p256Other.publicKey,
    wrongType: { name: 'an EC P-384 key', ...ec384, sign: ecSign('sha256') },
  },
  {
    alg: 'ES384',
    ...ec384,
    sign: ecSign('sha384'),
    otherPublic: generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey,
    wrongType: { name: 'an EC P-256 key', ...ec, sign: ecSign('sha384') },
  },
  {
    alg: 'ES512',
    ...ec521,
    sign: ecSign('sha512'),
    otherPublic: generateKeyPairSync('ec', { namedCurve: 'P-521' }).publicKey,
    wrongType: { name: 'an EC P-384 key', ...ec384, sign: ecSign('sha512') },
  },
  {
    alg: 'EdDSA',
    ...ed25519,
    sign: edSign,
    otherPublic: generateKeyPairSync('ed25519').publicKey,
    wrongType: { name: 'an RSA key', ...rsa, sign: (i, k) => sign('sha256', i, k) },
  },
];

function signedWith(
  setup: AlgSetup,
  header: Record<string, unknown>,
  how: { key?: KeyObject; sign?: AlgSetup['sign']; payload?: string } = {},
): string {
  const input = `${b64(JSON.stringify(header))}.${how.payload ?? b64(JSON.stringify(CLAIMS))}`;
  return `${input}.${b64((how.sign ?? setup.sign)(Buffer.from(input), how.key ?? setup.privateKey))}`;
}

function algCorpus(s: AlgSetup): Case[] {
  const h = { alg: s.alg, kid: 'k1' };
  const good = signedWith(s, h);
  const cases: Case[] = [
    { name: `a valid ${s.alg} token`, jws: good, key: s.publicKey },
    {
      name: 'a flipped signature bit',
      jws: withSignature(good, (sig) => {
        const b = Buffer.from(sig, 'base64url');
        b[5] = (b[5] as number) ^ 1;
        return b64(b);
      }),
      key: s.publicKey,
    },
    {
      name: 'a payload changed after signing',
      jws: `${good.split('.')[0]}.${b64(JSON.stringify({ ...CLAIMS, sub: 'x' }))}.${good.split('.')[2]}`,
      key: s.publicKey,
    },
    { name: 'another key of the same type', jws: good, key: s.otherPublic },
    {
      name: `signed and verified with ${s.wrongType.name}`,
      jws: signedWith(s, h, { key: s.wrongType.privateKey, sign: s.wrongType.sign }),
      key: s.wrongType.publicKey,
    },
    { name: 'an empty signature', jws: withSignature(good, () => ''), key: s.publicKey },
    {
      name: 'a signature with a byte more',
      jws: withSignature(good, (sig) => b64(Buffer.concat([Buffer.from(sig, 'base64url'), Buffer.from([0])]))),
      key: s.publicKey,
    },
    {
      name: 'a truncated signature (one byte)',
      jws: withSignature(good, (sig) => b64(Buffer.from(sig, 'base64url').subarray(1))),
      key: s.publicKey,
    },
    {
      name: 'a signature of zero bytes, full length',
      jws: withSignature(good, (sig) => b64(Buffer.alloc(Buffer.from(sig, 'base64url').length))),
      key: s.publicKey,
    },
    { name: 'alg none', jws: `${b64(JSON.stringify({ alg: 'none' }))}.${good.split('.')[1]}.`, key: s.publicKey },
    {
      name: 'alg HS256 keyed with the public key bytes',
      jws: (() => {
        const input = `${b64(JSON.stringify({ alg: 'HS256' }))}.${good.split('.')[1]}`;
        return `${input}.${b64(
          createHmac('sha256', s.publicKey.export({ format: 'der', type: 'spki' }))
            .update(input)
            .digest(),
        )}`;
      })(),
      key: s.publicKey,
    },
    {
      name: 'the header names RS256 over this signature',
      jws: `${b64(JSON.stringify({ ...h, alg: 'RS256' }))}.${good.split('.').slice(1).join('.')}`,
      key: s.publicKey,
    },
    { name: 'a private key as the verification key', jws: good, key: s.privateKey },
  ];
  if (s.alg.startsWith('ES')) {
    cases.push({
      name: 'a DER-encoded ECDSA signature',
      jws: signedWith(s, h, { sign: (i, k) => sign(`sha${s.alg.slice(2)}`, i, { key: k, dsaEncoding: 'der' }) }),
      key: s.publicKey,
    });
  }
  if (s.alg === 'PS256') {
    cases.push({ name: 'a PSS salt of 20 bytes', jws: signedWith(s, h, { sign: pssSign(20) }), key: s.publicKey });
    cases.push({ name: 'a PSS salt of 0 bytes', jws: signedWith(s, h, { sign: pssSign(0) }), key: s.publicKey });
    cases.push({
      name: 'an RS256 (PKCS#1 v1.5) signature labelled PS256',
      jws: signedWith(s, h, { sign: (i, k) => sign('sha256', i, k) }),
      key: s.publicKey,
    });
    cases.push({ name: 'a 1024-bit RSA key', jws: signedWith(s, h, { key: weak.privateKey }), key: weak.publicKey });
  }
  if (s.alg === 'EdDSA') {
    cases.push({
      name: 'an Ed448 key',
      jws: signedWith(s, h, { key: ed448.privateKey }),
      key: ed448.publicKey,
    });
  }
  return cases;
}

async function joseAcceptsWith(c: Case, alg: string): Promise<boolean> {
  try {
    const { payload } = await compactVerify(c.jws, c.key ?? rsa.publicKey, { algorithms: [alg] });
    const claims: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
    return typeof claims === 'object' && claims !== null && !Array.isArray(claims);
  } catch {
    return false;
  }
}

async function oursAcceptsWith(c: Case, alg: string): Promise<boolean> {
  try {
    await validateIdToken(c.jws, {
      issuer: ISSUER,
      clientId: CLIENT_ID,
      nonce: 'n-1',
      accessToken: 'at',
      clockTolerance: 0,
      clock: () => NOW * 1000,
      algorithms: [alg],
      keyFor: () => Promise.resolve(c.key ?? rsa.publicKey),
    });
    return true;
  } catch {
    return false;
  }
}

describe.each(SETUPS.map((s) => [s.alg, s] as const))(
  'ID-token signature check, %s: node:crypto versus jose 6',
  (alg, setup) => {
    it.each(algCorpus(setup).map((c) => [c.name, c] as const))('%s: same decision', async (_name, c) => {
      const [jose, ours] = [await joseAcceptsWith(c, alg), await oursAcceptsWith(c, alg)];
      if (c.stricterByDesign !== undefined) {
        expect({ jose, ours }).toEqual({ jose: true, ours: false });
      } else {
        expect(ours).toBe(jose);
      }
    });

    it('accepts the valid token on both paths, and only under its own algorithm', async () => {
      const good = algCorpus(setup)[0]!;
      expect(await joseAcceptsWith(good, alg)).toBe(true);
      expect(await oursAcceptsWith(good, alg)).toBe(true);
      // the same token under the default allowlist (RS256): refused
      expect(await oursAccepts(good)).toBe(false);
    });
  },
);
