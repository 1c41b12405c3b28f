/**
 * A userinfo JWT's signature is checked on node:crypto (`verifyCompactJws` in src/jose, as the ID token's),
 * no longer with jose's `compactVerify`. This differential test runs the former jose path (the
 * same header, algorithm and kid checks, then `compactVerify` with the allowlist, the payload read
 * and its iss/aud checked) and `readUserinfoJwt` over the same hostile corpus, per algorithm, and
 * shows they reach the same decision: the same claims, or the same error code. Where ours is
 * stricter by design, the case says so and expects exactly that.
 */
import { constants, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { compactVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { IdError } from '../../src/errors.js';
import { readUserinfoJwt } from '../../src/client/userinfo-jwt.js';
import { pooledKeyObjects } from '../helpers/keys.js';

const ISSUER = 'https://id.example';
const CLIENT_ID = 'client-1';
const CLAIMS = { iss: ISSUER, aud: CLIENT_ID, sub: 'person-1', name: 'Person One' };
const b64 = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

const rsa = pooledKeyObjects();
const rsaOther = pooledKeyObjects();
const weak = generateKeyPairSync('rsa', { modulusLength: 1024 });
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const ed25519 = generateKeyPairSync('ed25519');

type Signer = (input: Buffer, key: KeyObject) => Buffer;
const rsSign: Signer = (i, k) => sign('sha256', i, k);
const psSign: Signer = (i, k) =>
  sign('sha256', i, { key: k, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 });
const esSign =
  (digest: string): Signer =>
  (i, k) =>
    sign(digest, i, { key: k, dsaEncoding: 'ieee-p1363' });
const edSign: Signer = (i, k) => sign(null, i, k);

/** A JWS over exactly these segments. */
function signed(headerSeg: string, payloadSeg: string, key: KeyObject, how: Signer): string {
  const input = `${headerSeg}.${payloadSeg}`;
  return `${input}.${b64(how(Buffer.from(input), key))}`;
}
const jwt = (header: Record<string, unknown>, key: KeyObject, how: Signer, claims: unknown = CLAIMS): string =>
  signed(b64(JSON.stringify(header)), b64(JSON.stringify(claims)), key, how);
function withSignature(jws: string, change: (sig: string) => string): string {
  const at = jws.lastIndexOf('.');
  return `${jws.slice(0, at)}.${change(jws.slice(at + 1))}`;
}
function nonCanonical(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(segment[segment.length - 1] as string);
  return segment.slice(0, -1) + (alphabet[last ^ 1] as string);
}

interface Case {
  name: string;
  jws: string;
  /** The key the key set gives. */
  key: KeyObject;
  algorithms: readonly string[];
  stricterByDesign?: string;
}

/** The former decision, with jose's compactVerify: the claims, or the error code. */
async function joseReads(c: Case): Promise<unknown> {
  const dot = c.jws.indexOf('.');
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = JSON.parse(Buffer.from(c.jws.slice(0, dot), 'base64url').toString('utf8')) as typeof header;
  } catch {
    return 'userinfo_malformed';
  }
  if (
    typeof header !== 'object' ||
    header === null ||
    typeof header.alg !== 'string' ||
    !c.algorithms.includes(header.alg)
  )
    return 'userinfo_alg_not_allowed';
  if (header.kid !== undefined && typeof header.kid !== 'string') return 'userinfo_malformed';
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(c.jws, c.key, { algorithms: [...c.algorithms] }));
  } catch {
    return 'userinfo_malformed';
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload).toString('utf8'));
  } catch {
    return 'userinfo_malformed';
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return 'userinfo_malformed';
  const cl = claims as Record<string, unknown>;
  if (cl.iss !== undefined && cl.iss !== ISSUER) return 'userinfo_malformed';
  if (cl.aud !== undefined && !(Array.isArray(cl.aud) ? cl.aud : [cl.aud]).includes(CLIENT_ID))
    return 'userinfo_malformed';
  return cl;
}

/** Our decision: the claims, or the error code. */
async function oursReads(c: Case): Promise<unknown> {
  try {
    return await readUserinfoJwt(c.jws, {
      issuer: ISSUER,
      clientId: CLIENT_ID,
      algorithms: c.algorithms,
      decryptionKeys: [],
      keyFor: () => Promise.resolve(c.key),
    });
  } catch (err) {
    if (err instanceof IdError) return err.code;
    throw err;
  }
}

const SETUPS = [
  { alg: 'RS256', ...rsa, how: rsSign, other: rsaOther.publicKey, wrong: { ...ec, how: esSign('sha256') } },
  { alg: 'PS256', ...rsa, how: psSign, other: rsaOther.publicKey, wrong: { ...ec, how: esSign('sha256') } },
  {
    alg: 'ES256',
    ...ec,
    how: esSign('sha256'),
    other: generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey,
    wrong: { ...ec384, how: esSign('sha256') },
  },
  {
    alg: 'ES384',
    ...ec384,
    how: esSign('sha384'),
    other: generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey,
    wrong: { ...ec, how: esSign('sha384') },
  },
  {
    alg: 'EdDSA',
    ...ed25519,
    how: edSign,
    other: generateKeyPairSync('ed25519').publicKey,
    wrong: { ...rsa, how: rsSign },
  },
] as const;

