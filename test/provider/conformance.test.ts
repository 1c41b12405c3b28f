/**
 * OpenID Connect and OAuth behaviour where the service spec is silent: prompt=none, auth_time and
 * max_age, response_mode, userinfo by POST and form body, and a WWW-Authenticate on every 401.
 */
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import {
  authorizeCode,
  authorizeQuery,
  manualClock,
  pkce,
  postToken,
  startTestProvider,
  TEST_CLIENT,
  tokenBody,
} from '../helpers/provider-fixtures.js';

const clock = manualClock();
let auto: StartedProvider;
let qr: StartedProvider;

beforeAll(async () => {
  auto = await startTestProvider({ autoApprove: 'chandra', clock: clock.now });
  qr = await startTestProvider({ clock: clock.now });
});
afterAll(async () => {
  await auto.close();
  await qr.close();
});

function authorize(base: string, overrides: Record<string, string | null>): Promise<Response> {
  return fetch(`${base}/v2/oauth/authorize?${authorizeQuery(pkce().challenge, overrides)}`, { redirect: 'manual' });
}

async function tokens(
  overrides: Record<string, string | null> = {},
): Promise<{ access_token: string; id_token: string }> {
  const { verifier, challenge } = pkce();
  const code = await authorizeCode(auto.baseUrl, challenge, overrides);
  return (await (await postToken(auto.baseUrl, tokenBody(code, verifier))).json()) as {
    access_token: string;
    id_token: string;
  };
}

describe('prompt', () => {
  it('prompt=none redirects back at once with login_required and the state, showing no page, even with auto-approval', async () => {
    for (const p of [qr, auto]) {
      const res = await authorize(p.baseUrl, { prompt: 'none' });
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get('location') ?? '');
      expect(`${back.origin}${back.pathname}`).toBe(TEST_CLIENT.redirectUri);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'login_required',
        state: 'state-123',
        iss: p.provider.issuer,
      });
      expect(await res.text()).not.toContain('data-qr-payload');
    }
  });

  it('accepts the other prompt values and shows the QR page', async () => {
    for (const prompt of ['login', 'consent', 'select_account', 'login consent']) {
      const res = await authorize(qr.baseUrl, { prompt });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('data-qr-payload');
    }
  });

  it('refuses an unknown prompt value and none combined with another, on the error page', async () => {
    for (const prompt of ['never', 'none login']) {
      const res = await authorize(qr.baseUrl, { prompt });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain('data-error-code="invalid_request"');
    }
  });
});

describe('auth_time and max_age', () => {
  it('every ID token carries auth_time, the moment of approval', async () => {
    const claims = decodeJwt((await tokens()).id_token);
    expect(claims.auth_time).toBe(Math.floor(clock.now() / 1000));
  });

  it('a code redeemed later than max_age after the approval is refused with invalid_grant', async () => {
    const { verifier, challenge } = pkce();
    const code = await authorizeCode(auto.baseUrl, challenge, { max_age: '10' });
    clock.advance(11);
    const res = await postToken(auto.baseUrl, tokenBody(code, verifier));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('within max_age the ID token is issued with auth_time', async () => {
    const claims = decodeJwt((await tokens({ max_age: '60' })).id_token);
    expect(typeof claims.auth_time).toBe('number');
  });

  it('refuses a max_age that is not a whole number of seconds', async () => {
    const res = await authorize(qr.baseUrl, { max_age: '-5' });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('data-error-code="invalid_request"');
  });
});

describe('response_mode', () => {
  it('refuses fragment and form_post on the error page instead of answering in the query', async () => {
    for (const mode of ['fragment', 'form_post']) {
      const res = await authorize(auto.baseUrl, { response_mode: mode });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      const html = await res.text();
      expect(html).toContain('data-error-code="invalid_request"');
      expect(html).toContain('response_mode must be query');
    }
  });

  it('accepts response_mode=query', async () => {
    expect((await authorize(auto.baseUrl, { response_mode: 'query' })).status).toBe(302);
  });
});

describe('scopes', () => {
  it('an unknown scope stays refused, and the page names the supported ones', async () => {
    const res = await authorize(qr.baseUrl, { scope: 'openid profile.nric' });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('data-error-code="invalid_scope"');
    expect(html).toContain('Supported: openid, profile.name, profile.nric_number, profile.passport_expiry_date.');
  });
});

describe('userinfo by POST (OIDC Core 5.3.1, RFC 6750 2.2)', () => {
  it('answers POST with the token in the Authorization header', async () => {
    const { access_token } = await tokens();
    const res = await fetch(`${auto.baseUrl}/v2/oauth/userinfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { sub: string }).sub).toMatch(/.+/);
  });

  it('answers POST with the token as the form body parameter access_token', async () => {
    const { access_token } = await tokens();
    const res = await fetch(`${auto.baseUrl}/v2/oauth/userinfo`, {
      method: 'POST',
      body: new URLSearchParams({ access_token }),
    });
    expect(res.status).toBe(200);
    expect(Object.keys((await res.json()) as object).sort()).toEqual(['data', 'key', 'sub']);
  });

  it('refuses a token sent two ways at once with invalid_request', async () => {
    const { access_token } = await tokens();
    const res = await fetch(`${auto.baseUrl}/v2/oauth/userinfo`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}` },
      body: new URLSearchParams({ access_token }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('a bad token in the form body keeps error="invalid_token"', async () => {
    const res = await fetch(`${auto.baseUrl}/v2/oauth/userinfo`, {
      method: 'POST',
      body: new URLSearchParams({ access_token: 'nope' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
  });

  it('a POST with no credentials gets the bare Bearer challenge', async () => {
    const res = await fetch(`${auto.baseUrl}/v2/oauth/userinfo`, { method: 'POST' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('token endpoint 401s', () => {
  it('wrong client credentials in the body get 401 invalid_client with a WWW-Authenticate challenge', async () => {
    const { verifier, challenge } = pkce();
    const code = await authorizeCode(auto.baseUrl, challenge);
    const res = await postToken(auto.baseUrl, tokenBody(code, verifier, { client_secret: 'wrong-secret-0123456789' }));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="nd-id-provider"');
    expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
  });
});
