import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider, type StartedProvider } from '../../src/provider/index.js';
import {
  authorizeCode,
  manualClock,
  OTHER_CLIENT,
  pkce,
  postToken,
  providerOptions,
  startTestProvider,
  TEST_CLIENT,
  tokenBody,
} from '../helpers/provider-fixtures.js';

const clock = manualClock();
let started: StartedProvider;
let base: string;

beforeAll(async () => {
  started = await startTestProvider({ autoApprove: true, clock: clock.now });
  base = started.baseUrl;
});
afterAll(() => started.close());

async function freshCode(overrides: Record<string, string | null> = {}): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  return { code: await authorizeCode(base, challenge, overrides), verifier };
}

async function expectOAuthError(res: Response, status: number, error: string): Promise<Record<string, unknown>> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  return body;
}

function basic(id: string, secret: string): string {
  const enc = (s: string): string => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(id)}:${enc(secret)}`).toString('base64')}`;
}

describe('token endpoint: success', () => {
  it('returns access_token, id_token, token_type Bearer and expires_in, not cacheable', async () => {
    const { code, verifier } = await freshCode();
    const res = await postToken(base, tokenBody(code, verifier));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['access_token', 'expires_in', 'id_token', 'token_type']);
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(600);
  });

  it('signs the ID token RS256 with a published kid and the claims iss, pairwise sub, aud, nonce, exp, iat, auth_time, at_hash', async () => {
    const { code, verifier } = await freshCode();
    const body = (await (await postToken(base, tokenBody(code, verifier))).json()) as {
      id_token: string;
      access_token: string;
    };
    const header = decodeProtectedHeader(body.id_token);
    expect(header.alg).toBe('RS256');
    const jwks = (await (await fetch(`${base}/v2/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    expect(jwks.keys.map((k) => k.kid)).toContain(header.kid);
    const { payload } = await jwtVerify(
      body.id_token,
      createRemoteJWKSet(new URL(`${base}/v2/.well-known/jwks.json`)),
      {
        algorithms: ['RS256'],
        currentDate: new Date(clock.now()),
      },
    );
    const iat = Math.floor(clock.now() / 1000);
    expect(payload).toEqual({
      iss: `${base}/v2`,
      sub: started.provider.subjectFor(TEST_CLIENT.clientId, started.provider.personas[0]!.id),
      aud: TEST_CLIENT.clientId,
      nonce: 'nonce-456',
      exp: iat + 600,
      iat,
      auth_time: iat,
      at_hash: createHash('sha256').update(body.access_token).digest().subarray(0, 16).toString('base64url'),
      sid: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
    });
  });

  it('leaves nonce out of the ID token when the authorization request had none', async () => {
    const { code, verifier } = await freshCode({ nonce: null });
    const body = (await (await postToken(base, tokenBody(code, verifier))).json()) as { id_token: string };
    const payload = JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    expect('nonce' in payload).toBe(false);
  });

  it('accepts application/x-www-form-urlencoded, as widely used OAuth clients send', async () => {
    const { code, verifier } = await freshCode();
    const res = await fetch(`${base}/v2/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams(tokenBody(code, verifier) as Record<string, string>),
    });
    expect(res.status).toBe(200);
  });

  it('accepts client credentials by HTTP Basic', async () => {
    const { code, verifier } = await freshCode();
    const res = await postToken(base, tokenBody(code, verifier, { client_id: undefined, client_secret: undefined }), {
      authorization: basic(TEST_CLIENT.clientId, TEST_CLIENT.clientSecret),
    });
    expect(res.status).toBe(200);
  });
});

