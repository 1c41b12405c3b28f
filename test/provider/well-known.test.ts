import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  authorizeCode,
  manualClock,
  pkce,
  postToken,
  startTestProvider,
  tokenBody,
} from '../helpers/provider-fixtures.js';

const clock = manualClock();
let started: StartedProvider;
let base: string;

beforeAll(async () => {
  started = await startTestProvider({ autoApprove: true, clock: clock.now, ttl: { signingKeyGrace: 120 } });
  base = started.baseUrl;
});
afterAll(() => started.close());

async function jwks(): Promise<{ keys: Record<string, unknown>[] }> {
  return (await (await fetch(`${base}/v2/.well-known/jwks.json`)).json()) as { keys: Record<string, unknown>[] };
}

async function idToken(): Promise<string> {
  const { verifier, challenge } = pkce();
  const code = await authorizeCode(base, challenge);
  return ((await (await postToken(base, tokenBody(code, verifier))).json()) as { id_token: string }).id_token;
}

describe('discovery document', () => {
  it('has the fields of spec 4.5 under {base_url}/v2, and the client-authentication and userinfo-encryption fields', async () => {
    const res = await fetch(`${base}/v2/.well-known/openid-configuration`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      issuer: `${base}/v2`,
      authorization_endpoint: `${base}/v2/oauth/authorize`,
      token_endpoint: `${base}/v2/oauth/token`,
      userinfo_endpoint: `${base}/v2/oauth/userinfo`,
      jwks_uri: `${base}/v2/.well-known/jwks.json`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code'],
      scopes_supported: ['openid', 'profile.nric_number', 'profile.name'],
      id_token_signing_alg_values_supported: ['RS256'],
      subject_types_supported: ['pairwise'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
      nd_id_token_endpoint_content_types_supported: ['application/json', 'application/x-www-form-urlencoded'],
      nd_id_userinfo_key_encryption_alg_values_supported: ['RSA-OAEP-256'],
      nd_id_userinfo_key_encryption_enc_values_supported: ['A256GCM'],
      nd_id_userinfo_data_encryption_alg_values_supported: ['dir'],
      nd_id_userinfo_data_encryption_enc_values_supported: ['A128GCM'],
    });
    expect(started.provider.issuer).toBe(`${base}/v2`);
  });
});

describe('JWKS', () => {
  it('publishes RSA signing keys with exactly kty, kid, n, e and use', async () => {
    const { keys } = await jwks();
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual(['e', 'kid', 'kty', 'n', 'use']);
    expect(keys[0]).toMatchObject({ kty: 'RSA', use: 'sig', e: 'AQAB' });
  });

  it('after rotation signs with a new key and keeps the old one published for the grace period only', async () => {
    const before = await idToken();
    const oldKid = decodeProtectedHeader(before).kid;
    await started.provider.rotateSigningKey();
    const after = await idToken();
    const newKid = decodeProtectedHeader(after).kid;
    expect(newKid).not.toBe(oldKid);
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([newKid, oldKid]);

    const set = createRemoteJWKSet(new URL(`${base}/v2/.well-known/jwks.json`));
    await expect(jwtVerify(before, set, { currentDate: new Date(clock.now()) })).resolves.toBeDefined();

    clock.advance(121);
    expect((await jwks()).keys.map((k) => k.kid)).toEqual([newKid]);
  });
});
