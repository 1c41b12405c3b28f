import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestProvider } from '../../../src/provider/index.js';
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
} from './support.js';

let test: TestProvider;
let dpop: DpopKey;

beforeAll(async () => {
  test = await startFapi({ autoApprove: false });
  dpop = await DpopKey.make();
});
afterAll(() => test.close());

async function pushed(extra: Record<string, string>): Promise<Response> {
  return push(test, dpop, loginParams(test, extra).params);
}

describe("the phone page shows the login's authentication_context_message", () => {
  it('pushed with PAR, HTML-escaped', async () => {
    const res = await pushed({ authentication_context_message: 'Pay <b>42</b> & "confirm"' });
    expect(res.status).toBe(201);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const page = await (await authorizeUri(test, request_uri)).text();
    const mobile = /data-qr-payload="([^"]+)"/.exec(page)?.[1] ?? '';
    const phone = await (await fetch(mobile.replace(/&amp;/g, '&'))).text();
    expect(phone).toContain('<p id="context-message">');
    expect(phone).toContain('Pay &lt;b&gt;42&lt;/b&gt; &amp; &quot;confirm&quot;');
    expect(phone).not.toContain('<b>42</b>');
  });

  it('refuses more than 100 characters, control characters, line separators and blank text, with invalid_request', async () => {
    const long = await pushed({ authentication_context_message: 'x'.repeat(101) });
    expect(long.status).toBe(400);
    const body = (await long.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toMatch(/has 101 characters; the approval screen shows at most 100: shorten it/);
    // The same rule as the client's (src/context-message.ts): blank text and line separators too.
    for (const refused of ['two\nlines', 'two\u2028lines', '   ']) {
      const res = await pushed({ authentication_context_message: refused });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    }
    expect((await pushed({ authentication_context_message: 'é'.repeat(100) })).status).toBe(201);
  });
});

describe('the QR page of a pushed request', () => {
  it('starts again through the client (a request_uri is single-use): access_denied with the state and iss', async () => {
    const login = loginParams(test, {});
    const res = await push(test, dpop, login.params);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const page = await (await authorizeUri(test, request_uri)).text();
    const hrefs = [...page.matchAll(/<a id="start-again(?:-mismatch)?" href="([^"]*)">/g)].map((m) =>
      m[1]!.replace(/&amp;/g, '&'),
    );
    expect(hrefs).toHaveLength(2);
    for (const href of hrefs) {
      const back = new URL(href);
      expect(`${back.origin}${back.pathname}`).toBe(login.params.redirect_uri);
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'access_denied',
        error_description: 'The sign-in was started again.',
        state: login.params.state,
        iss: test.provider.issuer,
      });
    }
  });
});

describe('the test kit through a FAPI client', () => {
  it('approveNext: a persona and changed claims reach the encrypted ID token; a denial comes back with iss', async () => {
    const persona = test.provider.personas[1]!;
    test.provider.approveNext({ clientId: test.client.clientId, persona: persona.id, claims: { acr: 'scripted' } });
    const tokens = await tokensOf(test, dpop);
    const claims = decodeJwt(await decryptIdToken(test, tokens.id_token));
    expect(claims['acr']).toBe('scripted');
    expect(claims.sub).toBe(test.provider.subjectFor(test.client.clientId, persona.id));
    test.provider.approveNext({ deny: true });
    const { params } = loginParams(test);
    const res = await push(test, dpop, params);
    const { request_uri } = (await res.json()) as { request_uri: string };
    const back = new URL((await authorizeUri(test, request_uri)).headers.get('location') ?? '');
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe(params['state']);
    expect(back.searchParams.get('iss')).toBe(test.provider.issuer);
  });

  it('personas added at run time sign in', async () => {
    test.provider.personas.add({
      id: 'fapi-person',
      'profile.name': 'Fapi Person',
      'profile.nric_number': 'S1234567D',
      'profile.passport_expiry_date': '2030-01-01',
    });
    test.provider.approveNext({ persona: 'fapi-person' });
    const tokens = await tokensOf(test, dpop);
    expect(decodeJwt(await decryptIdToken(test, tokens.id_token)).sub).toBe(
      test.provider.subjectFor(test.client.clientId, 'fapi-person'),
    );
  });

  it('the movable clock: a code redeemed after its lifetime is refused', async () => {
    test.provider.approveNext({});
    const { code, verifier } = await codeOf(test, dpop);
    test.provider.advanceClock(61_000);
    const res = await tokenCall(test, dpop, { code, code_verifier: verifier });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('faults: a token endpoint status fault, and an ID-token fault inside the encrypted token', async () => {
    test.provider.approveNext({});
    const first = await codeOf(test, dpop);
    test.provider.faults.inject({ kind: 'status', status: 503 }, { times: 1 });
    const refused = await tokenCall(test, dpop, { code: first.code, code_verifier: first.verifier });
    expect(refused.status).toBe(503);
    test.provider.faults.inject({ kind: 'expired_id_token' }, { times: 1 });
    const res = await tokenCall(test, dpop, { code: first.code, code_verifier: first.verifier });
    expect(res.status).toBe(200);
    const inner = await decryptIdToken(test, ((await res.json()) as { id_token: string }).id_token);
    await expect(
      jwtVerify(inner, createRemoteJWKSet(new URL(`${test.baseUrl}/v2/.well-known/jwks.json`)), {
        currentDate: new Date(test.provider.clock()),
      }),
    ).rejects.toThrow(/exp/);
  });
});
