import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProvider } from '../../../src/provider/index.js';
import { athOf, codeOf, DpopKey, loginParams, push, startFapi, tokenCall, tokensOf, userinfoCall } from './support.js';

let test: TestProvider;
let dpop: DpopKey;
let tokenUrl: string;
let userinfoUrl: string;

beforeAll(async () => {
  test = await startFapi();
  dpop = await DpopKey.make();
  tokenUrl = `${test.baseUrl}/v2/oauth/token`;
  userinfoUrl = `${test.baseUrl}/v2/oauth/userinfo`;
});
afterAll(() => test.close());

async function refusedAtToken(proof: string | null): Promise<string> {
  const { code, verifier } = await codeOf(test, dpop);
  const res = await tokenCall(test, dpop, { code, code_verifier: verifier }, { proof });
  expect(res.status).toBe(400);
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe('invalid_dpop_proof');
  return body.error_description;
}

describe('DPoP proofs at the token endpoint: each mistake is invalid_dpop_proof (400)', () => {
  it('no proof', async () => {
    expect(await refusedAtToken(null)).toMatch(/DPoP proof is required/);
  });
  it('typ is not dpop+jwt', async () => {
    expect(await refusedAtToken(await dpop.proof(test, 'POST', tokenUrl, {}, { typ: 'JWT' }))).toMatch(
      /typ must be dpop\+jwt/,
    );
  });
  it('no jwk in the header', async () => {
    expect(await refusedAtToken(await dpop.proof(test, 'POST', tokenUrl, {}, { jwk: undefined }))).toMatch(/jwk/);
  });
  it('a private key in the jwk', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    const priv = await exportJWK(pair.privateKey);
    const proof = await new SignJWT({
      htm: 'POST',
      htu: tokenUrl,
      iat: Math.floor(test.provider.clock() / 1000),
      jti: 'p',
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: priv })
      .sign(pair.privateKey);
    expect(await refusedAtToken(proof)).toMatch(/private key member/);
  });
  it('a signature by another key than the jwk', async () => {
    const other = await DpopKey.make();
    expect(await refusedAtToken(await other.proof(test, 'POST', tokenUrl, {}, { jwk: dpop.publicJwk }))).toMatch(
      /signature does not verify/,
    );
  });
  it('alg HS256', async () => {
    const proof = await new SignJWT({
      htm: 'POST',
      htu: tokenUrl,
      iat: Math.floor(test.provider.clock() / 1000),
      jti: 'h',
    })
      .setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: dpop.publicJwk })
      .sign(new TextEncoder().encode('a shared secret of at least 32 bytes!'));
    expect(await refusedAtToken(proof)).toMatch(/alg HS256 is not accepted/);
  });
  it('htm is another method', async () => {
    expect(await refusedAtToken(await dpop.proof(test, 'GET', tokenUrl))).toMatch(/htm must be POST/);
  });
  it('htu is another URL', async () => {
    expect(await refusedAtToken(await dpop.proof(test, 'POST', `${test.baseUrl}/v2/oauth/par`))).toMatch(/htu must be/);
  });
  it('htu with a query and fragment is still this URL', async () => {
    const { code, verifier } = await codeOf(test, dpop);
    const res = await tokenCall(
      test,
      dpop,
      { code, code_verifier: verifier },
      { proof: await dpop.proof(test, 'POST', `${tokenUrl}?x=1#y`) },
    );
    expect(res.status).toBe(200);
  });
  it('iat too old, and too far ahead', async () => {
    const now = Math.floor(test.provider.clock() / 1000);
    expect(await refusedAtToken(await dpop.proof(test, 'POST', tokenUrl, { iat: now - 120 }))).toMatch(
      /iat must be now/,
    );
    expect(await refusedAtToken(await dpop.proof(test, 'POST', tokenUrl, { iat: now + 120 }))).toMatch(
      /iat must be now/,
    );
  });
  it('no jti', async () => {
    expect(await refusedAtToken(await dpop.proof(test, 'POST', tokenUrl, { jti: undefined }))).toMatch(/needs a jti/);
  });
  it('a jti used twice (audited)', async () => {
    const proof = await dpop.proof(test, 'POST', tokenUrl, { jti: 'twice' });
    const first = await codeOf(test, dpop);
    expect((await tokenCall(test, dpop, { code: first.code, code_verifier: first.verifier }, { proof })).status).toBe(
      200,
    );
    expect(await refusedAtToken(proof)).toMatch(/jti was already used/);
    expect(test.provider.audit(test.client.clientId).map((f) => f.code)).toContain('dpop_proof_jti_reused');
  });
  it('two DPoP headers', async () => {
    const a = await dpop.proof(test, 'POST', tokenUrl);
    const b = await dpop.proof(test, 'POST', tokenUrl);
    expect(await refusedAtToken(`${a}, ${b}`)).toMatch(/exactly one DPoP header/);
  });
});

