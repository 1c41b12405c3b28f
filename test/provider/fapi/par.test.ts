import { decodeProtectedHeader, jwtVerify, createRemoteJWKSet } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  authorizeUri,
  codeOf,
  decryptIdToken,
  DpopKey,
  loginParams,
  push,
  startFapi,
  tokenCall,
  tokensOf,
  userinfoCall,
  fapiFixture,
} from './support.js';

const f = fapiFixture();

async function pushed(extra: Record<string, string> = {}): Promise<string> {
  const res = await push(f.test, f.dpop, loginParams(f.test, extra).params);
  expect(res.status).toBe(201);
  return ((await res.json()) as { request_uri: string }).request_uri;
}

async function errorOf(res: Response, status: number): Promise<{ error: string; error_description: string }> {
  expect(res.status).toBe(status);
  return (await res.json()) as { error: string; error_description: string };
}

async function pageCode(res: Response): Promise<string> {
  expect(res.status).toBe(400);
  expect(res.headers.get('location')).toBeNull();
  return /data-error-code="([^"]+)"/.exec(await res.text())?.[1] ?? '';
}

describe('FAPI 2.0: a whole login over HTTP', () => {
  it('PAR (201, request_uri, expires_in 60), authorize with client_id and request_uri, DPoP-bound tokens, encrypted ID token, userinfo with DPoP', async () => {
    const { params, verifier } = loginParams(f.test);
    const res = await push(f.test, f.dpop, params);
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toMatch(/no-store/);
    const body = (await res.json()) as { request_uri: string; expires_in: number };
    expect(body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    expect(body.expires_in).toBe(60);
    const back = new URL((await authorizeUri(f.test, body.request_uri)).headers.get('location') ?? '');
    expect(back.searchParams.get('state')).toBe(params['state']);
    expect(back.searchParams.get('iss')).toBe(f.test.provider.issuer);
    const token = await tokenCall(f.test, f.dpop, {
      code: back.searchParams.get('code') ?? '',
      code_verifier: verifier,
    });
    expect(token.status).toBe(200);
    const tokens = (await token.json()) as {
      access_token: string;
      id_token: string;
      token_type: string;
      expires_in: number;
    };
    expect(tokens.token_type).toBe('DPoP');
    const jweHeader = decodeProtectedHeader(tokens.id_token);
    expect(jweHeader).toMatchObject({
      alg: 'ECDH-ES+A256KW',
      enc: 'A256GCM',
      cty: 'JWT',
      kid: f.test.client.fapi!.encryptionKey.kid,
    });
    const inner = await decryptIdToken(f.test, tokens.id_token);
    const { payload, protectedHeader } = await jwtVerify(
      inner,
      createRemoteJWKSet(new URL(`${f.test.baseUrl}/v2/.well-known/jwks.json`)),
      {
        issuer: f.test.provider.issuer,
        audience: f.test.client.clientId,
      },
    );
    expect(protectedHeader.alg).toBe('PS256');
    expect(payload.nonce).toBe(params['nonce']);
    const info = await userinfoCall(f.test, f.dpop, tokens.access_token);
    expect(info.status).toBe(200);
    expect(Object.keys((await info.json()) as object).sort()).toEqual(['data', 'key', 'sub']);
  });

  it('encrypts with RSA-OAEP-256 when registered so', async () => {
    const rsa = await startFapi({ idTokenEncryptedResponseAlg: 'RSA-OAEP-256' });
    try {
      const tokens = await tokensOf(rsa, f.dpop);
      expect(decodeProtectedHeader(tokens.id_token)).toMatchObject({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT' });
      expect((await decryptIdToken(rsa, tokens.id_token)).split('.')).toHaveLength(3);
    } finally {
      await rsa.close();
    }
  });
});

describe('FAPI 2.0: PAR refusals', () => {
  it('refuses a pushed request that fails the authorize validation, with the same code', async () => {
    const bad = loginParams(f.test, { code_challenge_method: 'plain' }).params;
    const res = await push(f.test, f.dpop, bad);
    expect((await errorOf(res, 400)).error).toBe('invalid_request');
    const scope = await push(f.test, f.dpop, loginParams(f.test, { scope: 'profile.name' }).params);
    expect((await errorOf(scope, 400)).error).toBe('invalid_scope');
    const redirect = await push(
      f.test,
      f.dpop,
      loginParams(f.test, { redirect_uri: 'http://127.0.0.1:3000/other' }).params,
    );
    // RFC 9126 section 2.3: an unregistered redirect URI at PAR is invalid_request.
    const mismatch = await errorOf(redirect, 400);
    expect(mismatch.error).toBe('invalid_request');
    expect(mismatch.error_description).toMatch(/redirect_uri/);
  });

  it('refuses request_uri inside a pushed request', async () => {
    const res = await push(f.test, f.dpop, { ...loginParams(f.test).params, request_uri: 'urn:x' });
    expect((await errorOf(res, 400)).error_description).toMatch(/must not carry request_uri/);
  });

  it('accepts a pushed request with neither a DPoP proof nor dpop_jkt, binds the code to the token request proof, and the audit names it', async () => {
    const { params, verifier } = loginParams(f.test);
    const res = await push(f.test, f.dpop, params, { proof: null });
    expect(res.status).toBe(201);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const code =
      new URL((await authorizeUri(f.test, request_uri)).headers.get('location') ?? '').searchParams.get('code') ?? '';
    const token = await tokenCall(f.test, f.dpop, { code, code_verifier: verifier });
    expect(token.status).toBe(200);
    const tokens = (await token.json()) as { access_token: string; token_type: string };
    expect(tokens.token_type).toBe('DPoP');
    // The access token is bound to the key of the token request's proof: another key is refused at userinfo.
    expect((await userinfoCall(f.test, f.dpop, tokens.access_token)).status).toBe(200);
    expect((await userinfoCall(f.test, await DpopKey.make(), tokens.access_token)).status).toBe(401);
    expect(f.test.provider.audit(f.test.client.clientId).map((a) => a.code)).toContain('fapi_par_without_dpop_binding');
  });

  it('refuses a dpop_jkt that differs from the proof key', async () => {
    const other = await DpopKey.make();
    const { calculateJwkThumbprint } = await import('jose');
    const res = await push(f.test, f.dpop, {
      ...loginParams(f.test).params,
      dpop_jkt: await calculateJwkThumbprint(other.publicJwk),
    });
    expect((await errorOf(res, 400)).error).toBe('invalid_dpop_proof');
  });

  it('refuses a JSON body', async () => {
    const res = await fetch(`${f.test.baseUrl}/v2/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect((await errorOf(res, 400)).error).toBe('invalid_request');
  });

  it('refuses a base client with unauthorized_client', async () => {
    const { createTestProvider } = await import('../../../src/provider/index.js');
    const base = await createTestProvider();
    try {
      const res = await fetch(`${base.baseUrl}/v2/oauth/par`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: base.client.clientId, client_secret: base.client.clientSecret }),
      });
      expect((await errorOf(res, 400)).error).toBe('unauthorized_client');
    } finally {
      await base.close();
    }
  });
});

describe('FAPI 2.0: authorize takes only client_id and request_uri', () => {
  it('refuses the raw parameters of a FAPI client, and the audit names it', async () => {
    const { params } = loginParams(f.test);
    const res = await fetch(`${f.test.baseUrl}/v2/oauth/authorize?${new URLSearchParams(params)}`, {
      redirect: 'manual',
    });
    expect(await pageCode(res)).toBe('invalid_request');
    expect(f.test.provider.audit(f.test.client.clientId).map((f) => f.code)).toContain('fapi_raw_authorize_parameters');
  });

  it('ignores parameters repeated beside request_uri in favour of the pushed ones (RFC 9101 6.3), and the audit names them', async () => {
    const { params, verifier } = loginParams(f.test);
    const res = await push(f.test, f.dpop, params);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const { client_id: _, ...repeated } = params;
    const back = await authorizeUri(f.test, request_uri, { ...repeated, scope: 'profile.name openid', extra: 'x' });
    expect(back.status).toBe(302);
    const callback = new URL(back.headers.get('location') ?? '');
    expect(callback.searchParams.get('state')).toBe(params['state']);
    const code = callback.searchParams.get('code') ?? '';
    expect((await tokenCall(f.test, f.dpop, { code, code_verifier: verifier })).status).toBe(200);
    expect(f.test.provider.audit(f.test.client.clientId).map((a) => a.code)).toContain(
      'fapi_authorize_parameters_repeated',
    );
  });

  it('uses the pushed state, not one sent only beside request_uri', async () => {
    const { params } = loginParams(f.test);
    const { state: _, ...withoutState } = params;
    const { request_uri } = (await (await push(f.test, f.dpop, withoutState)).json()) as { request_uri: string };
    const back = await authorizeUri(f.test, request_uri, { state: 'outside' });
    expect(back.status).toBe(302);
    expect(new URL(back.headers.get('location') ?? '').searchParams.get('state')).toBeNull();
  });

  it('refuses a parameter beside request_uri that contradicts the pushed one, and does not use the request_uri up', async () => {
    const uri = await pushed();
    const contradictions: Record<string, string>[] = [
      { state: 'x' },
      { redirect_uri: 'http://127.0.0.1:3000/other' },
      { scope: 'openid' },
      { code_challenge_method: 'plain' },
    ];
    for (const contradiction of contradictions) {
      const res = await authorizeUri(f.test, uri, contradiction);
      expect(await pageCode(res)).toBe('invalid_request');
    }
    expect((await authorizeUri(f.test, uri)).status).toBe(302);
  });

  it('uses a request_uri once', async () => {
    const uri = await pushed();
    expect((await authorizeUri(f.test, uri)).status).toBe(302);
    expect(await pageCode(await authorizeUri(f.test, uri))).toBe('invalid_request_uri');
  });

  it('does not use up a request_uri on a HEAD (a link checker or prefetch): the GET after it still works, once', async () => {
    const uri = await pushed();
    const head = () =>
      fetch(
        `${f.test.baseUrl}/v2/oauth/authorize?${new URLSearchParams({ client_id: f.test.client.clientId, request_uri: uri })}`,
        { method: 'HEAD', redirect: 'manual' },
      );
    for (let i = 0; i < 2; i++) {
      const res = await head();
      expect(res.status).toBe(200);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    const back = await authorizeUri(f.test, uri);
    expect(back.status).toBe(302);
    expect(new URL(back.headers.get('location') ?? '').searchParams.get('code')).toEqual(expect.any(String));
    expect((await head()).status).toBe(400);
    expect(await pageCode(await authorizeUri(f.test, uri))).toBe('invalid_request_uri');
  });

  it('refuses a request_uri after its 60 seconds', async () => {
    const uri = await pushed();
    f.test.provider.advanceClock(61_000);
    expect(await pageCode(await authorizeUri(f.test, uri))).toBe('invalid_request_uri');
  });

  it('refuses an unknown request_uri', async () => {
    expect(await pageCode(await authorizeUri(f.test, 'urn:ietf:params:oauth:request_uri:nothing-here'))).toBe(
      'invalid_request_uri',
    );
  });

  it('a code works once, and its tokens come with the same DPoP key only', async () => {
    const { code, verifier } = await codeOf(f.test, f.dpop);
    const other = await DpopKey.make();
    const res = await tokenCall(f.test, other, { code, code_verifier: verifier });
    const body = await errorOf(res, 400);
    expect(body.error).toBe('invalid_grant');
    expect(body.error_description).toMatch(/dpop_jkt/);
    expect(f.test.provider.audit(f.test.client.clientId).map((f) => f.code)).toContain('dpop_key_not_bound');
  });
});

describe('FAPI 2.0: more PAR and authorize refusals', () => {
  it('refuses a request object, a malformed dpop_jkt, and a client_id that is not the assertion iss', async () => {
    const withRequest = await push(f.test, f.dpop, { ...loginParams(f.test).params, request: 'eyJ.e30.' });
    expect((await errorOf(withRequest, 400)).error_description).toMatch(/Request objects are not supported/);
    const badJkt = await push(
      f.test,
      f.dpop,
      { ...loginParams(f.test).params, dpop_jkt: 'not-a-thumbprint' },
      { proof: null },
    );
    expect((await errorOf(badJkt, 400)).error_description).toMatch(
      /dpop_jkt must be the base64url SHA-256 JWK thumbprint/,
    );
    const otherId = await push(f.test, f.dpop, { ...loginParams(f.test).params, client_id: 'someone-else' });
    expect((await errorOf(otherId, 401)).error).toBe('invalid_client');
  });

  it('binds the code to dpop_jkt alone, without a proof at PAR', async () => {
    const { calculateJwkThumbprint } = await import('jose');
    const { params, verifier } = loginParams(f.test);
    const res = await push(
      f.test,
      f.dpop,
      { ...params, dpop_jkt: await calculateJwkThumbprint(f.dpop.publicJwk) },
      { proof: null },
    );
    expect(res.status).toBe(201);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const code =
      new URL((await authorizeUri(f.test, request_uri)).headers.get('location') ?? '').searchParams.get('code') ?? '';
    expect((await tokenCall(f.test, f.dpop, { code, code_verifier: verifier })).status).toBe(200);
  });

  it("refuses another FAPI client's request_uri", async () => {
    const { fapiTestKeys, startProvider } = await import('../../../src/provider/index.js');
    const { testKeyPair } = await import('../../helpers/keys.js');
    const [a, b] = [await fapiTestKeys(), await fapiTestKeys()];
    const client = (clientId: string, jwks: { keys: unknown[] }) => ({
      clientId,
      redirectUris: ['http://127.0.0.1:3000/auth/callback'],
      publicKey: testKeyPair('rp').publicKeyPem,
      profile: 'fapi2' as const,
      jwks: jwks as never,
      idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW' as const,
    });
    const started = await startProvider({
      autoApprove: true,
      clients: [client('app-a', a.jwks), client('app-b', b.jwks)],
    });
    try {
      const kit = (clientId: string, keys: typeof a) => ({
        provider: started.provider,
        baseUrl: started.baseUrl,
        client: {
          clientId,
          clientSecret: '',
          privateKey: '',
          redirectUri: 'http://127.0.0.1:3000/auth/callback',
          fapi: keys,
        },
        close: () => started.close(),
      });
      const res = await push(kit('app-a', a), f.dpop, loginParams(kit('app-a', a)).params);
      const { request_uri } = (await res.json()) as { request_uri: string };
      expect(await pageCode(await authorizeUri(kit('app-b', b), request_uri))).toBe('invalid_request_uri');
    } finally {
      await started.close();
    }
  });
});
