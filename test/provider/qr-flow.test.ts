import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import {
  authorizeQuery,
  manualClock,
  pkce,
  providerOptions,
  startTestProvider,
  TEST_CLIENT,
} from '../helpers/provider-fixtures.js';

/** What a QR page exposes to a browser. */
interface QrPage {
  payload: string;
  statusUrl: string;
  html: string;
}

/** The number each QR page shows, by its phone link: what the person reads off the screen. */
const matchCodes = new Map<string, string>();

async function openQrPage(url: string): Promise<QrPage> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const html = await res.text();
  const payload = /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '';
  matchCodes.set(payload, /data-match-code="(\d\d)"/.exec(html)?.[1] ?? '');
  const config = JSON.parse(
    /<script type="application\/json" id="qr-config">([^<]*)<\/script>/.exec(html)?.[1] ?? '{}',
  ) as {
    statusUrl: string;
  };
  return { payload, statusUrl: new URL(config.statusUrl, url).toString(), html };
}

async function status(page: QrPage): Promise<{ status: string; redirectTo?: string }> {
  const res = await fetch(page.statusUrl);
  expect(res.headers.get('cache-control')).toBe('no-store');
  return (await res.json()) as { status: string; redirectTo?: string };
}

/** Answer on the phone; an approval picks the QR page's number unless `match` is given. */
function answer(payload: string, fields: Record<string, string>): Promise<Response> {
  const body =
    fields['decision'] === 'approve' && fields['match'] === undefined
      ? { ...fields, match: matchCodes.get(payload) ?? '' }
      : fields;
  return fetch(payload, { method: 'POST', body: new URLSearchParams(body), redirect: 'manual' });
}

describe('the QR page and the simulated mobile app', () => {
  const clock = manualClock();
  let started: StartedProvider;
  const { challenge } = pkce();
  const authorizeUrl = (): string => `${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`;

  beforeAll(async () => {
    started = await startTestProvider({ clock: clock.now });
  });
  afterAll(() => started.close());

  it('the phone page names the client and the requested attributes, with a persona picker and Approve/Deny in a POST form', async () => {
    const page = await openQrPage(
      `${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge, { scope: 'openid profile.name profile.passport_expiry_date' })}`,
    );
    const res = await fetch(page.payload);
    expect(res.status).toBe(200);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await res.text();
    expect(html).toContain(`${TEST_CLIENT.name} wants you to sign in`);
    expect(html).toContain('Full name');
    expect(html).toContain('Passport expiry date');
    expect(html).not.toContain('Identity number');
    expect(html).toMatch(/<form method="post"/);
    expect(html).toContain('<select id="persona" name="persona">');
    for (const p of started.provider.personas)
      expect(html).toContain(`<option value="${p.id}">${p['profile.name']}</option>`);
    expect(html).toContain('<button type="submit" name="decision" value="approve">Approve</button>');
    expect(html).toContain('<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>');
  });

  it('the QR page waits, then sends the browser back with a code and the state once approved', async () => {
    const page = await openQrPage(authorizeUrl());
    expect(await status(page)).toEqual({ status: 'pending' });
    const approved = await answer(page.payload, { persona: 'ben', decision: 'approve' });
    expect(approved.status).toBe(200);
    expect(await approved.text()).toContain('You approved the sign-in');
    const s = await status(page);
    expect(s.status).toBe('approved');
    const back = new URL(s.redirectTo ?? '');
    expect(`${back.origin}${back.pathname}`).toBe(TEST_CLIENT.redirectUri);
    expect(back.searchParams.get('state')).toBe('state-123');
    expect(back.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses to approve twice, clearly', async () => {
    const page = await openQrPage(authorizeUrl());
    expect((await answer(page.payload, { persona: 'ada', decision: 'approve' })).status).toBe(200);
    const again = await answer(page.payload, { persona: 'ben', decision: 'approve' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('already approved. It cannot be answered twice.');
    expect((await fetch(page.payload)).status).toBe(409);
  });

  it('sends the browser back with error=access_denied and the state when the person denies', async () => {
    const page = await openQrPage(authorizeUrl());
    const denied = await answer(page.payload, { decision: 'deny' });
    expect(await denied.text()).toContain('You declined');
    const s = await status(page);
    expect(s.status).toBe('denied');
    const back = new URL(s.redirectTo ?? '');
    expect(Object.fromEntries(back.searchParams)).toEqual({
      error: 'access_denied',
      state: 'state-123',
      iss: started.provider.issuer,
    });
  });

  it('refuses an approval without a known persona or without a decision', async () => {
    const page = await openQrPage(authorizeUrl());
    expect((await answer(page.payload, { persona: 'nobody', decision: 'approve' })).status).toBe(400);
    expect((await answer(page.payload, { persona: 'ada' })).status).toBe(400);
    expect(await status(page)).toEqual({ status: 'pending' });
  });

  it('after expiry the phone refuses to approve and the QR page says so, offering to start again', async () => {
    const page = await openQrPage(authorizeUrl());
    expect(page.html).toContain('This QR code has expired.');
    expect(page.html).toMatch(/<div id="expired" hidden>/);
    // An empty href: the page's own URL, the authorize request sent again.
    expect(page.html).toContain('<a id="start-again" href="">Start again</a>');
    clock.advance(301);
    const late = await answer(page.payload, { persona: 'ada', decision: 'approve' });
    expect(late.status).toBe(410);
    expect(await late.text()).toContain('expired');
    expect(await status(page)).toEqual({ status: 'expired' });
  });

  it('after expiry, the start-again link opens a fresh QR page for the same request, echoing nothing of its query', async () => {
    const message = 'Sign in to pay 42';
    const url = `${authorizeUrl()}&authentication_context_message=${encodeURIComponent(message)}&utm_source=${'x'.repeat(2000)}`;
    const page = await openQrPage(url);
    const href = /<a id="start-again" href="([^"]*)">/.exec(page.html)?.[1];
    expect(href).toBe('');
    expect(page.html).not.toContain('xxxxxxxx');
    expect(page.html).not.toContain('state-123');
    clock.advance(301);
    expect(await status(page)).toEqual({ status: 'expired' });
    // A browser resolves the link against the page's URL: the same authorize request.
    const again = await openQrPage(new URL(href!, url).href);
    expect(again.payload).not.toBe(page.payload);
    expect(await status(again)).toEqual({ status: 'pending' });
    // The whole request again: the phone still shows the app's message.
    expect(await (await fetch(again.payload)).text()).toContain(message);
  });

  it('an unknown phone link says the request expired or does not exist', async () => {
    const res = await fetch(`${started.baseUrl}/mobile-app/${'A'.repeat(43)}`);
    expect(res.status).toBe(410);
  });

  it('without scripts, the continue link redirects once the person has answered', async () => {
    const page = await openQrPage(authorizeUrl());
    const continueUrl = new URL(
      /<noscript><p><a href="([^"]+)">/.exec(page.html)?.[1] ?? '',
      started.baseUrl,
    ).toString();
    expect((await fetch(continueUrl, { redirect: 'manual' })).status).toBe(200);
    await answer(page.payload, { persona: 'ada', decision: 'approve' });
    const res = await fetch(continueUrl, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe((await status(page)).redirectTo);
  });

  it('refuses a form over 16 KB', async () => {
    const page = await openQrPage(authorizeUrl());
    expect((await answer(page.payload, { decision: 'approve', persona: 'x'.repeat(20_000) })).status).toBe(413);
  });
});

