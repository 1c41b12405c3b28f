/**
 * The FAPI 2.0 login end to end over real HTTP, through NdIdStrategy and ndIdRouter against the
 * provider with a FAPI client registered from the app's own published keys: PAR (the browser
 * sees only client_id and request_uri), private_key_jwt, DPoP (with the server-nonce retry),
 * the encrypted ID token (ECDH-ES+A256KW, and RSA-OAEP-256 with the userinfo key), the iss
 * response parameter, the context message on the phone page, and what the app says when the
 * provider refuses it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { appKeys, startFapiRp, type FapiRp } from './harness.js';

let rp: FapiRp | undefined;
afterEach(async () => {
  await rp?.close();
  rp = undefined;
});

type Agent = ReturnType<FapiRp['browser']>;

/** Starts a login; returns the authorization URL the browser is sent to. */
async function startLogin(browser: Agent, path = '/auth/login'): Promise<URL> {
  const res = await browser.get(path);
  expect(res.status, res.text).toBe(302);
  return new URL(res.headers.location as string);
}

/** autoApprove: the provider's redirect back to the app. */
async function approve(authorize: URL): Promise<URL> {
  const res = await fetch(authorize, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

async function signIn(target: FapiRp): Promise<Record<string, unknown>> {
  const browser = target.browser();
  const authorize = await startLogin(browser);
  expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  const callback = await approve(authorize);
  expect(callback.searchParams.get('iss')).toBe(`${target.provider.baseUrl}/v2`);
  const done = await browser.get(callback.pathname + callback.search);
  expect(done.status, done.text).toBe(302);
  const me = await browser.get('/me');
  expect(me.status).toBe(200);
  return (me.body as { user: Record<string, unknown> }).user;
}

describe('a FAPI 2.0 login through ndIdRouter against the provider', () => {
  it('pushes the request, authenticates with private_key_jwt, binds the code and tokens to DPoP, decrypts the ECDH-ES ID token and reads the attributes', async () => {
    rp = await startFapiRp();
    const user = await signIn(rp);
    const persona = rp.provider.provider.personas[0]!;
    expect(user.data).toEqual({
      'profile.name': persona['profile.name'],
      'profile.nric_number': persona['profile.nric_number'],
    });
    expect(rp.provider.provider.audit()).toEqual([]);
  });

  it('registered by URL: the provider fetches the keys the router serves at /auth/jwks.json', async () => {
    rp = await startFapiRp({ jwksByUrl: true });
    await signIn(rp);
  });

  it("answers the provider's DPoP-Nonce challenge with its one retry, at PAR, token and userinfo", async () => {
    rp = await startFapiRp({ provider: { dpopNonce: true } });
    await signIn(rp);
    await signIn(rp); // the remembered nonce, or a fresh challenge, either way completes
  });

  it('decrypts an RSA-OAEP-256 ID token with the userinfo key when no idTokenDecryptionKey is given', async () => {
    rp = await startFapiRp({ keys: appKeys(true) });
    await signIn(rp);
  });

  it('checks the decrypted ID token exactly as an unencrypted one: a wrong audience inside is id_token_aud_mismatch', async () => {
    rp = await startFapiRp();
    rp.provider.provider.faults.inject({ kind: 'wrong_audience' }, { times: 1 });
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    const res = await browser.get(callback.pathname + callback.search);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'id_token_aud_mismatch' });
  });

  it('a callback whose iss was removed is refused before the code is redeemed', async () => {
    rp = await startFapiRp();
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    callback.searchParams.delete('iss');
    const res = await browser.get(callback.pathname + callback.search);
    expect(res.body).toEqual({ code: 'authorization_response_iss_missing', diagnosis: 'response_iss_missing' });
  });

  it('an assertion key the provider does not know: the push is refused, a 500 page names client_assertion_refused', async () => {
    rp = await startFapiRp({
      client: { clientAssertionKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey },
    });
    const res = await rp.browser().get('/auth/login');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: 'par_request_failed', diagnosis: 'client_assertion_refused' });
  });

  it('a denial in the app comes back as an error redirect with iss and is explained as access_denied', async () => {
    rp = await startFapiRp();
    rp.provider.provider.approveNext({ deny: true });
    const browser = rp.browser();
    const callback = await approve(await startLogin(browser));
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const res = await browser.get(callback.pathname + callback.search);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'access_denied' });
  });

  it('sends the authenticationContextMessage: the person sees it on the phone page', async () => {
    rp = await startFapiRp({
      interactive: true,
      router: { authenticationContextMessage: 'Approve payment 2041 to Example Shop' },
    });
    const authorize = await startLogin(rp.browser());
    const page = await (await fetch(authorize)).text();
    const mobile = /data-qr-payload="([^"]+)"/.exec(page)?.[1] ?? '';
    const phone = await (await fetch(mobile.replace(/&amp;/g, '&'))).text();
    expect(phone).toContain('Approve payment 2041 to Example Shop');
  });

  it('a discovery document naming another issuer stops the login before anything is pushed (discovery_issuer_mismatch)', async () => {
    rp = await startFapiRp();
    rp.provider.provider.faults.inject({ kind: 'issuer_mismatch' });
    let pushed = 0;
    rp.provider.server.on('request', (req) => {
      if (req.url?.startsWith('/v2/oauth/par')) pushed++;
    });
    const res = await rp.browser().get('/auth/login');
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ code: 'discovery_issuer_mismatch' });
    expect(pushed).toBe(0);
  });

  it('a context message over 100 characters is refused before anything is sent', async () => {
    rp = await startFapiRp({ router: { authenticationContextMessage: 'x'.repeat(101) } });
    const res = await rp.browser().get('/auth/login');
    expect(res.status).toBe(500);
  });
});
