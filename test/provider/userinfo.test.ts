import { createPrivateKey } from 'node:crypto';
import { compactDecrypt, decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import {
  authorizeCode,
  manualClock,
  pkce,
  postToken,
  providerOptions,
  startTestProvider,
  tokenBody,
} from '../helpers/provider-fixtures.js';

const clock = manualClock();
let started: StartedProvider;
let base: string;

beforeAll(async () => {
  started = await startTestProvider({ autoApprove: 'chandra', clock: clock.now });
  base = started.baseUrl;
});
afterAll(() => started.close());

async function accessToken(scope?: string): Promise<string> {
  const { verifier, challenge } = pkce();
  const code = await authorizeCode(base, challenge, scope ? { scope } : {});
  const body = (await (await postToken(base, tokenBody(code, verifier))).json()) as { access_token: string };
  return body.access_token;
}

function userinfo(headers: Record<string, string> = {}, query = ''): Promise<Response> {
  return fetch(`${base}/v2/oauth/userinfo${query}`, { headers });
}

async function expectInvalidToken(res: Response): Promise<void> {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  expect(((await res.json()) as { error: string }).error).toBe('invalid_token');
}

const privateKey = () => createPrivateKey(testKeyPair('rp').privateKeyPem);

describe('userinfo: the bearer token', () => {
  it('answers a request with no credentials with a bare Bearer challenge and no error code (RFC 6750 3.1)', async () => {
    const res = await userinfo();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.text()).toBe('');
  });

  it('says invalid_token for an unknown token', async () => {
    await expectInvalidToken(await userinfo({ authorization: 'Bearer not-a-real-token' }));
  });

  it('says invalid_token for another scheme than Bearer', async () => {
    await expectInvalidToken(await userinfo({ authorization: `Basic ${await accessToken()}` }));
  });

  it('does not take the token from the query string', async () => {
    const res = await userinfo({}, `?access_token=${await accessToken()}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('says invalid_token once the access token has expired', async () => {
    const token = await accessToken();
    expect((await userinfo({ authorization: `Bearer ${token}` })).status).toBe(200);
    clock.advance(601);
    await expectInvalidToken(await userinfo({ authorization: `Bearer ${token}` }));
  });
});

describe('userinfo: the encrypted response', () => {
  it('returns sub, key and data; the key is an RSA-OAEP-256/A256GCM JWE of an AES-128 JWK; each value is dir/A128GCM', async () => {
    const token = await accessToken();
    const res = await userinfo({ authorization: `bearer ${token}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { sub: string; key: string; data: Record<string, string> };
    expect(Object.keys(body).sort()).toEqual(['data', 'key', 'sub']);
    expect(body.sub).toBe(started.provider.subjectFor('test-client', 'chandra'));

    expect(decodeProtectedHeader(body.key)).toEqual({ alg: 'RSA-OAEP-256', enc: 'A256GCM', kid: expect.any(String) });
    const jwk = JSON.parse(
      new TextDecoder().decode((await compactDecrypt(body.key, privateKey())).plaintext),
    ) as Record<string, string>;
    expect(jwk).toEqual({ kty: 'oct', k: expect.any(String), alg: 'A128GCM' });
    const blockKey = Buffer.from(jwk.k!, 'base64url');
    expect(blockKey.length).toBe(16);

    const persona = started.provider.personas.find((p) => p.id === 'chandra')!;
    const decrypted: Record<string, string> = {};
    for (const [scope, jwe] of Object.entries(body.data)) {
      expect(decodeProtectedHeader(jwe)).toEqual({ alg: 'dir', enc: 'A128GCM' });
      decrypted[scope] = new TextDecoder().decode((await compactDecrypt(jwe, blockKey)).plaintext);
    }
    expect(decrypted).toEqual({
      'profile.name': persona['profile.name'],
      'profile.nric_number': persona['profile.nric_number'],
      'profile.passport_expiry_date': persona['profile.passport_expiry_date'],
    });
  });

  it('uses a fresh block key for every response', async () => {
    const token = await accessToken();
    const keys = new Set<string>();
    for (let i = 0; i < 3; i += 1) {
      const body = (await (await userinfo({ authorization: `Bearer ${token}` })).json()) as { key: string };
      keys.add(
        JSON.parse(new TextDecoder().decode((await compactDecrypt(body.key, privateKey())).plaintext)).k as string,
      );
    }
    expect(keys.size).toBe(3);
  });

  it('returns only the granted scopes that carry data', async () => {
    const one = (await (
      await userinfo({ authorization: `Bearer ${await accessToken('openid profile.nric_number')}` })
    ).json()) as {
      data: Record<string, string>;
    };
    expect(Object.keys(one.data)).toEqual(['profile.nric_number']);
    const none = (await (await userinfo({ authorization: `Bearer ${await accessToken('openid')}` })).json()) as {
      data: Record<string, string>;
    };
    expect(none.data).toEqual({});
  });
});

describe('userinfo: server failure', () => {
  it('answers JSON server_error with 500 and no stack', async () => {
    let broken = false;
    const failing = await startProvider(
      providerOptions({
        autoApprove: true,
        clock: () => {
          if (broken) throw new Error('store exploded');
          return Date.now();
        },
      }),
    );
    try {
      const { verifier, challenge } = pkce();
      const code = await authorizeCode(failing.baseUrl, challenge);
      const { access_token } = (await (await postToken(failing.baseUrl, tokenBody(code, verifier))).json()) as {
        access_token: string;
      };
      broken = true;
      const res = await fetch(`${failing.baseUrl}/v2/oauth/userinfo`, {
        headers: { authorization: `Bearer ${access_token}` },
      });
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: 'server_error', error_description: expect.any(String) });
      expect(text).not.toMatch(/exploded|at /);
    } finally {
      await failing.close();
    }
  });
});
