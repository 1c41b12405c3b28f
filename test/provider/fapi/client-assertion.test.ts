import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestProvider, type TestProvider } from '../../../src/provider/index.js';
import { fapiTestKeys } from '../../../src/provider/testing/create-test-provider.js';
import { assertion, codeOf, fapiFixture, jwksHost, loginParams, push, startWithJwksUri, tokenCall } from './support.js';

const f = fapiFixture();

async function refusedAtToken(
  options: { assertion?: string | null; headers?: Record<string, string> },
  extra: Record<string, string> = {},
): Promise<string> {
  const { code, verifier } = await codeOf(f.test, f.dpop);
  const res = await tokenCall(f.test, f.dpop, { code, code_verifier: verifier, ...extra }, options);
  expect(res.status).toBe(401);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_client');
  return body.error_description;
}

async function refusedAtPar(signed: string): Promise<string> {
  const res = await push(f.test, f.dpop, loginParams(f.test).params, { assertion: signed });
  expect(res.status).toBe(401);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_client');
  return body.error_description;
}

describe('private_key_jwt at the token endpoint: every refusal is invalid_client (401) with the fix', () => {
  it('no assertion at all', async () => {
    expect(await refusedAtToken({ assertion: null }, { client_id: f.test.client.clientId })).toMatch(
      /client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer/,
    );
  });
  it('a client secret instead (audited)', async () => {
    expect(
      await refusedAtToken({ assertion: null }, { client_id: f.test.client.clientId, client_secret: 'anything' }),
    ).toMatch(/never client_secret/);
    expect(f.test.provider.audit(f.test.client.clientId).map((f) => f.code)).toContain('fapi_client_secret_sent');
  });
  it('HTTP Basic', async () => {
    expect(
      await refusedAtToken({
        headers: { authorization: `Basic ${Buffer.from(`${f.test.client.clientId}:x`).toString('base64')}` },
      }),
    ).toMatch(/not an Authorization header/);
  });
  it('aud is the token endpoint URL', async () => {
    expect(
      await refusedAtToken({ assertion: await assertion(f.test, { aud: `${f.test.baseUrl}/v2/oauth/token` }) }),
    ).toMatch(/aud must be the issuer/);
  });
  it('aud is an array holding the issuer', async () => {
    expect(await refusedAtToken({ assertion: await assertion(f.test, { aud: [f.test.provider.issuer] }) })).toMatch(
      /it is an array/,
    );
  });
  it('aud is missing', async () => {
    expect(await refusedAtToken({ assertion: await assertion(f.test, { aud: undefined }) })).toMatch(/it is missing/);
  });
  it('iss is another client', async () => {
    expect(
      await refusedAtToken(
        { assertion: await assertion(f.test, { iss: 'someone-else' }) },
        { client_id: f.test.client.clientId },
      ),
    ).toMatch(/iss/);
  });
  it('sub differs from the client id', async () => {
    expect(await refusedAtToken({ assertion: await assertion(f.test, { sub: 'someone-else' }) })).toMatch(
      /iss and sub must both be the client_id/,
    );
  });
  it('exp is missing', async () => {
    expect(await refusedAtToken({ assertion: await assertion(f.test, { exp: undefined }) })).toMatch(/no exp/);
  });
  it('exp has passed', async () => {
    const now = Math.floor(f.test.provider.clock() / 1000);
    expect(await refusedAtToken({ assertion: await assertion(f.test, { exp: now - 120, iat: now - 180 }) })).toMatch(
      /expired/,
    );
  });
  it('exp is more than 5 minutes ahead (audited as long-lived)', async () => {
    const now = Math.floor(f.test.provider.clock() / 1000);
    expect(await refusedAtToken({ assertion: await assertion(f.test, { exp: now + 3600 }) })).toMatch(
      /expire within 300 s/,
    );
    expect(f.test.provider.audit(f.test.client.clientId).map((f) => f.code)).toContain('client_assertion_long_lived');
  });
  it('nbf in the future', async () => {
    const now = Math.floor(f.test.provider.clock() / 1000);
    expect(await refusedAtToken({ assertion: await assertion(f.test, { nbf: now + 200 }) })).toMatch(/nbf/);
  });
  it('iat in the future', async () => {
    const now = Math.floor(f.test.provider.clock() / 1000);
    expect(await refusedAtToken({ assertion: await assertion(f.test, { iat: now + 200 }) })).toMatch(
      /iat is in the future/,
    );
  });
  it('jti is missing', async () => {
    expect(await refusedAtToken({ assertion: await assertion(f.test, { jti: undefined }) })).toMatch(/no jti/);
  });
  it('jti longer than 256 characters (256 is accepted)', async () => {
    expect(await refusedAtToken({ assertion: await assertion(f.test, { jti: 'j'.repeat(257) }) })).toMatch(
      /jti must be a string of 1 to 256 characters/,
    );
    const { code, verifier } = await codeOf(f.test, f.dpop);
    expect(
      (
        await tokenCall(
          f.test,
          f.dpop,
          { code, code_verifier: verifier },
          { assertion: await assertion(f.test, { jti: 'k'.repeat(256) }) },
        )
      ).status,
    ).toBe(200);
  });
  it('jti used a second time (audited)', async () => {
    const signed = await assertion(f.test, { jti: 'once-only' });
    const first = await codeOf(f.test, f.dpop);
    expect(
      (await tokenCall(f.test, f.dpop, { code: first.code, code_verifier: first.verifier }, { assertion: signed }))
        .status,
    ).toBe(200);
    expect(await refusedAtToken({ assertion: signed })).toMatch(/jti was already used/);
    expect(f.test.provider.audit(f.test.client.clientId).map((f) => f.code)).toContain('client_assertion_jti_reused');
  });
  it('alg none', async () => {
    const encode = (v: object): string => Buffer.from(JSON.stringify(v)).toString('base64url');
    const now = Math.floor(f.test.provider.clock() / 1000);
    const unsigned = `${encode({ alg: 'none' })}.${encode({ iss: f.test.client.clientId, sub: f.test.client.clientId, aud: f.test.provider.issuer, jti: 'n', exp: now + 60 })}.`;
    expect(await refusedAtToken({ assertion: unsigned })).toMatch(/alg none is not accepted/);
  });
  it('HS256 signed with anything', async () => {
    const { SignJWT } = await import('jose');
    const hs = await new SignJWT({
      iss: f.test.client.clientId,
      sub: f.test.client.clientId,
      aud: f.test.provider.issuer,
      jti: 'h',
      exp: Math.floor(Date.now() / 1000) + 60,
    })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('a shared secret of at least 32 bytes!'));
    expect(await refusedAtToken({ assertion: hs })).toMatch(/alg HS256 is not accepted/);
  });
  it('signed by a key that is not registered', async () => {
    const stranger = (await fapiTestKeys()).signingKey;
    expect(
      await refusedAtToken({
        assertion: await assertion(f.test, {}, {}, { ...stranger, kid: f.test.client.fapi!.signingKey.kid! }),
      }),
    ).toMatch(/signature does not verify/);
    expect(await refusedAtToken({ assertion: await assertion(f.test, {}, {}, stranger) })).toMatch(
      /No registered signing key/,
    );
  });
  it('a wrong client_assertion_type', async () => {
    const { code, verifier } = await codeOf(f.test, f.dpop);
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      redirect_uri: f.test.client.redirectUri,
      code,
      code_verifier: verifier,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
      client_assertion: await assertion(f.test),
    });
    const res = await fetch(`${f.test.baseUrl}/v2/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await f.dpop.proof(f.test, 'POST', `${f.test.baseUrl}/v2/oauth/token`),
      },
      body,
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
  });
});

describe('private_key_jwt at the PAR endpoint', () => {
  it('refuses the same mistakes there', async () => {
    expect(await refusedAtPar(await assertion(f.test, { aud: `${f.test.baseUrl}/v2/oauth/par` }))).toMatch(
      /aud must be the issuer/,
    );
    const signed = await assertion(f.test);
    expect((await push(f.test, f.dpop, loginParams(f.test).params, { assertion: signed })).status).toBe(201);
    expect(await refusedAtPar(signed)).toMatch(/jti was already used/);
  });
  it('refuses a jti longer than 256 characters, and takes one of 256', async () => {
    expect(await refusedAtPar(await assertion(f.test, { jti: 'p'.repeat(257) }))).toMatch(
      /jti must be a string of 1 to 256 characters/,
    );
    expect(
      (
        await push(f.test, f.dpop, loginParams(f.test).params, {
          assertion: await assertion(f.test, { jti: 'q'.repeat(256) }),
        })
      ).status,
    ).toBe(201);
  });
});

describe('no client_id, and an assertion that names no client: invalid_client (401), as a failed authentication', () => {
  const withoutClientId = (): Record<string, string> => {
    const { client_id: _named, ...params } = loginParams(f.test).params;
    return params;
  };
  const refused = async (res: Response): Promise<string> => {
    expect(res.status).toBe(401);
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client');
    return body.error_description;
  };

  it('at PAR, an assertion that is not a JWT', async () => {
    expect(await refused(await push(f.test, f.dpop, withoutClientId(), { assertion: 'not-a-jwt' }))).toMatch(
      /client_assertion is not a JWT/,
    );
  });
  it('at token, an assertion that is not a JWT (not a 400 for the missing client_id)', async () => {
    expect(
      await refused(
        await tokenCall(f.test, f.dpop, { code: 'x', code_verifier: 'v'.repeat(43) }, { assertion: 'not-a-jwt' }),
      ),
    ).toMatch(/client_assertion is not a JWT/);
  });
  it('at PAR and token, a signed assertion whose iss is no registered client', async () => {
    const stranger = await assertion(f.test, { iss: 'nobody', sub: 'nobody' });
    expect(await refused(await push(f.test, f.dpop, withoutClientId(), { assertion: stranger }))).toMatch(
      /iss names no client registered with profile fapi2/,
    );
    expect(
      await refused(
        await tokenCall(f.test, f.dpop, { code: 'x', code_verifier: 'v'.repeat(43) }, { assertion: stranger }),
      ),
    ).toMatch(/iss names no client registered/);
  });
});

describe('a client registered by jwksUri', () => {
  let host: Awaited<ReturnType<typeof jwksHost>>;
  let served: { keys: JWK[] };
  let hits = 0;
  let fapi: TestProvider;

  beforeAll(async () => {
    const keys = await fapiTestKeys();
    served = { keys: keys.jwks.keys };
    host = await jwksHost((_req, res) => {
      hits++;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(served));
    });
    fapi = await startWithJwksUri('by-uri', `${host.origin}/jwks.json`, keys);
  });
  afterAll(async () => {
    await fapi.close();
    await host.close();
  });

  it('fetches the keys, keeps them, and fetches again (bounded) when an assertion names an unknown kid', async () => {
    const first = await codeOf(fapi, f.dpop);
    expect((await tokenCall(fapi, f.dpop, { code: first.code, code_verifier: first.verifier })).status).toBe(200);
    expect(hits).toBe(1);
    const rotated = await fapiTestKeys();
    served = { keys: [...served.keys, ...rotated.jwks.keys.filter((k) => k.use === 'sig')] };
    fapi.provider.advanceClock(11_000);
    const second = await codeOf(fapi, f.dpop);
    const res = await tokenCall(
      fapi,
      f.dpop,
      { code: second.code, code_verifier: second.verifier },
      { assertion: await assertion(fapi, {}, {}, rotated.signingKey) },
    );
    expect(res.status).toBe(200);
    expect(hits).toBe(2);
    // An unknown kid again within 10 s: no fetch, refused.
    const stranger = (await fapiTestKeys()).signingKey;
    const third = await push(fapi, f.dpop, loginParams(fapi).params, {
      assertion: await assertion(fapi, {}, {}, stranger),
    });
    expect(third.status).toBe(401);
    expect(hits).toBe(2);
  });

  it('is fetched again once older than five minutes, even when every kid is known (a rotation or a withdrawn key takes effect)', async () => {
    const before = hits;
    const fresh = await codeOf(fapi, f.dpop);
    expect((await tokenCall(fapi, f.dpop, { code: fresh.code, code_verifier: fresh.verifier })).status).toBe(200);
    expect(hits).toBe(before);
    fapi.provider.advanceClock(301_000);
    const later = await codeOf(fapi, f.dpop);
    expect((await tokenCall(fapi, f.dpop, { code: later.code, code_verifier: later.verifier })).status).toBe(200);
    expect(hits).toBe(before + 1);
  });

  it('refuses the token request, and audits it, when the hosted JWKS loses its encryption key', async () => {
    const { code, verifier } = await codeOf(fapi, f.dpop);
    served = { keys: served.keys.filter((k) => k.use === 'sig') };
    fapi.provider.advanceClock(11_000);
    // A fresh signing kid forces a refetch, which returns no enc key.
    const rotated = await fapiTestKeys();
    served = {
      keys: [
        ...served.keys,
        {
          ...(await exportJWK((await generateKeyPair('ES256', { extractable: true })).publicKey)),
          kid: 'unused',
          use: 'sig',
        },
        ...rotated.jwks.keys.filter((k) => k.use === 'sig'),
      ],
    };
    const res = await tokenCall(
      fapi,
      f.dpop,
      { code, code_verifier: verifier },
      { assertion: await assertion(fapi, {}, {}, rotated.signingKey) },
    );
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error_description: string }).error_description).toMatch(
      /no key to encrypt the ID token/,
    );
    expect(fapi.provider.audit('by-uri').map((f) => f.code)).toContain('id_token_encryption_key_missing');
  });
});

describe('a base client is untouched', () => {
  it('still authenticates with its secret', async () => {
    const base = await createTestProvider({ autoApprove: true });
    try {
      const doc = (await (await fetch(`${base.baseUrl}/v2/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(doc['pushed_authorization_request_endpoint']).toBeUndefined();
    } finally {
      await base.close();
    }
  });
});
