/**
 * A JWT or JWE is refused on its size and its number of segments before anything in it is
 * decoded, parsed, or used to fetch a key set (the class of go-jose CVE-2025-27144): on the
 * client (the ID token, the userinfo `key` and `data` JWEs, the encrypted ID token) and on the
 * provider (client assertions, DPoP proofs). Real HTTP on loopback; key-set fetches counted.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptIdToken } from '../../src/client/id-token-jwe.js';
import {
  MAX_ENCRYPTED_ID_TOKEN_LENGTH,
  MAX_ID_TOKEN_LENGTH,
  MAX_PROVIDER_JWT_LENGTH,
  withinCompactLimits,
} from '../../src/compact-limits.js';
import { IdError } from '../../src/errors.js';
import { fapiTestKeys, type TestFapiKeys } from '../../src/provider/index.js';
import { STUB_PATHS, sendJson } from '../helpers/stub-provider.js';
import { clientFor, login, startStubProvider, type StubProvider } from '../client/support.js';
import { assertion, DpopKey, jwksHost, loginParams, push, startWithJwksUri } from '../provider/fapi/support.js';

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdError);
  return (err as IdError).code;
}

describe('withinCompactLimits', () => {
  it('counts segments and length without decoding', () => {
    expect(withinCompactLimits('a.b.c', 3, 10)).toBe(true);
    expect(withinCompactLimits('a.b.c.d.e', 5, 10)).toBe(true);
    expect(withinCompactLimits('a.b.c.d', 3, 10)).toBe(false);
    expect(withinCompactLimits('a.b', 3, 10)).toBe(false);
    expect(withinCompactLimits('a.b.c.d', 5, 10)).toBe(false);
    expect(withinCompactLimits('a.b.c', 3, 4)).toBe(false);
    expect(withinCompactLimits('.'.repeat(100_000), 3, 1e6)).toBe(false);
    expect(withinCompactLimits(undefined, 3, 10)).toBe(false);
  });
});

describe('the client', () => {
  let stub: StubProvider;
  beforeAll(async () => {
    stub = await startStubProvider();
  });
  afterAll(() => stub.close());

  it('refuses an ID token of almost a megabyte as id_token_malformed, and never fetches the key set, even when it is validly signed', async () => {
    const client = clientFor(stub);
    stub.claims = { padding: 'x'.repeat(700_000) };
    try {
      const token = await stub.idToken();
      expect(token.length).toBeGreaterThan(900_000);
      expect(await codeOf(login(client, stub))).toBe('id_token_malformed');
      expect(stub.jwksFetches).toBe(0);
      // Just over the limit is refused the same way; the same token without the padding is accepted, with the one fetch.
      stub.claims = { padding: 'x'.repeat(Math.ceil((MAX_ID_TOKEN_LENGTH * 3) / 4)) };
      expect(await codeOf(login(client, stub))).toBe('id_token_malformed');
      expect(stub.jwksFetches).toBe(0);
      stub.claims = {};
      await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
      expect(stub.jwksFetches).toBe(1);
    } finally {
      stub.claims = {};
    }
  });

  it('refuses an ID token of four segments before the key set is fetched', async () => {
    const fresh = await startStubProvider();
    try {
      const token = await fresh.idToken();
      fresh.serveTokens({ access_token: fresh.accessToken, id_token: `${token}.extra` });
      expect(await codeOf(login(clientFor(fresh), fresh))).toBe('id_token_malformed');
      expect(fresh.jwksFetches).toBe(0);
    } finally {
      await fresh.close();
    }
  });

  describe('userinfo', () => {
    let session: { sub: string; accessToken: string };
    beforeAll(async () => {
      const { sub, accessToken } = await login(clientFor(stub), stub);
      session = { sub, accessToken };
    });

    async function answered(
      change: (body: { sub: string; key: string; data: Record<string, string> }) => void,
    ): Promise<string> {
      const body = await stub.userinfoBody();
      change(body);
      stub.override(STUB_PATHS.userinfo, (_req, res) => sendJson(res, 200, body));
      try {
        return await codeOf(clientFor(stub).userinfo(session));
      } finally {
        stub.override(STUB_PATHS.userinfo, undefined);
      }
    }

    it('refuses a block key JWE of almost a megabyte as userinfo_malformed, before any private-key operation', async () => {
      const code = await answered((body) => {
        const [header, , iv, ciphertext, tag] = body.key.split('.');
        body.key = [header, 'A'.repeat(900_000), iv, ciphertext, tag].join('.');
      });
      expect(code).toBe('userinfo_malformed');
    });

    it('refuses an attribute JWE of almost a megabyte as userinfo_malformed', async () => {
      const code = await answered((body) => {
        const scope = Object.keys(body.data)[0]!;
        const [header, key, iv, , tag] = body.data[scope]!.split('.');
        body.data[scope] = [header, key, iv, 'A'.repeat(900_000), tag].join('.');
      });
      expect(code).toBe('userinfo_malformed');
    });

    it('refuses a block key with six segments as userinfo_malformed', async () => {
      expect(await answered((body) => (body.key = `${body.key}.AAAA`))).toBe('userinfo_malformed');
    });
  });

  it('refuses an encrypted ID token over its limit as id_token_malformed, before reading its header', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'ECDH-ES+A256KW', enc: 'A256GCM' })).toString('base64url');
    const big = `${header}.${'A'.repeat(MAX_ENCRYPTED_ID_TOKEN_LENGTH)}.AAAA.AAAA.AAAA`;
    expect(await codeOf(decryptIdToken(big, []))).toBe('id_token_malformed');
  });
});

describe('the provider', () => {
  let keys: TestFapiKeys;
  let hits = 0;
  let host: Awaited<ReturnType<typeof jwksHost>>;
  beforeAll(async () => {
    keys = await fapiTestKeys();
    host = await jwksHost((_req, res) => {
      hits += 1;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(keys.jwks));
    });
  });
  afterAll(() => host.close());

  it('refuses an oversized client assertion (invalid_client) without fetching the client’s jwksUri, even when it is validly signed', async () => {
    const fapi = await startWithJwksUri('oversized-assertion', `${host.origin}/jwks`, keys);
    try {
      const dpop = await DpopKey.make();
      const padded = await assertion(fapi, { padding: 'x'.repeat(MAX_PROVIDER_JWT_LENGTH) });
      expect(padded.length).toBeGreaterThan(MAX_PROVIDER_JWT_LENGTH);
      const before = hits;
      const res = await push(fapi, dpop, loginParams(fapi).params, { assertion: padded });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string; error_description: string }).error_description).toMatch(
        /not a compact JWS of three parts and at most/,
      );
      expect(hits).toBe(before);
      // A four-segment assertion the same way.
      const four = await push(fapi, dpop, loginParams(fapi).params, { assertion: `${await assertion(fapi)}.AAAA` });
      expect(four.status).toBe(401);
      expect(hits).toBe(before);
      // The baseline: a normal assertion is accepted, and the keys are fetched for it.
      const ok = await push(fapi, dpop, loginParams(fapi).params);
      expect(ok.status).toBe(201);
      expect(hits).toBe(before + 1);
    } finally {
      await fapi.close();
    }
  });

  it('refuses a DPoP proof of four segments as invalid_dpop_proof before decoding its header', async () => {
    const fapi = await startWithJwksUri('four-segment-proof', keys.jwks, keys);
    try {
      const dpop = await DpopKey.make();
      const proof = await dpop.proof(fapi, 'POST', `${fapi.baseUrl}/v2/oauth/par`, { jti: randomUUID() });
      const res = await push(fapi, dpop, loginParams(fapi).params, { proof: `${proof}.AAAA` });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe('invalid_dpop_proof');
      expect(body.error_description).toMatch(/not a compact JWS of three parts/);
    } finally {
      await fapi.close();
    }
  });
});