function corpus(s: (typeof SETUPS)[number]): Case[] {
  const h = { alg: s.alg, kid: 'k1' };
  const good = jwt(h, s.privateKey, s.how);
  const [hs = '', ps = ''] = good.split('.');
  const base = { key: s.publicKey, algorithms: [s.alg] };
  const flip = (sig: string): string => {
    const b = Buffer.from(sig, 'base64url');
    b[5] = (b[5] as number) ^ 1;
    return b64(b);
  };
  return [
    { name: 'a valid token', jws: good, ...base },
    {
      name: 'a valid token, several algorithms allowed',
      jws: good,
      ...base,
      algorithms: ['RS256', 'PS256', 'ES256', 'ES384', 'ES512', 'EdDSA'],
    },
    { name: 'an algorithm not allowed', jws: good, ...base, algorithms: [s.alg === 'RS256' ? 'PS256' : 'RS256'] },
    { name: 'alg none, empty signature', jws: `${b64(JSON.stringify({ alg: 'none' }))}.${ps}.`, ...base },
    { name: 'alg HS256', jws: jwt({ alg: 'HS256' }, s.privateKey, s.how), ...base },
    { name: 'another key of the same type', jws: good, ...base, key: s.other },
    {
      name: 'signed and verified with a key of another type',
      jws: jwt(h, s.wrong.privateKey, s.wrong.how),
      ...base,
      key: s.wrong.publicKey,
    },
    {
      name: 'a 1024-bit RSA key',
      jws: jwt(h, weak.privateKey, s.alg === 'PS256' ? psSign : rsSign),
      ...base,
      key: weak.publicKey,
    },
    { name: 'a flipped signature bit', jws: withSignature(good, flip), ...base },
    { name: 'an empty signature', jws: withSignature(good, () => ''), ...base },
    {
      name: 'a signature with a byte more',
      jws: withSignature(good, (sig) => b64(Buffer.concat([Buffer.from(sig, 'base64url'), Buffer.from([0])]))),
      ...base,
    },
    {
      name: 'a truncated signature',
      jws: withSignature(good, (sig) => b64(Buffer.from(sig, 'base64url').subarray(1))),
      ...base,
    },
    {
      name: 'a payload changed after signing',
      jws: `${hs}.${b64(JSON.stringify({ ...CLAIMS, sub: 'x' }))}.${good.split('.')[2]}`,
      ...base,
    },
    { name: 'a kid that is not a string', jws: jwt({ alg: s.alg, kid: 1 }, s.privateKey, s.how), ...base },
    { name: 'a header that is not JSON', jws: signed(b64('{alg'), ps, s.privateKey, s.how), ...base },
    { name: 'a payload that is not JSON', jws: signed(hs, b64('not json'), s.privateKey, s.how), ...base },
    { name: 'a payload that is an array', jws: jwt(h, s.privateKey, s.how, [1]), ...base },
    { name: 'an empty payload', jws: signed(hs, '', s.privateKey, s.how), ...base },
    { name: 'another issuer', jws: jwt(h, s.privateKey, s.how, { ...CLAIMS, iss: 'https://other.example' }), ...base },
    { name: 'another audience', jws: jwt(h, s.privateKey, s.how, { ...CLAIMS, aud: ['other'] }), ...base },
    { name: 'no iss and no aud', jws: jwt(h, s.privateKey, s.how, { sub: 'person-1' }), ...base },
    {
      name: 'crit naming an unknown extension',
      jws: jwt({ ...h, crit: ['urn:x'], 'urn:x': 1 }, s.privateKey, s.how),
      ...base,
    },
    { name: 'crit b64 with b64 true', jws: jwt({ ...h, crit: ['b64'], b64: true }, s.privateKey, s.how), ...base },
    { name: 'b64 false outside crit', jws: jwt({ ...h, b64: false }, s.privateKey, s.how), ...base },
    { name: 'crit as an empty list', jws: jwt({ ...h, crit: [] }, s.privateKey, s.how), ...base },
    { name: 'crit naming b64 without b64', jws: jwt({ ...h, crit: ['b64'] }, s.privateKey, s.how), ...base },
    {
      name: 'crit b64 with an unencoded payload',
      jws: signed(
        b64(JSON.stringify({ ...h, crit: ['b64'], b64: false })),
        JSON.stringify(CLAIMS),
        s.privateKey,
        s.how,
      ),
      ...base,
    },
    { name: 'four segments', jws: `${good}.x`, ...base },
    { name: 'two segments', jws: `${hs}.${ps}`, ...base },
    {
      name: 'a space inside the payload segment',
      jws: `${hs}.${ps.slice(0, 3)} ${ps.slice(3)}.${good.split('.')[2]}`,
      ...base,
    },
    {
      name: 'a non-canonical signature segment',
      jws: withSignature(good, nonCanonical),
      ...base,
      // A signature of a whole number of 3-byte groups has no unused bits: the flip changes its bytes.
      ...(Buffer.from(good.slice(good.lastIndexOf('.') + 1), 'base64url').length % 3 === 0
        ? {}
        : {
            stricterByDesign:
              'one strict base64url decoder reads every JWS signature and JWE part (RFC 7515 2, RFC 4648 3.5); jose 6 ignores the stray bits',
          }),
    },
  ];
}

describe('userinfo JWT signature check: node:crypto path versus jose 6', () => {
  for (const s of SETUPS) {
    it.each(corpus(s).map((c) => [c.name, c] as const))(`${s.alg}: %s: same decision`, async (_name, c) => {
      const [jose, ours] = [await joseReads(c), await oursReads(c)];
      if (c.stricterByDesign !== undefined) {
        expect(jose, 'jose accepts').toEqual(expect.objectContaining({ sub: expect.any(String) }));
        expect(ours, c.stricterByDesign).toBe('userinfo_malformed');
      } else {
        expect(ours).toEqual(jose);
      }
    });
  }

  it('accepts the valid token on both paths (the corpus is not refused wholesale)', async () => {
    const c = corpus(SETUPS[0])[0] as Case;
    expect(await oursReads(c)).toEqual(CLAIMS);
    expect(await joseReads(c)).toEqual(CLAIMS);
  });
});