describe('token endpoint: invalid request (400 invalid_request)', () => {
  for (const field of ['client_id', 'client_secret', 'code', 'redirect_uri', 'grant_type']) {
    it(`says invalid_request when ${field} is missing`, async () => {
      const { code, verifier } = await freshCode();
      const body = await expectOAuthError(
        await postToken(base, tokenBody(code, verifier, { [field]: undefined })),
        400,
        'invalid_request',
      );
      expect(body.error_description).toContain(field);
    });
  }

  it('says invalid_request when a field is not a string', async () => {
    const { code, verifier } = await freshCode();
    await expectOAuthError(
      await postToken(base, tokenBody(code, verifier, { code: { $ne: 1 } })),
      400,
      'invalid_request',
    );
  });

  it('says invalid_request when a form parameter is sent twice', async () => {
    const { code, verifier } = await freshCode();
    const form = new URLSearchParams(tokenBody(code, verifier) as Record<string, string>);
    form.append('code', 'another');
    await expectOAuthError(
      await fetch(`${base}/v2/oauth/token`, { method: 'POST', body: form }),
      400,
      'invalid_request',
    );
  });

  it('says invalid_request for a body that is not JSON or a form', async () => {
    await expectOAuthError(
      await fetch(`${base}/v2/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'code=x',
      }),
      400,
      'invalid_request',
    );
  });

  it('says invalid_request for malformed JSON', async () => {
    await expectOAuthError(
      await fetch(`${base}/v2/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"code":',
      }),
      400,
      'invalid_request',
    );
  });

  it('refuses a body over 16 KB with 413 invalid_request', async () => {
    await expectOAuthError(await postToken(base, { padding: 'x'.repeat(20_000) }), 413, 'invalid_request');
  });

  it('says invalid_grant for a token request without code_verifier (RFC 7636 4.6: PKCE fails)', async () => {
    const { code, verifier } = await freshCode();
    const body = await expectOAuthError(
      await postToken(base, tokenBody(code, verifier, { code_verifier: undefined })),
      400,
      'invalid_grant',
    );
    expect(body.error_description).toMatch(/code_verifier/);
  });

  it('says invalid_request for a code_verifier outside 43-128 characters of the allowed set', async () => {
    const { code } = await freshCode();
    await expectOAuthError(await postToken(base, tokenBody(code, 'short')), 400, 'invalid_request');
  });

  it('says invalid_request when both HTTP Basic and client_secret in the body are used', async () => {
    const { code, verifier } = await freshCode();
    await expectOAuthError(
      await postToken(base, tokenBody(code, verifier), {
        authorization: basic(TEST_CLIENT.clientId, TEST_CLIENT.clientSecret),
      }),
      400,
      'invalid_request',
    );
  });

  it('says unsupported_grant_type for any grant other than authorization_code', async () => {
    const { code, verifier } = await freshCode();
    await expectOAuthError(
      await postToken(base, tokenBody(code, verifier, { grant_type: 'client_credentials' })),
      400,
      'unsupported_grant_type',
    );
  });
});

describe('token endpoint: invalid client credentials (401 invalid_client)', () => {
  it('refuses a wrong client secret', async () => {
    const { code, verifier } = await freshCode();
    const res = await postToken(base, tokenBody(code, verifier, { client_secret: `${TEST_CLIENT.clientSecret}x` }));
    const body = await expectOAuthError(res, 401, 'invalid_client');
    expect(JSON.stringify(body)).not.toContain(TEST_CLIENT.clientSecret);
  });

  it('refuses an unknown client id', async () => {
    const { code, verifier } = await freshCode();
    await expectOAuthError(
      await postToken(base, tokenBody(code, verifier, { client_id: 'nobody' })),
      401,
      'invalid_client',
    );
  });

  it('asks for Basic credentials again when wrong ones came by HTTP Basic', async () => {
    const { code, verifier } = await freshCode();
    const res = await postToken(base, tokenBody(code, verifier, { client_id: undefined, client_secret: undefined }), {
      authorization: basic(TEST_CLIENT.clientId, 'wrong'),
    });
    await expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
  });
});

