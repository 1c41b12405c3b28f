import { ProviderSessions } from '../../src/provider/provider-sessions.js';
import { Audit } from '../../src/provider/testing/audit.js';
import { Conformance } from '../../src/provider/testing/conformance.js';
import { ScriptedLogins } from '../../src/provider/testing/approve-next.js';
import { PersonaDirectory } from '../../src/provider/testing/persona-directory.js';
import { createPrivateKey } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizeRoutes, MAX_AUTHORIZE_QUERY_LENGTH } from '../../src/provider/authorize.js';
import { resolveConfig } from '../../src/provider/config.js';
import type { ProviderContext } from '../../src/provider/context.js';
import { SigningKeys } from '../../src/provider/crypto.js';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { createStores } from '../../src/provider/store.js';
import { createHandler } from '../../src/provider/handler.js';
import { Router } from '../../src/provider/router.js';
import { FaultController } from '../../src/provider/faults/controller.js';
import { ClientJwks } from '../../src/provider/fapi/client-jwks.js';
import { testKeyPair } from '../helpers/keys.js';
import { authorizeQuery, pkce, providerOptions, startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

let started: StartedProvider;
let base: string;
const { challenge } = pkce();

beforeAll(async () => {
  started = await startTestProvider();
  base = started.baseUrl;
});
afterAll(() => started.close());

function authorize(overrides: Record<string, string | null> = {}, extra = ''): Promise<Response> {
  return fetch(`${base}/v2/oauth/authorize?${authorizeQuery(challenge, overrides)}${extra}`, { redirect: 'manual' });
}

/** The error code and message shown on an HTML error page. */
async function errorPage(res: Response, status = 400): Promise<{ code: string; message: string; html: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('location')).toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await res.text();
  const code = /data-error-code="([^"]+)"/.exec(html)?.[1] ?? '';
  const message = /<p id="error-message">([^<]*)<\/p>/.exec(html)?.[1] ?? '';
  return { code, message, html };
}

describe('authorize: request problems show an HTML error page with status 400 and never redirect', () => {
  const rows: [string, Record<string, string | null>, string, RegExp][] = [
    ['client_id is missing', { client_id: null }, 'invalid_request', /client_id/],
    ['client_id is not registered', { client_id: 'stranger' }, 'invalid_client', /not registered/],
    ['redirect_uri is missing', { redirect_uri: null }, 'invalid_request', /redirect_uri/],
    [
      'redirect_uri is not registered exactly',
      { redirect_uri: `${TEST_CLIENT.redirectUri}/` },
      'redirect_uri_mismatch',
      /exactly/,
    ],
    [
      'redirect_uri differs only in case',
      { redirect_uri: TEST_CLIENT.redirectUri.replace('callback', 'Callback') },
      'redirect_uri_mismatch',
      /redirect_uri/,
    ],
    ['response_type is not code', { response_type: 'token' }, 'unsupported_response_type', /code/],
    ['response_type is missing', { response_type: null }, 'unsupported_response_type', /code/],
    ['scope lacks openid', { scope: 'profile.name' }, 'invalid_scope', /openid/],
    ['scope is missing', { scope: null }, 'invalid_scope', /openid/],
    ['scope has an unsupported value', { scope: 'openid myinfo.name' }, 'invalid_scope', /myinfo\.name/],
    ['code_challenge_method is plain', { code_challenge_method: 'plain' }, 'invalid_request', /S256/],
    ['code_challenge_method is missing', { code_challenge_method: null }, 'invalid_request', /S256/],
    ['code_challenge is missing', { code_challenge: null }, 'invalid_request', /code_challenge/],
    ['code_challenge is too short', { code_challenge: 'a'.repeat(42) }, 'invalid_request', /43 to 128/],
    ['code_challenge is too long', { code_challenge: 'a'.repeat(129) }, 'invalid_request', /43 to 128/],
    [
      'code_challenge has a character outside the set',
      { code_challenge: `${'a'.repeat(42)}+` },
      'invalid_request',
      /43 to 128/,
    ],
    ['state is longer than 1024 characters', { state: 's'.repeat(1025) }, 'invalid_request', /state/],
    ['nonce is longer than 512 characters', { nonce: 'n'.repeat(513) }, 'invalid_request', /nonce/],
    ['state has control characters', { state: 'a\u0000b' }, 'invalid_request', /state/],
  ];
  for (const [what, overrides, code, message] of rows) {
    it(`shows ${code} when ${what}`, async () => {
      const page = await errorPage(await authorize(overrides));
      expect(page.code).toBe(code);
      expect(page.message).toMatch(message);
    });
  }

  it('shows invalid_request when a parameter is sent twice', async () => {
    const page = await errorPage(await authorize({}, `&client_id=${TEST_CLIENT.clientId}`));
    expect(page.code).toBe('invalid_request');
    expect(page.message).toMatch(/more than once/);
  });

  it('checks the client and redirect URI before anything else', async () => {
    const page = await errorPage(
      await authorize({ client_id: 'stranger', response_type: 'token', code_challenge_method: 'plain' }),
    );
    expect(page.code).toBe('invalid_client');
  });

  it('checks response_type before scope, scope before the PKCE method, and the method before the challenge', async () => {
    expect((await errorPage(await authorize({ response_type: 'token', scope: 'x' }))).code).toBe(
      'unsupported_response_type',
    );
    expect((await errorPage(await authorize({ scope: 'x', code_challenge_method: 'plain' }))).code).toBe(
      'invalid_scope',
    );
    expect((await errorPage(await authorize({ code_challenge_method: 'plain', code_challenge: 'x' }))).message).toMatch(
      /S256/,
    );
  });

  it('escapes what it echoes', async () => {
    const page = await errorPage(await authorize({ scope: 'openid <script>alert(1)</script>' }));
    expect(page.html).not.toContain('<script>alert(1)');
    expect(page.html).toContain('&lt;script&gt;');
  });
});