describe('DPoP at userinfo', () => {
  it('token_type DPoP; Bearer refused for the bound token (audited)', async () => {
    const tokens = await tokensOf(test, dpop);
    expect(tokens.token_type).toBe('DPoP');
    const res = await userinfoCall(test, dpop, tokens.access_token, { scheme: 'Bearer' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
    expect(test.provider.audit(test.client.clientId).map((f) => f.code)).toContain('dpop_bearer_scheme_used');
  });
  it('the DPoP scheme name in any letter case', async () => {
    const tokens = await tokensOf(test, dpop);
    expect((await userinfoCall(test, dpop, tokens.access_token, { scheme: 'dpop' })).status).toBe(200);
  });
  it('no proof, or a proof without ath or with a wrong ath: invalid_dpop_proof', async () => {
    const tokens = await tokensOf(test, dpop);
    for (const proof of [
      null,
      await dpop.proof(test, 'GET', userinfoUrl),
      await dpop.proof(test, 'GET', userinfoUrl, { ath: athOf('another token') }),
    ]) {
      const res = await userinfoCall(test, dpop, tokens.access_token, { proof });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_dpop_proof"/);
    }
  });
  it('a proof by another key: invalid_token (not bound)', async () => {
    const tokens = await tokensOf(test, dpop);
    const other = await DpopKey.make();
    const res = await userinfoCall(test, dpop, tokens.access_token, {
      proof: await other.proof(test, 'GET', userinfoUrl, { ath: athOf(tokens.access_token) }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
  });
  it('htm POST for a GET', async () => {
    const tokens = await tokensOf(test, dpop);
    const res = await userinfoCall(test, dpop, tokens.access_token, {
      proof: await dpop.proof(test, 'POST', userinfoUrl, { ath: athOf(tokens.access_token) }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/invalid_dpop_proof/);
  });
});

describe('the dpopNonce option', () => {
  it('answers use_dpop_nonce with a DPoP-Nonce header at PAR, token and userinfo, and takes the retry', async () => {
    const nonced = await startFapi({ dpopNonce: true });
    try {
      const parUrl = `${nonced.baseUrl}/v2/oauth/par`;
      const { params, verifier } = loginParams(nonced);
      const first = await push(nonced, dpop, params);
      expect(first.status).toBe(400);
      expect(((await first.json()) as { error: string }).error).toBe('use_dpop_nonce');
      const nonce = first.headers.get('dpop-nonce') ?? '';
      expect(nonce).not.toBe('');
      const again = await push(nonced, dpop, params, { proof: await dpop.proof(nonced, 'POST', parUrl, { nonce }) });
      expect(again.status).toBe(201);
      const { request_uri } = (await again.json()) as { request_uri: string };
      const back = await fetch(
        `${nonced.baseUrl}/v2/oauth/authorize?${new URLSearchParams({ client_id: nonced.client.clientId, request_uri })}`,
        { redirect: 'manual' },
      );
      const code = new URL(back.headers.get('location') ?? '').searchParams.get('code') ?? '';
      const url = `${nonced.baseUrl}/v2/oauth/token`;
      const noNonce = await tokenCall(nonced, dpop, { code, code_verifier: verifier });
      expect(noNonce.status).toBe(400);
      expect(((await noNonce.json()) as { error: string }).error).toBe('use_dpop_nonce');
      // The code was not consumed by the nonce refusal: the retry works.
      const tokens = await tokenCall(
        nonced,
        dpop,
        { code, code_verifier: verifier },
        { proof: await dpop.proof(nonced, 'POST', url, { nonce }) },
      );
      expect(tokens.status).toBe(200);
      const { access_token } = (await tokens.json()) as { access_token: string };
      const info = await userinfoCall(nonced, dpop, access_token);
      expect(info.status).toBe(401);
      expect(info.headers.get('www-authenticate')).toMatch(/^DPoP error="use_dpop_nonce"/);
      expect(info.headers.get('dpop-nonce')).toBe(nonce);
      const ok = await userinfoCall(nonced, dpop, access_token, {
        proof: await dpop.proof(nonced, 'GET', `${nonced.baseUrl}/v2/oauth/userinfo`, {
          ath: athOf(access_token),
          nonce,
        }),
      });
      expect(ok.status).toBe(200);
    } finally {
      await nonced.close();
    }
  });
});

describe('DPoP server nonces expire by the provider clock', () => {
  it('accepts a nonce for its period and the next, and refuses it after an idle hour with use_dpop_nonce', async () => {
    const nonced = await startFapi({ dpopNonce: true });
    try {
      const parUrl = `${nonced.baseUrl}/v2/oauth/par`;
      const pushWith = async (nonce: string): Promise<Response> =>
        push(nonced, dpop, loginParams(nonced).params, { proof: await dpop.proof(nonced, 'POST', parUrl, { nonce }) });
      const nonceOf = async (): Promise<string> =>
        (await push(nonced, dpop, loginParams(nonced).params)).headers.get('dpop-nonce') ?? '';
      const refused = async (res: Response): Promise<void> => {
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: string }).error).toBe('use_dpop_nonce');
      };

      const first = await nonceOf();
      expect(first).not.toBe('');
      nonced.provider.advanceClock(90_000); // replaced, still accepted for one more period
      expect((await pushWith(first)).status).toBe(201);
      nonced.provider.advanceClock(31_000); // two periods after it was made
      await refused(await pushWith(first));

      const idle = await nonceOf();
      expect((await pushWith(idle)).status).toBe(201);
      nonced.provider.advanceClock(60 * 60_000); // no request at all for an hour
      const late = await pushWith(idle);
      expect(late.headers.get('dpop-nonce')).not.toBe(idle);
      await refused(late);
    } finally {
      await nonced.close();
    }
  });
});

describe('the DPoP scheme with a token that is not DPoP-bound', () => {
  it('is refused with invalid_token naming the DPoP scheme', async () => {
    const { createTestProvider } = await import('../../../src/provider/index.js');
    const { pkce } = await import('../../helpers/provider-fixtures.js');
    const base = await createTestProvider({ autoApprove: true });
    try {
      const { verifier, challenge } = pkce();
      const q = new URLSearchParams({
        response_type: 'code',
        client_id: base.client.clientId,
        redirect_uri: base.client.redirectUri,
        scope: 'openid',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      const code =
        new URL(
          (await fetch(`${base.baseUrl}/v2/oauth/authorize?${q}`, { redirect: 'manual' })).headers.get('location') ??
            '',
        ).searchParams.get('code') ?? '';
      const token = await fetch(`${base.baseUrl}/v2/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: base.client.redirectUri,
          client_id: base.client.clientId,
          client_secret: base.client.clientSecret,
        }),
      });
      const { access_token, token_type } = (await token.json()) as { access_token: string; token_type: string };
      expect(token_type).toBe('Bearer');
      const res = await fetch(`${base.baseUrl}/v2/oauth/userinfo`, {
        headers: { authorization: `DPoP ${access_token}` },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
    } finally {
      await base.close();
    }
  });
});
