/**
 * Client authentication at the token endpoint as discovery advertises it, and the spec-only mode
 * (`strictClientAuth`) that refuses HTTP Basic and form bodies, over real HTTP, with the audit
 * recording each refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  authorizeCode,
  pkce,
  postToken,
  startTestProvider,
  TEST_CLIENT,
  tokenBody,
} from '../helpers/provider-fixtures.js';

let lax: StartedProvider;
let strict: StartedProvider;

beforeAll(async () => {
  lax = await startTestProvider({ autoApprove: true });
  strict = await startTestProvider({ autoApprove: true, strictClientAuth: true, auditEndpoint: true });
});
afterAll(async () => {
  await lax.close();
  await strict.close();
});

async function discovery(base: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${base}/v2/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
}

async function freshCode(base: string): Promise<{ code: string; verifier: string }> {
  const { verifier, challenge } = pkce();
  return { code: await authorizeCode(base, challenge), verifier };
}

function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

async function oauthError(res: Response): Promise<{ status: number; error: unknown; description: string }> {
  const body = (await res.json()) as { error?: unknown; error_description?: unknown };
  return { status: res.status, error: body.error, description: String(body.error_description) };
}

describe('discovery: client authentication', () => {
  it('advertises Basic and the body, and both body encodings, when both are accepted', async () => {
    const doc = await discovery(lax.baseUrl);
    expect(doc.token_endpoint_auth_methods_supported).toEqual(['client_secret_post', 'client_secret_basic']);
    expect(doc.nd_id_token_endpoint_content_types_supported).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
  });

  it('advertises only the JSON body with strictClientAuth', async () => {
    const doc = await discovery(strict.baseUrl);
    expect(doc.token_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
    expect(doc.nd_id_token_endpoint_content_types_supported).toEqual(['application/json']);
  });
});

describe('token endpoint with strictClientAuth', () => {
  it('still issues tokens for the spec request: client_id and client_secret in a JSON body', async () => {
    const { code, verifier } = await freshCode(strict.baseUrl);
    expect((await postToken(strict.baseUrl, tokenBody(code, verifier))).status).toBe(200);
  });

  it('refuses HTTP Basic with invalid_client and a sentence naming the JSON body, and the audit records it', async () => {
    const { code, verifier } = await freshCode(strict.baseUrl);
    const res = await postToken(
      strict.baseUrl,
      tokenBody(code, verifier, { client_id: undefined, client_secret: undefined }),
      {
        authorization: basic(TEST_CLIENT.clientId, TEST_CLIENT.clientSecret),
      },
    );
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    const refused = await oauthError(res);
    expect(refused).toMatchObject({ status: 401, error: 'invalid_client' });
    expect(refused.description).toMatch(/HTTP Basic.*strictClientAuth.*application\/json/);
    expect(refused.description).not.toContain(TEST_CLIENT.clientSecret);
    const audit = (await (
      await fetch(`${strict.baseUrl}/_provider/audit?client_id=${TEST_CLIENT.clientId}`)
    ).json()) as {
      findings: { code: string; count: number }[];
    };
    expect(audit.findings.find((f) => f.code === 'client_auth_outside_spec')?.count).toBeGreaterThanOrEqual(1);
  });

  it('refuses a form body with invalid_request, and does not redeem the code', async () => {
    const { code, verifier } = await freshCode(strict.baseUrl);
    const form = new URLSearchParams(tokenBody(code, verifier) as Record<string, string>);
    const refused = await oauthError(await fetch(`${strict.baseUrl}/v2/oauth/token`, { method: 'POST', body: form }));
    expect(refused).toMatchObject({ status: 400, error: 'invalid_request' });
    expect(refused.description).toMatch(/form body.*strictClientAuth/);
    // The code was not consumed by the refused request: the spec request still redeems it.
    expect((await postToken(strict.baseUrl, tokenBody(code, verifier))).status).toBe(200);
    expect(strict.provider.audit(TEST_CLIENT.clientId).map((f) => f.code)).toContain('client_auth_outside_spec');
  });

  it('without strictClientAuth accepts a form body and Basic, with no audit finding', async () => {
    const a = await freshCode(lax.baseUrl);
    const form = new URLSearchParams(tokenBody(a.code, a.verifier) as Record<string, string>);
    expect((await fetch(`${lax.baseUrl}/v2/oauth/token`, { method: 'POST', body: form })).status).toBe(200);
    const b = await freshCode(lax.baseUrl);
    const res = await postToken(
      lax.baseUrl,
      tokenBody(b.code, b.verifier, { client_id: undefined, client_secret: undefined }),
      {
        authorization: basic(TEST_CLIENT.clientId, TEST_CLIENT.clientSecret),
      },
    );
    expect(res.status).toBe(200);
    expect(lax.provider.audit().map((f) => f.code)).not.toContain('client_auth_outside_spec');
  });
});

describe('discovery: userinfo encryption', () => {
  it('names the JWE algorithms of key and data under nd_id_ names, not OpenID userinfo_encryption_*, and they match what userinfo sends', async () => {
    const doc = await discovery(lax.baseUrl);
    expect(Object.keys(doc).filter((k) => k.startsWith('userinfo_encryption'))).toEqual([]);
    expect(doc).toMatchObject({
      nd_id_userinfo_key_encryption_alg_values_supported: ['RSA-OAEP-256'],
      nd_id_userinfo_key_encryption_enc_values_supported: ['A256GCM'],
      nd_id_userinfo_data_encryption_alg_values_supported: ['dir'],
      nd_id_userinfo_data_encryption_enc_values_supported: ['A128GCM'],
    });
    const { code, verifier } = await freshCode(lax.baseUrl);
    const { access_token } = (await (await postToken(lax.baseUrl, tokenBody(code, verifier))).json()) as {
      access_token: string;
    };
    const info = (await (
      await fetch(`${lax.baseUrl}/v2/oauth/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })
    ).json()) as {
      key: string;
      data: Record<string, string>;
    };
    const header = (jwe: string): { alg?: string; enc?: string } =>
      JSON.parse(Buffer.from(jwe.split('.')[0]!, 'base64url').toString()) as { alg?: string; enc?: string };
    expect(header(info.key)).toMatchObject({
      alg: (doc.nd_id_userinfo_key_encryption_alg_values_supported as string[])[0],
      enc: (doc.nd_id_userinfo_key_encryption_enc_values_supported as string[])[0],
    });
    const values = Object.values(info.data);
    expect(values.length).toBeGreaterThan(0);
    for (const v of values) {
      expect(header(v)).toEqual({
        alg: (doc.nd_id_userinfo_data_encryption_alg_values_supported as string[])[0],
        enc: (doc.nd_id_userinfo_data_encryption_enc_values_supported as string[])[0],
      });
    }
  });

  it('keeps scopes_supported exactly as spec 4.5 lists it, while profile.passport_expiry_date is still accepted', async () => {
    const doc = await discovery(lax.baseUrl);
    expect(doc.scopes_supported).toEqual(['openid', 'profile.nric_number', 'profile.name']);
    const { challenge } = pkce();
    const code = await authorizeCode(lax.baseUrl, challenge, { scope: 'openid profile.passport_expiry_date' });
    expect(code).not.toBe('');
  });
});
