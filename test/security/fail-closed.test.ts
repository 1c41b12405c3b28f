/**
 * What is not understood fails closed: an unknown `alg` in a header without `crit`, a `crit`
 * naming any extension (none is understood), and an `at_hash` under an algorithm whose hash is
 * not known. Client side against a loopback provider stub (the ID token; the userinfo JWEs are
 * covered by userinfo-jwe-differential.test.ts), provider side over HTTP (DPoP proofs, client
 * assertions); key-set fetches counted.
 */
import { createPrivateKey, KeyObject, randomUUID, sign, type KeyObject as NodeKey } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessTokenHash, atHashAlgorithm } from '../../src/client/token-hash.js';
import { IdError } from '../../src/errors.js';
import { fapiTestKeys, type TestFapiKeys, type TestProvider } from '../../src/provider/index.js';
import { clientFor, login, startStubProvider, type StubProvider } from '../client/support.js';
import { DpopKey, jwksHost, loginParams, push, startWithJwksUri } from '../provider/fapi/support.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS signed by hand (jose refuses to sign an unknown crit), RSA PKCS#1 v1.5 or ECDSA P-256 over SHA-256. */
function signByHand(header: Record<string, unknown>, claims: Record<string, unknown>, key: NodeKey): string {
  const input = `${b64(header)}.${b64(claims)}`;
  const signature =
    key.asymmetricKeyType === 'ec'
      ? sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : sign('sha256', Buffer.from(input), key);
  return `${input}.${signature.toString('base64url')}`;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdError);
  return (err as IdError).code;
}

describe('at_hash under an algorithm with no known hash', () => {
  it('uses the hash of the token’s own algorithm, and refuses one it does not know (id_token_alg_not_allowed)', () => {
    expect(atHashAlgorithm('RS256')).toBe('sha256');
    expect(atHashAlgorithm('PS256')).toBe('sha256');
    expect(atHashAlgorithm('ES384')).toBe('sha384');
    expect(atHashAlgorithm('EdDSA')).toBe('sha512');
    expect(accessTokenHash('RS256', 'token')).toHaveLength(22);
    expect(accessTokenHash('ES512', 'token')).toHaveLength(43);
    for (const alg of ['RS257', 'none', 'HS256', 'Ed448', '', undefined, 256, 'toString', '__proto__']) {
      expect(() => atHashAlgorithm(alg), String(alg)).toThrow(
        expect.objectContaining({ code: 'id_token_alg_not_allowed' }),
      );
    }
  });
});

describe('the ID token (client, over HTTP)', () => {
  let stub: StubProvider;
  beforeAll(async () => {
    stub = await startStubProvider();
  });
  afterAll(() => stub.close());

  async function refusedWith(header: Record<string, unknown>): Promise<string> {
    stub.nonce = 'nonce-abc-123';
    const token = signByHand({ typ: 'JWT', kid: 'k1', ...header }, stub.idTokenClaims(), stub.keys[0]!.privateKey);
    stub.serveTokens({ access_token: stub.accessToken, id_token: token });
    const fetches = stub.jwksFetches;
    const code = await codeOf(login(clientFor(stub), stub));
    // Refused from the header alone: the key set is never fetched for it.
    expect(stub.jwksFetches).toBe(fetches);
    return code;
  }

  it.each(['RS257', 'none', 'HS256', 'RSA-OAEP-256', 'rs256'])(
    'refuses alg %s in a header without crit (id_token_alg_not_allowed)',
    async (alg) => {
      expect(await refusedWith({ alg })).toBe('id_token_alg_not_allowed');
    },
  );

  it.each([
    ['an unknown extension', { crit: ['urn:x'], 'urn:x': 1 }],
    ['a registered header (exp)', { crit: ['exp'], exp: 1 }],
    ['an empty list', { crit: [] }],
    ['b64', { crit: ['b64'], b64: true }],
  ])('refuses crit naming %s (id_token_malformed)', async (_name, extra) => {
    expect(await refusedWith({ alg: 'RS256', ...extra })).toBe('id_token_malformed');
  });
});

describe('the provider (over HTTP)', () => {
  let keys: TestFapiKeys;
  let hits = 0;
  let host: Awaited<ReturnType<typeof jwksHost>>;
  let fapi: TestProvider;
  beforeAll(async () => {
    keys = await fapiTestKeys();
    host = await jwksHost((_req, res) => {
      hits += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(keys.jwks));
    });
    fapi = await startWithJwksUri('fail-closed', `${host.origin}/jwks`, keys);
  });
  afterAll(async () => {
    await fapi.close();
    await host.close();
  });

  function assertionClaims(): Record<string, unknown> {
    const now = Math.floor(fapi.provider.clock() / 1000);
    return {
      iss: fapi.client.clientId,
      sub: fapi.client.clientId,
      aud: fapi.provider.issuer,
      jti: randomUUID(),
      iat: now,
      exp: now + 60,
    };
  }

  it('refuses a client assertion whose header names crit (invalid_client), before fetching the client’s keys', async () => {
    const signingKey = keys.signingKey;
    const key = createPrivateKey({ key: signingKey as never, format: 'jwk' });
    const before = hits;
    for (const extra of [{ crit: ['urn:x'], 'urn:x': 1 }, { crit: ['exp'], exp: 1 }, { crit: [] }]) {
      const signed = signByHand({ alg: 'ES256', kid: signingKey.kid, ...extra }, assertionClaims(), key);
      const res = await push(fapi, await DpopKey.make(), loginParams(fapi).params, { assertion: signed });
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_client');
      expect(body.error_description).toMatch(/crit/);
    }
    expect(hits).toBe(before);
  });

  it('refuses a client assertion with an unknown alg (invalid_client), before fetching the client’s keys', async () => {
    const key = createPrivateKey({ key: keys.signingKey as never, format: 'jwk' });
    const before = hits;
    for (const alg of ['ES257', 'none', 'HS256']) {
      const signed = signByHand({ alg, kid: keys.signingKey.kid }, assertionClaims(), key);
      const res = await push(fapi, await DpopKey.make(), loginParams(fapi).params, { assertion: signed });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
    }
    expect(hits).toBe(before);
  });

  it('refuses a DPoP proof whose header names crit, or has an unknown alg (invalid_dpop_proof)', async () => {
    const dpop = await DpopKey.make();
    const key = KeyObject.from(dpop.privateKey as Parameters<typeof KeyObject.from>[0]);
    const htu = `${fapi.baseUrl}/v2/oauth/par`;
    const claims = (): Record<string, unknown> => ({
      htm: 'POST',
      htu,
      iat: Math.floor(fapi.provider.clock() / 1000),
      jti: randomUUID(),
    });
    const headers: Array<[Record<string, unknown>, RegExp]> = [
      [{ crit: ['urn:x'], 'urn:x': 1 }, /crit/],
      [{ crit: ['exp'], exp: 1 }, /crit/],
      [{ alg: 'ES257' }, /alg ES257 is not accepted/],
      [{ alg: 'none' }, /alg none is not accepted/],
    ];
    for (const [extra, description] of headers) {
      const proof = signByHand({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpop.publicJwk, ...extra }, claims(), key);
      const res = await push(fapi, dpop, loginParams(fapi).params, { proof });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_dpop_proof');
      expect(body.error_description).toMatch(description);
    }
  });
});