describe('authorize: success shows the QR page', () => {
  it("shows a scannable QR image of the mobile-app URL, a can't-scan link to it, and the client name", async () => {
    const res = await authorize();
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const html = await res.text();
    const payload = /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(payload).toMatch(new RegExp(`^${base}/mobile-app/[A-Za-z0-9_-]{43}$`));
    expect(html).toMatch(/<img class="qr"[^>]*src="\/_provider\/qr-image\/[A-Za-z0-9_-]{43}"/);
    expect(html).toMatch(/width="320" height="320"/);
    expect(html).toContain(`id="cant-scan" class="app-link" href="${payload}"`);
    expect(html).toContain(TEST_CLIENT.name);
    expect(html).toContain('<a id="start-again" href="">');
  });

  it('gives every page its own unguessable mobile-app URL', async () => {
    const a = /data-qr-payload="([^"]+)"/.exec(await (await authorize()).text())?.[1];
    const b = /data-qr-payload="([^"]+)"/.exec(await (await authorize()).text())?.[1];
    expect(a).toBeDefined();
    expect(a).not.toBe(b);
  });

  it('accepts a request without state and nonce', async () => {
    expect((await authorize({ state: null, nonce: null })).status).toBe(200);
  });
});

describe('authorize: oversized requests and unknown parameters', () => {
  /** A valid authorize query padded with an unknown parameter to exactly `length` characters. */
  function paddedQuery(length: number, overrides: Record<string, string | null> = {}): string {
    const query = `${authorizeQuery(challenge, overrides)}&x=`;
    return query + 'j'.repeat(length - query.length);
  }

  it('shows invalid_request "too large" when the query string is longer than the limit', async () => {
    const res = await fetch(`${base}/v2/oauth/authorize?${paddedQuery(MAX_AUTHORIZE_QUERY_LENGTH + 1)}`, {
      redirect: 'manual',
    });
    const page = await errorPage(res);
    expect(page.code).toBe('invalid_request');
    expect(page.message).toMatch(/too large/);
    expect(page.html).not.toContain('jjjj');
  });

  it('refuses an oversized query before looking at the client', async () => {
    const res = await fetch(
      `${base}/v2/oauth/authorize?${paddedQuery(MAX_AUTHORIZE_QUERY_LENGTH + 1, { client_id: 'stranger' })}`,
      {
        redirect: 'manual',
      },
    );
    const page = await errorPage(res);
    expect(page.code).toBe('invalid_request');
    expect(page.message).toMatch(/too large/);
  });

  it('still shows the QR page for a query string of exactly the limit', async () => {
    const res = await fetch(`${base}/v2/oauth/authorize?${paddedQuery(MAX_AUTHORIZE_QUERY_LENGTH)}`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(200);
  });

  it("the start-again link is the page's own URL: nothing of the query is kept or echoed", async () => {
    const html = await (await authorize({}, `&x=${'junk'.repeat(500)}`)).text();
    expect(/<a id="start-again" href="([^"]*)">/.exec(html)?.[1]).toBe('');
    expect(html).not.toContain('junkjunk');
    expect(html).not.toContain(challenge);
  });

  it('keeps no unknown parameter in the pending sign-in request it stores', async () => {
    const app = express();
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const config = resolveConfig({ ...providerOptions(), baseUrl: own });
      const ctx: ProviderContext = {
        config,
        keys: new SigningKeys(config.clock, 0, { RS256: createPrivateKey(testKeyPair('rp').privateKeyPem) }),
        stores: createStores(config.clock, config),
        personas: PersonaDirectory.create(config.personas),
        scripted: new ScriptedLogins(PersonaDirectory.create(config.personas)),
        audit: new Audit(config.clock, () => true),
        conformance: new Conformance(new SigningKeys(config.clock, 0), new Audit(config.clock, () => true), () => []),
        log: () => undefined,
        sessions: new ProviderSessions(),
        persona: () => undefined,
        subjectFor: () => 'sub',
        clientJwks: new ClientJwks(config.clock),
        dpopNonces: undefined,
      };
      app.use(
        createHandler({
          ctx,
          router: new Router(authorizeRoutes(ctx)),
          faults: new FaultController(ctx),
          controlToken: undefined,
        }),
      );

      const junk = 'unknown-parameter-value-'.repeat(100);
      const res = await fetch(`${own}/v2/oauth/authorize?${authorizeQuery(challenge)}&x=${junk}`);
      expect(res.status).toBe(200);
      const html = await res.text();
      const pollId = /"statusUrl":"\/_provider\/qr-status\/([A-Za-z0-9_-]+)"/.exec(html)?.[1] ?? '';
      const pending = ctx.stores.pendingByPollId.get(pollId);
      expect(pending?.clientId).toBe(TEST_CLIENT.clientId);
      expect(JSON.stringify(pending)).not.toContain('unknown-parameter-value');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('authorize: auto-approval', () => {
  it('redirects at once to the redirect URI with a code and the state', async () => {
    const auto = await startProvider(providerOptions({ autoApprove: 'ben' }));
    try {
      const res = await fetch(`${auto.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location') ?? '');
      expect(`${location.origin}${location.pathname}`).toBe(TEST_CLIENT.redirectUri);
      expect(location.searchParams.get('state')).toBe('state-123');
      expect(location.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(location.searchParams.get('iss')).toBe(auto.provider.issuer);
    } finally {
      await auto.close();
    }
  });

  it('still refuses a bad request with the error page', async () => {
    const auto = await startProvider(providerOptions({ autoApprove: true }));
    try {
      const res = await fetch(
        `${auto.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge, { code_challenge_method: 'plain' })}`,
        {
          redirect: 'manual',
        },
      );
      expect((await errorPage(res)).code).toBe('invalid_request');
    } finally {
      await auto.close();
    }
  });
});

describe('authorize: every authorization response carries the RFC 9207 iss parameter', () => {
  it('on a denial, on prompt=none and on the QR page Cancel, as on a code', async () => {
    const denied = await startProvider(providerOptions({ autoApprove: true }));
    try {
      denied.provider.approveNext({ deny: true });
      const no = await fetch(`${denied.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`, {
        redirect: 'manual',
      });
      const noUrl = new URL(no.headers.get('location') ?? '');
      expect(noUrl.searchParams.get('error')).toBe('access_denied');
      expect(noUrl.searchParams.get('iss')).toBe(denied.provider.issuer);
      const none = await fetch(
        `${denied.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge, { prompt: 'none' })}`,
        { redirect: 'manual' },
      );
      const noneUrl = new URL(none.headers.get('location') ?? '');
      expect(noneUrl.searchParams.get('error')).toBe('login_required');
      expect(noneUrl.searchParams.get('iss')).toBe(denied.provider.issuer);
    } finally {
      await denied.close();
    }
    const html = await (await authorize()).text();
    const cancel = (/<a id="cancel" href="([^"]+)">/.exec(html)?.[1] ?? '').replace(/&amp;/g, '&');
    const back = await fetch(`${base}${cancel}`, { redirect: 'manual' });
    const backUrl = new URL(back.headers.get('location') ?? '');
    expect(backUrl.searchParams.get('error')).toBe('access_denied');
    expect(backUrl.searchParams.get('iss')).toBe(`${base}/v2`);
  });
});

describe('authorize: server failure', () => {
  it('answers an HTML 500 page without a stack trace, and keeps serving', async () => {
    let broken = false;
    const failing = await startProvider(
      providerOptions({
        clock: () => {
          if (broken) throw new Error('clock exploded at /secret/path.ts:12');
          return Date.now();
        },
      }),
    );
    try {
      broken = true;
      const res = await fetch(`${failing.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`, {
        redirect: 'manual',
      });
      const page = await errorPage(res, 500);
      expect(page.code).toBe('server_error');
      expect(page.html).not.toMatch(/exploded|secret\/path|at .*\.ts/);
      broken = false;
      expect((await fetch(`${failing.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`)).status).toBe(200);
    } finally {
      await failing.close();
    }
  });

  it('answers a malformed path escape with a 400 page, not a crash', async () => {
    const res = await fetch(`${base}/mobile-app/%E0%A4%A`);
    expect(res.status).toBe(400);
    expect(await res.text()).not.toMatch(/URIError|at /);
    expect((await fetch(`${base}/v2/.well-known/openid-configuration`)).status).toBe(200);
  });
});
