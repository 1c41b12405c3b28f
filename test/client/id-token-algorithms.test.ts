/**
 * ID tokens signed RS256, PS256, ES256/384/512 and EdDSA, verified with a key set served over
 * real HTTP: the app's allowlist decides (RS256 alone by default, so an app that sets nothing
 * behaves as before), and the key is chosen by kid, kty and alg, never by the token alone.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkIdTokenAlgorithms, ID_TOKEN_SIGNING_ALGORITHMS, validateIdToken } from '../../src/client/id-token.js';
import { HttpClient } from '../../src/client/http.js';
import { RemoteKeySet } from '../../src/client/jwks.js';
import { pooledKeyObjects } from '../helpers/keys.js';

const ISSUER = 'https://id.example/v2';
const CLIENT_ID = 'client-1';
const b64 = (v: string | Buffer) => Buffer.from(v).toString('base64url');

const rsa = pooledKeyObjects();
const rsaPss = pooledKeyObjects();
const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p256b = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
const ed = generateKeyPairSync('ed25519');
const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
const x25519 = generateKeyPairSync('x25519');

const jwk = (key: KeyObject, extra: Record<string, unknown>) => ({ ...key.export({ format: 'jwk' }), ...extra });

let keys: unknown[] = [];
let server: Server;
let jwksUrl: URL;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  jwksUrl = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/.well-known/jwks.json`);
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const NOW = Math.floor(Date.now() / 1000);
const CLAIMS = { iss: ISSUER, sub: 'person-1', aud: CLIENT_ID, exp: NOW + 300, iat: NOW - 5 };

function token(
  header: Record<string, unknown>,
  key: KeyObject,
  how: 'rs' | 'ps' | 'es256' | 'es384' | 'es512' | 'ed',
): string {
  const input = Buffer.from(`${b64(JSON.stringify(header))}.${b64(JSON.stringify(CLAIMS))}`);
  const sig =
    how === 'rs'
      ? sign('sha256', input, key)
      : how === 'ps'
        ? sign('sha256', input, { key, padding: 6, saltLength: 32 })
        : how === 'ed'
          ? sign(null, input, key)
          : sign(`sha${how.slice(2)}`, input, { key, dsaEncoding: 'ieee-p1363' });
  return `${input.toString()}.${b64(sig)}`;
}

/** Validate with a fresh key set over HTTP; resolves to the sub or the error code. */
async function outcome(idToken: string, algorithms?: readonly string[]): Promise<string> {
  const set = new RemoteKeySet({
    http: new HttpClient({ timeout: 5000, maxResponseBytes: 1 << 20 }),
    url: jwksUrl,
    clock: Date.now,
    cooldown: 0,
    maxAge: 60_000,
  });
  try {
    const claims = await validateIdToken(idToken, {
      issuer: ISSUER,
      clientId: CLIENT_ID,
      nonce: undefined,
      accessToken: 'at',
      clockTolerance: 5,
      clock: Date.now,
      ...(algorithms === undefined ? {} : { algorithms }),
      keyFor: (kid, alg) => set.keyFor(kid, alg),
    });
    return `ok:${claims.sub}`;
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

const FAPI = ['PS256', 'ES256', 'EdDSA'];

describe('ID-token signature algorithms, keys from a key set over HTTP', () => {
  beforeAll(() => {
    keys = [
      jwk(rsa.publicKey, { kid: 'rsa', use: 'sig', alg: 'RS256' }),
      jwk(rsaPss.publicKey, { kid: 'pss', use: 'sig', alg: 'PS256' }),
      jwk(p256.publicKey, { kid: 'p256', use: 'sig' }),
      jwk(p384.publicKey, { kid: 'p384' }),
      jwk(p521.publicKey, { kid: 'p521', alg: 'ES512' }),
      jwk(ed.publicKey, { kid: 'ed', use: 'sig', alg: 'EdDSA' }),
      jwk(k1.publicKey, { kid: 'k1' }),
      jwk(x25519.publicKey, { kid: 'x', use: 'enc' }),
    ];
  });

  it('verifies PS256, ES256 and EdDSA under the FAPI allowlist', async () => {
    expect(await outcome(token({ alg: 'PS256', kid: 'pss' }, rsaPss.privateKey, 'ps'), FAPI)).toBe('ok:person-1');
    expect(await outcome(token({ alg: 'ES256', kid: 'p256' }, p256.privateKey, 'es256'), FAPI)).toBe('ok:person-1');
    expect(await outcome(token({ alg: 'EdDSA', kid: 'ed' }, ed.privateKey, 'ed'), FAPI)).toBe('ok:person-1');
  });

  it('verifies ES384 and ES512 with P-384 and P-521 keys when allowed', async () => {
    expect(await outcome(token({ alg: 'ES384', kid: 'p384' }, p384.privateKey, 'es384'), ['ES384'])).toBe(
      'ok:person-1',
    );
    expect(await outcome(token({ alg: 'ES512', kid: 'p521' }, p521.privateKey, 'es512'), ['ES512'])).toBe(
      'ok:person-1',
    );
  });

  it('keeps RS256 alone by default: a PS256, ES256 or EdDSA token is id_token_alg_not_allowed', async () => {
    expect(await outcome(token({ alg: 'RS256', kid: 'rsa' }, rsa.privateKey, 'rs'))).toBe('ok:person-1');
    expect(await outcome(token({ alg: 'PS256', kid: 'pss' }, rsaPss.privateKey, 'ps'))).toBe(
      'id_token_alg_not_allowed',
    );
    expect(await outcome(token({ alg: 'ES256', kid: 'p256' }, p256.privateKey, 'es256'))).toBe(
      'id_token_alg_not_allowed',
    );
    expect(await outcome(token({ alg: 'EdDSA', kid: 'ed' }, ed.privateKey, 'ed'))).toBe('id_token_alg_not_allowed');
  });

  it('refuses an algorithm outside the allowlist even with a valid signature (RS256 under the FAPI list)', async () => {
    expect(await outcome(token({ alg: 'RS256', kid: 'rsa' }, rsa.privateKey, 'rs'), FAPI)).toBe(
      'id_token_alg_not_allowed',
    );
    expect(await outcome(token({ alg: 'ES384', kid: 'p384' }, p384.privateKey, 'es384'), FAPI)).toBe(
      'id_token_alg_not_allowed',
    );
  });

  it('never takes a key of another type for the algorithm: a kid naming an RSA key for ES256 is not found', async () => {
    expect(await outcome(token({ alg: 'ES256', kid: 'rsa' }, p256.privateKey, 'es256'), FAPI)).toBe(
      'id_token_key_not_found',
    );
    expect(await outcome(token({ alg: 'EdDSA', kid: 'p256' }, ed.privateKey, 'ed'), FAPI)).toBe(
      'id_token_key_not_found',
    );
    // an ES256 token naming the P-384 key: the curve does not fit
    expect(await outcome(token({ alg: 'ES256', kid: 'p384' }, p384.privateKey, 'es256'), ['ES256', 'ES384'])).toBe(
      'id_token_key_not_found',
    );
  });

  it("honours the key's own alg: an RSA key published for RS256 does not verify PS256, nor one for PS256 RS256", async () => {
    expect(await outcome(token({ alg: 'PS256', kid: 'rsa' }, rsa.privateKey, 'ps'), ['RS256', 'PS256'])).toBe(
      'id_token_key_not_found',
    );
    expect(await outcome(token({ alg: 'RS256', kid: 'pss' }, rsaPss.privateKey, 'rs'), ['RS256', 'PS256'])).toBe(
      'id_token_key_not_found',
    );
  });

  it('skips keys on curves no algorithm takes (secp256k1, X25519)', async () => {
    expect(await outcome(token({ alg: 'ES256', kid: 'k1' }, p256.privateKey, 'es256'), FAPI)).toBe(
      'id_token_key_not_found',
    );
    expect(await outcome(token({ alg: 'EdDSA', kid: 'x' }, ed.privateKey, 'ed'), FAPI)).toBe('id_token_key_not_found');
  });

  it('refuses a signature made by another key of the right type', async () => {
    expect(await outcome(token({ alg: 'ES256', kid: 'p256' }, p256b.privateKey, 'es256'), FAPI)).toBe(
      'id_token_signature_invalid',
    );
  });
});

describe('a token without kid', () => {
  it('takes the only key of the algorithm, whatever other keys the set holds', async () => {
    keys = [jwk(rsa.publicKey, { kid: 'rsa' }), jwk(p256.publicKey, { kid: 'p256' }), jwk(ed.publicKey, { kid: 'ed' })];
    expect(await outcome(token({ alg: 'ES256' }, p256.privateKey, 'es256'), FAPI)).toBe('ok:person-1');
    expect(await outcome(token({ alg: 'EdDSA' }, ed.privateKey, 'ed'), FAPI)).toBe('ok:person-1');
    expect(await outcome(token({ alg: 'RS256' }, rsa.privateKey, 'rs'))).toBe('ok:person-1');
  });

  it('is id_token_kid_ambiguous when two keys fit the algorithm', async () => {
    keys = [jwk(rsa.publicKey, { kid: 'rsa' }), jwk(p256.publicKey, { kid: 'a' }), jwk(p256b.publicKey, { kid: 'b' })];
    expect(await outcome(token({ alg: 'ES256' }, p256.privateKey, 'es256'), FAPI)).toBe('id_token_kid_ambiguous');
  });
});

describe('checkIdTokenAlgorithms (the allowlist option)', () => {
  it('accepts every supported algorithm and removes duplicates', () => {
    expect(checkIdTokenAlgorithms([...ID_TOKEN_SIGNING_ALGORITHMS, 'ES256'], 'opt')).toEqual([
      ...ID_TOKEN_SIGNING_ALGORITHMS,
    ]);
  });

  it.each([[[]], [['none']], [['HS256']], [['RS256', 'RS512']], ['RS256'], [[7]]])(
    'refuses %j with a sentence naming the option',
    (value) => {
      expect(() => checkIdTokenAlgorithms(value, 'IdClient: idTokenSigningAlgorithms')).toThrow(
        /^IdClient: idTokenSigningAlgorithms .*RS256, PS256, ES256, ES384, ES512, EdDSA/,
      );
    },
  );
});
