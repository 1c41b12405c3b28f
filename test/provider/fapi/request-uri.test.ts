/**
 * A FAPI 2.0 request_uri is used up when the person approves, not when the browser first opens
 * authorize (FAPI 2.0 section 5.3.2.2): a reload of the QR page works, a second approval of the
 * same pushed request does not, and a visit after the approval is refused. Driven over real HTTP
 * with the simulated phone, as a person would.
 */
import { describe, expect, it } from 'vitest';
import { authorizeUri, fapiFixture, loginParams, push, tokenCall } from './support.js';

const f = fapiFixture({ autoApprove: false });

/** The phone link and number of a QR page: what the person scans and reads. */
async function qrPage(res: Response): Promise<{ payload: string; match: string; statusUrl: string }> {
  expect(res.status).toBe(200);
  const html = await res.text();
  const config = JSON.parse(
    /<script type="application\/json" id="qr-config">([^<]*)<\/script>/.exec(html)?.[1] ?? '{}',
  ) as { statusUrl: string };
  return {
    payload: /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '',
    match: /data-match-code="(\d\d)"/.exec(html)?.[1] ?? '',
    statusUrl: new URL(config.statusUrl, f.test.baseUrl).toString(),
  };
}

function approve(page: { payload: string; match: string }): Promise<Response> {
  const body = new URLSearchParams({ decision: 'approve', match: page.match, persona: 'ada' });
  return fetch(page.payload, { method: 'POST', body, redirect: 'manual' });
}

async function pageCode(res: Response): Promise<string> {
  expect(res.status).toBe(400);
  return /data-error-code="([^"]+)"/.exec(await res.text())?.[1] ?? '';
}

describe('FAPI 2.0: the request_uri is used up at sign-in', () => {
  it('a reload of the QR page works; the first approval signs in, a second is refused, a later visit too', async () => {
    const { params, verifier } = loginParams(f.test);
    const { request_uri } = (await (await push(f.test, f.dpop, params)).json()) as { request_uri: string };
    const first = await qrPage(await authorizeUri(f.test, request_uri));
    // The reload: the same request_uri shows a QR page again.
    const reloaded = await qrPage(await authorizeUri(f.test, request_uri));
    expect(reloaded.payload).not.toBe(first.payload);

    expect((await approve(reloaded)).status).toBe(200);
    const { redirectTo } = (await (await fetch(reloaded.statusUrl)).json()) as { redirectTo: string };
    const code = new URL(redirectTo).searchParams.get('code') ?? '';
    expect(new URL(redirectTo).searchParams.get('state')).toBe(params['state']);

    const second = await approve(first);
    expect(second.status).toBe(409);
    expect(await second.text()).toContain('data-error-code="invalid_request_uri"');
    const ended = (await (await fetch(first.statusUrl)).json()) as { redirectTo: string };
    expect(new URL(ended.redirectTo).searchParams.get('error')).toBe('access_denied');

    expect(await pageCode(await authorizeUri(f.test, request_uri))).toBe('invalid_request_uri');
    expect((await tokenCall(f.test, f.dpop, { code, code_verifier: verifier })).status).toBe(200);
  });

  it('a sign-in begun within the request_uri lifetime can be approved after it', async () => {
    const { params, verifier } = loginParams(f.test);
    const { request_uri } = (await (await push(f.test, f.dpop, params)).json()) as { request_uri: string };
    const page = await qrPage(await authorizeUri(f.test, request_uri));
    f.test.provider.advanceClock(90_000);
    expect(await pageCode(await authorizeUri(f.test, request_uri))).toBe('invalid_request_uri');
    expect((await approve(page)).status).toBe(200);
    const { redirectTo } = (await (await fetch(page.statusUrl)).json()) as { redirectTo: string };
    const code = new URL(redirectTo).searchParams.get('code') ?? '';
    expect((await tokenCall(f.test, f.dpop, { code, code_verifier: verifier })).status).toBe(200);
  });
});
