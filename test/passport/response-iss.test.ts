/**
 * RFC 9207 over real HTTP: the provider sends `iss` on every authorization response and
 * advertises it in discovery, so a callback without it, with another issuer, or with it twice is
 * refused with its own code, before the token endpoint is called and before an `error` in the
 * same callback is believed. The base profile, through ndIdRouter.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { approve, currentUser, startLogin, startRp, type Rp } from './harness.js';

let rp: Rp | undefined;
afterEach(async () => {
  await rp?.close();
  rp = undefined;
});

/** An RP whose failure pages answer with the error code, so tests assert the code itself. */
function rpShowingCodes(): Promise<Rp> {
  return startRp({
    router: {
      renderFailure: (failure, _req, res) => {
        res.status(failure.status).json({ code: failure.code, diagnosis: failure.diagnosis?.code ?? null });
      },
    },
  });
}

/** The callback URL the provider sent, with `iss` changed by `edit`. */
function withIss(callback: URL, edit: (params: URLSearchParams) => void): string {
  const params = new URLSearchParams(callback.search);
  edit(params);
  return `${callback.pathname}?${params.toString()}`;
}

describe('the authorization response iss (RFC 9207), advertised by the provider', () => {
  it('is sent by the provider, and the untouched callback signs in', async () => {
    rp = await rpShowingCodes();
    const discovery = (await (
      await fetch(`${rp.provider.baseUrl}/v2/.well-known/openid-configuration`)
    ).json()) as Record<string, unknown>;
    expect(discovery.authorization_response_iss_parameter_supported).toBe(true);
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    expect(callback.searchParams.get('iss')).toBe(`${rp.provider.baseUrl}/v2`);
    expect((await browser.get(callback.pathname + callback.search)).status).toBe(302);
    expect(await currentUser(browser)).not.toBeNull();
  });

  it('a callback with the iss removed is refused (authorization_response_iss_missing), and the code is never redeemed', async () => {
    rp = await rpShowingCodes();
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    const res = await browser.get(withIss(callback, (p) => p.delete('iss')));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'authorization_response_iss_missing', diagnosis: 'response_iss_missing' });
    expect(rp.tokenCalls()).toBe(0);
    expect(await currentUser(browser)).toBeNull();
  });

  it('a callback naming another issuer is refused (authorization_response_iss_mismatch)', async () => {
    rp = await rpShowingCodes();
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    const res = await browser.get(withIss(callback, (p) => p.set('iss', 'https://other-idp.example/v2')));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ code: 'authorization_response_iss_mismatch', diagnosis: 'response_iss_mismatch' });
    expect(rp.tokenCalls()).toBe(0);
  });

  it('a callback with iss twice (the right one and another) is refused as a mismatch', async () => {
    rp = await rpShowingCodes();
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    const res = await browser.get(withIss(callback, (p) => p.append('iss', 'https://other-idp.example/v2')));
    expect((res.body as { code: string }).code).toBe('authorization_response_iss_mismatch');
    expect(rp.tokenCalls()).toBe(0);
  });

  it('an error redirect is believed only with the right iss: another issuer is a mismatch, not access_denied', async () => {
    rp = await rpShowingCodes();
    const browser = rp.browser();
    const authorize = await startLogin(browser);
    const state = authorize.searchParams.get('state') ?? '';
    const forged = await browser.get(
      `/auth/callback?error=access_denied&state=${state}&iss=${encodeURIComponent('https://other-idp.example/v2')}`,
    );
    expect((forged.body as { code: string }).code).toBe('authorization_response_iss_mismatch');

    const second = await startLogin(browser);
    const iss = encodeURIComponent(`${rp.provider.baseUrl}/v2`);
    const real = await browser.get(
      `/auth/callback?error=access_denied&state=${second.searchParams.get('state') ?? ''}&iss=${iss}`,
    );
    expect(real.status).toBe(401);
    expect((real.body as { code: string }).code).toBe('access_denied');
  });

  it('the state is checked before the iss: an unknown state with a bad iss is still a state_mismatch', async () => {
    rp = await rpShowingCodes();
    const res = await rp
      .browser()
      .get('/auth/callback?code=c&state=never-issued-00000000000000&iss=https%3A%2F%2Fother.example');
    expect(res.status).toBe(403);
    expect((res.body as { code: string }).code).toBe('state_mismatch');
  });
});