describe('token endpoint: the code (400 invalid_grant)', () => {
  it('refuses a code that does not exist', async () => {
    const { verifier } = await freshCode();
    await expectOAuthError(await postToken(base, tokenBody('made-up-code', verifier)), 400, 'invalid_grant');
  });

  it('refuses a second use of a code and revokes the access token issued from it', async () => {
    const { code, verifier } = await freshCode();
    const first = (await (await postToken(base, tokenBody(code, verifier))).json()) as { access_token: string };
    const before = await fetch(`${base}/v2/oauth/userinfo`, {
      headers: { authorization: `Bearer ${first.access_token}` },
    });
    expect(before.status).toBe(200);
    await expectOAuthError(await postToken(base, tokenBody(code, verifier)), 400, 'invalid_grant');
    const after = await fetch(`${base}/v2/oauth/userinfo`, {
      headers: { authorization: `Bearer ${first.access_token}` },
    });
    expect(after.status).toBe(401);
  });

  it('refuses an expired code', async () => {
    const { code, verifier } = await freshCode();
    clock.advance(61);
    await expectOAuthError(await postToken(base, tokenBody(code, verifier)), 400, 'invalid_grant');
  });

  it('refuses a code issued to another client, and that client can still redeem it', async () => {
    const { code, verifier } = await freshCode();
    await expectOAuthError(
      await postToken(
        base,
        tokenBody(code, verifier, {
          client_id: OTHER_CLIENT.clientId,
          client_secret: OTHER_CLIENT.clientSecret,
          redirect_uri: OTHER_CLIENT.redirectUri,
        }),
      ),
      400,
      'invalid_grant',
    );
    expect((await postToken(base, tokenBody(code, verifier))).status).toBe(200);
  });

  it('refuses a redirect_uri different from the authorization request', async () => {
    const { code, verifier } = await freshCode();
    await expectOAuthError(
      await postToken(base, tokenBody(code, verifier, { redirect_uri: 'http://127.0.0.1:9999/other' })),
      400,
      'invalid_grant',
    );
  });

  it('refuses a code_verifier that does not match the code_challenge, and the code is then spent', async () => {
    const { code, verifier } = await freshCode();
    const { verifier: wrong } = pkce();
    const body = await expectOAuthError(await postToken(base, tokenBody(code, wrong)), 400, 'invalid_grant');
    expect(body.error_description).toMatch(/code_verifier/);
    await expectOAuthError(await postToken(base, tokenBody(code, verifier)), 400, 'invalid_grant');
  });
});

describe("token and userinfo behind the app's own body parsers", () => {
  it('answers a JSON and a form token request, and a form userinfo request, whose bodies an express.json()/express.urlencoded() ahead of it already read', async () => {
    const app = express();
    app.use(express.json());
    app.use(express.urlencoded({ extended: false }));
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const provider = createProvider({ ...providerOptions({ autoApprove: true }), baseUrl: origin });
    app.use(provider.handler);
    try {
      const redeem = async (asForm: boolean): Promise<string> => {
        const { verifier, challenge } = pkce();
        const body = tokenBody(await authorizeCode(origin, challenge), verifier) as Record<string, string>;
        const res = asForm
          ? await fetch(`${origin}/v2/oauth/token`, {
              method: 'POST',
              body: new URLSearchParams(body),
              signal: AbortSignal.timeout(5000),
            })
          : await postToken(origin, body);
        expect(res.status).toBe(200);
        return ((await res.json()) as { access_token: string }).access_token;
      };
      await redeem(false);
      const token = await redeem(true);
      const info = await fetch(`${origin}/v2/oauth/userinfo`, {
        method: 'POST',
        body: new URLSearchParams({ access_token: token }),
        signal: AbortSignal.timeout(5000),
      });
      expect(info.status).toBe(200);
      expect(((await info.json()) as { sub: string }).sub).toBe(provider.subjectFor(TEST_CLIENT.clientId, 'ada'));
    } finally {
      provider.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