describe('full sign-in with our IdClient', () => {
  let rp: Server;
  let callbacks: URL[];
  let redirectUri: string;

  beforeAll(async () => {
    callbacks = [];
    rp = createServer((req, res) => {
      callbacks.push(new URL(req.url ?? '/', redirectUri));
      res.end('ok');
    });
    await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(rp.address() as AddressInfo).port}/callback`;
  });
  afterAll(() => new Promise<void>((resolve) => rp.close(() => resolve())));

  function optionsFor(extra: Record<string, unknown> = {}) {
    const base = providerOptions(extra);
    base.clients[0] = { ...base.clients[0]!, redirectUris: [redirectUri] };
    return base;
  }

  function clientFor(baseUrl: string): IdClient {
    return new IdClient({
      clientId: TEST_CLIENT.clientId,
      clientSecret: TEST_CLIENT.clientSecret,
      privateKey: testKeyPair('rp').privateKeyPkcs1Pem,
      redirectUri,
      hostname: baseUrl,
    });
  }

  it("auto-approval: redirect, callback and userinfo give the persona's attributes", async () => {
    const started = await startProvider(optionsFor({ autoApprove: 'eko' }));
    try {
      const client = clientFor(started.baseUrl);
      const { verifier, challenge } = pkce();
      const { url, nonce } = client.authorizationUrl({
        state: 'auto-state',
        scope: 'openid profile.name profile.nric_number profile.passport_expiry_date',
        codeChallenge: challenge,
      });
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const back = new URL(res.headers.get('location') ?? '');
      expect(back.searchParams.get('state')).toBe('auto-state');
      const result = await client.callback({
        code: back.searchParams.get('code') ?? '',
        nonce,
        codeVerifier: verifier,
      });
      expect(result.claims.nonce).toBe(nonce);
      const info = await client.userinfo({ sub: result.sub, accessToken: result.accessToken });
      const eko = started.provider.personas.find((p) => p.id === 'eko')!;
      expect(info.data).toEqual({
        'profile.name': eko['profile.name'],
        'profile.nric_number': eko['profile.nric_number'],
        'profile.passport_expiry_date': eko['profile.passport_expiry_date'],
      });
    } finally {
      await started.close();
    }
  });

  it('QR path over HTTP: scan, approve as a persona, poll, follow the redirect, then callback and userinfo', async () => {
    const started = await startProvider(optionsFor());
    try {
      const client = clientFor(started.baseUrl);
      const { verifier, challenge } = pkce();
      const { url, nonce } = client.authorizationUrl({
        state: 'qr-state',
        scope: ['openid', 'profile.name', 'profile.nric_number', 'profile.passport_expiry_date'],
        codeChallenge: challenge,
      });
      const page = await openQrPage(url);
      const phone = await (await fetch(page.payload)).text();
      const farahId = /<option value="(farah)">Farah/.exec(phone)?.[1] ?? '';
      expect((await answer(page.payload, { persona: farahId, decision: 'approve' })).status).toBe(200);

      let s = await status(page);
      for (let i = 0; i < 10 && s.status === 'pending'; i += 1) s = await status(page);
      expect(s.status).toBe('approved');
      expect((await fetch(s.redirectTo ?? '')).status).toBe(200);
      const received = callbacks.at(-1)!;
      expect(received.searchParams.get('state')).toBe('qr-state');

      const result = await client.callback({
        code: received.searchParams.get('code') ?? '',
        nonce,
        codeVerifier: verifier,
      });
      expect(result.sub).toBe(started.provider.subjectFor(TEST_CLIENT.clientId, 'farah'));
      const info = await client.userinfo({ sub: result.sub, accessToken: result.accessToken });
      const farah = started.provider.personas.find((p) => p.id === 'farah')!;
      expect(info).toEqual({
        sub: result.sub,
        data: {
          'profile.name': farah['profile.name'],
          'profile.nric_number': farah['profile.nric_number'],
          'profile.passport_expiry_date': farah['profile.passport_expiry_date'],
        },
      });
    } finally {
      await started.close();
    }
  });
});

describe('the conformance plan through the QR page', () => {
  it('while the open case is state_modified, the phone approval sends the browser back with another state', async () => {
    const started = await startTestProvider();
    try {
      const plan = started.provider.conformance;
      plan.start();
      const stateCase = plan.cases.findIndex((c) => c.id === 'state_modified');
      for (let i = 0; i < stateCase; i += 1) {
        started.provider.approveNext();
        await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge)}`, {
          redirect: 'manual',
        });
      }
      const page = await openQrPage(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge)}`);
      expect(plan.current()).toBe('state_modified');
      await answer(page.payload, { decision: 'approve', persona: 'ada' });
      const done = await status(page);
      const back = new URL(done.redirectTo ?? '');
      expect(back.searchParams.get('code')).not.toBeNull();
      expect(back.searchParams.get('state')).not.toBe('state-123');
    } finally {
      await started.close();
    }
  });
});

describe('what the QR page shows of the client and the request', () => {
  it('escapes the client name, and writes nothing of a state of markup characters into the page', async () => {
    const base = providerOptions();
    const name = 'Tom & "Jerry" <b>\'s</b>';
    const started = await startProvider({
      ...base,
      clients: base.clients.map((c, i) => (i === 0 ? { ...c, name } : c)),
    });
    try {
      const state = `a"b<c>d&e'f`;
      const url = `${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge, { state })}`;
      const page = await openQrPage(url);
      const escaped = 'Tom &amp; &quot;Jerry&quot; &lt;b&gt;&#39;s&lt;/b&gt;';
      expect(page.html).toContain(`<title>Sign in to ${escaped}</title>`);
      expect(page.html).toContain(`<h1>Sign in to ${escaped}</h1>`);
      expect(page.html).toContain(`<span class="muted">and go back to ${escaped}</span>`);
      expect(page.html).not.toContain('<b>');
      // The start-again links are the page's own URL: the state is not written into the page.
      const hrefs = [...page.html.matchAll(/<a id="start-again(?:-mismatch)?" href="([^"]*)">/g)].map((m) => m[1]);
      expect(hrefs).toEqual(['', '']);
      // Neither escaped nor form-encoded (as the link rebuilt from the request wrote it).
      expect(page.html).not.toContain('b&lt;c&gt;d');
      expect(page.html).not.toContain('b%3Cc%3Ed');
      expect(new URL(page.payload).pathname).toMatch(/^\/mobile-app\/[A-Za-z0-9_-]{43}$/);
      expect(page.statusUrl).toMatch(/\/_provider\/qr-status\/[A-Za-z0-9_-]{43}$/);
    } finally {
      await started.close();
    }
  });
});
