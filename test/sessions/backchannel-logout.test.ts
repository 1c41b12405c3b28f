/**
 * Back-channel logout at the relying party (OpenID Connect Back-Channel Logout 1.0), over real
 * HTTP with real cookies: a person signs in through the provider, the provider's logout token is
 * POSTed to `/auth/backchannel-logout` (on Express, the fetch handlers, NestJS and Fastify) and the
 * person's next request is refused. Every refusal answers 400 `invalid_request` with its own code,
 * never cached, and ends nothing.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import express4 from 'express4';
import passport from 'passport';
import { describe, expect, it } from 'vitest';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/client/logout-token.js';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { createMemorySignOutStore } from '../../src/flow/sign-out-store.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { freePort } from '../helpers/ports.js';
import {
  appsUnderTest,
  Browser,
  OTHER_PERSONA,
  startExpressApp,
  startFetchApp,
  startTestProvider,
  type TestApp,
  type TestAppOptions,
} from './harness.js';
import { startFastifyApp } from '../adapters/fastify-app.js';
import { startNestConformanceApp } from '../adapters/nest-app.js';
import { logoutToken, post, providerPem, tokenForm, type TokenSpec } from './logout-tokens.js';

async function subOf(browser: Browser): Promise<string> {
  const res = await browser.request('/account', { headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { user: { sub: string } }).user.sub;
}

async function expectSignedIn(browser: Browser, signedIn: boolean): Promise<void> {
  const res = await browser.request('/account', { headers: { accept: 'application/json' } });
  expect(res.status).toBe(signedIn ? 200 : 401);
}

async function expectRefused(res: Response, code: string): Promise<void> {
  expect(res.status, code).toBe(400);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { error: string; code: string };
  expect(body).toMatchObject({ error: 'invalid_request', code });
}

/** Each app, and whether its route reads the form itself (else the framework's form parser did, with its own limit). */
const adapters: Array<[string, (options: TestAppOptions) => Promise<TestApp>, 'reads the form' | 'parsed form']> = [
  ['ndIdRouter (Express)', startExpressApp, 'reads the form'],
  ['createFetchLogin', startFetchApp, 'reads the form'],
  // Nest reads the form with its urlencoded parser by default; without it the route reads it.
  ['NestJS (ndIdBackchannelLogout), its body parsers on', (o) => startNestConformanceApp(o), 'parsed form'],
  [
    'NestJS (ndIdBackchannelLogout), no body parser',
    (o) => startNestConformanceApp({ ...o, bodyParser: false }),
    'reads the form',
  ],
  ['ndIdFastify on @fastify/session', (o) => startFastifyApp({ ...o, plugin: 'session' }), 'reads the form'],
  [
    'ndIdFastify on @fastify/secure-session, after @fastify/formbody',
    (o) => startFastifyApp({ ...o, plugin: 'secure-session', formbody: true }),
    'parsed form',
  ],
];

for (const [adapter, start, body] of adapters) {
  describe(`back-channel logout through ${adapter}`, () => {
    const apps = appsUnderTest<TestApp>((options) => start({ ...options, signingKey: providerPem }));

    it("ends the person's session at its next request: 200, no-store, empty body", async () => {
      const { app, browser } = await apps.signedIn();
      const sub = await subOf(browser);
      const res = await post(app, tokenForm(await logoutToken(app, sub)));
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(await res.text()).toBe('');
      await expectSignedIn(browser, false);
    });

    it("leaves another person's session alone", async () => {
      const { app, browser } = await apps.signedIn();
      const sub = await subOf(browser);
      app.provider.provider.approveNext({ persona: OTHER_PERSONA.id });
      const other = new Browser(app.baseUrl);
      expect((await other.signIn()).status).toBe(302);
      const otherSub = await subOf(other);
      expect(otherSub).not.toBe(sub);
      expect((await post(app, tokenForm(await logoutToken(app, otherSub)))).status).toBe(200);
      await expectSignedIn(other, false);
      await expectSignedIn(browser, true);
    });

    it('takes each logout token once only: the same jti again is logout_token_replayed', async () => {
      const { app, browser } = await apps.signedIn();
      const token = await logoutToken(app, await subOf(browser));
      expect((await post(app, tokenForm(token))).status).toBe(200);
      await expectRefused(await post(app, tokenForm(token)), 'logout_token_replayed');
    });

    it('refuses a request that is not a form with one logout_token: logout_token_missing', async () => {
      const { app, browser } = await apps.signedIn();
      const token = await logoutToken(app, await subOf(browser));
      await expectRefused(await post(app, ''), 'logout_token_missing');
      await expectRefused(
        await post(app, JSON.stringify({ logout_token: token }), 'application/json'),
        'logout_token_missing',
      );
      await expectRefused(await post(app, `${tokenForm(token)}&${tokenForm(token)}`), 'logout_token_missing');
      await expectSignedIn(browser, true);
    });

    it('answers a body of another type without storing the answer: refused, no-store', async () => {
      const { app, browser } = await apps.signedIn();
      const res = await post(app, '<logout_token/>', 'application/xml');
      expect([400, 415]).toContain(res.status);
      expect(res.headers.get('cache-control')).toBe('no-store');
      await expectSignedIn(browser, true);
    });

    if (body === 'reads the form')
      it('reads no body past 32 KiB: no token in it, logout_token_missing', async () => {
        const { app, browser } = await apps.signedIn();
        const token = await logoutToken(app, await subOf(browser));
        await expectRefused(await post(app, `${tokenForm(token)}&pad=${'a'.repeat(40_000)}`), 'logout_token_missing');
        await expectSignedIn(browser, true);
      });
  });
}

describe('back-channel logout refusals (each rule of 2.6, one code each)', () => {
  const apps = appsUnderTest<TestApp>((options) => startExpressApp({ ...options, signingKey: providerPem }));
  const otherRsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;

  const cases: Array<[string, string, TokenSpec | ((app: TestApp, sub: string) => Promise<string> | string)]> = [
    ['a token that is not a JWS', 'logout_token_malformed', () => 'not.a-token'],
    ['an algorithm outside the ID-token allowlist (ES256)', 'logout_token_alg_not_allowed', { alg: 'ES256', key: ec }],
    ['an HMAC signature', 'logout_token_alg_not_allowed', { alg: 'HS256', key: new Uint8Array(32) }],
    ['a typ other than logout+jwt', 'logout_token_typ_invalid', { header: { typ: 'JWT' } }],
    ['a signature by another key under the provider kid', 'logout_token_signature_invalid', { key: otherRsa }],
    ['a kid the provider does not publish', 'id_token_key_not_found', { header: { kid: 'no-such-key' } }],
    ['another issuer', 'logout_token_iss_mismatch', { claims: { iss: 'https://elsewhere.example/v2' } }],
    ['another audience', 'logout_token_aud_mismatch', { claims: { aud: 'another-client' } }],
    ['no iat', 'logout_token_iat_invalid', { without: ['iat'] }],
    ['an iat in the future', 'logout_token_iat_invalid', { claims: { iat: 4_000_000_000 } }],
    ['an iat long past', 'logout_token_iat_invalid', { claims: { iat: 1_000_000_000, exp: 4_000_000_000 } }],
    ['an exp in the past', 'logout_token_expired', { claims: { exp: 1_000_000_000 } }],
    ['no jti', 'logout_token_jti_missing', { without: ['jti'] }],
    ['no events claim', 'logout_token_events_invalid', { without: ['events'] }],
    ['an events claim without the logout event', 'logout_token_events_invalid', { claims: { events: { other: {} } } }],
    [
      'a logout event that is not an object',
      'logout_token_events_invalid',
      { claims: { events: { [BACKCHANNEL_LOGOUT_EVENT]: 'yes' } } },
    ],
    ['neither sub nor sid', 'logout_token_sub_sid_missing', { without: ['sub'] }],
    ['a nonce (an ID token in disguise)', 'logout_token_nonce_present', { claims: { nonce: 'n-0S6_WzA2Mj' } }],
  ];

  it.each(cases)('refuses %s: %s, and ends nothing', async (_what, code, spec) => {
    const { app, browser } = await apps.signedIn();
    const sub = await subOf(browser);
    const token = typeof spec === 'function' ? await spec(app, sub) : await logoutToken(app, sub, spec);
    await expectRefused(await post(app, tokenForm(token)), code);
    await expectSignedIn(browser, true);
  });
});

describe('back-channel logout across instances', () => {
  it('ends the session on every instance sharing the stores, and takes a jti once across them', async () => {
    const ports = [await freePort(), await freePort()];
    const provider = await startTestProvider(
      ports.map((p) => `http://127.0.0.1:${p}/auth/callback`),
      providerPem,
    );
    const replayStore = createMemoryReplayStore();
    const signOutStore = createMemorySignOutStore();
    const shared = { provider, replayStore, policy: { signOutStore } };
    const a = await startExpressApp({ ...shared, port: ports[0]! });
    const b = await startFetchApp({ ...shared, port: ports[1]! });
    try {
      const atA = new Browser(a.baseUrl);
      const atB = new Browser(b.baseUrl);
      expect((await atA.signIn()).status).toBe(302);
      expect((await atB.signIn()).status).toBe(302);
      const sub = await subOf(atB);
      const token = await logoutToken(a, sub);
      expect((await post(a, tokenForm(token))).status).toBe(200);
      await expectRefused(await post(b, tokenForm(token)), 'logout_token_replayed');
      await expectSignedIn(atA, false);
      await expectSignedIn(atB, false);
    } finally {
      await a.close();
      await b.close();
      await provider.close();
    }
  });
});

describe('the back-channel logout route of ndIdRouter', () => {
  async function serve(router: RequestHandler): Promise<{ url: string; close(): Promise<void> }> {
    const app = express();
    app.use('/auth', router);
    app.use((_req, res) => {
      res.status(404).send('app 404');
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }
  const receiver = createBackchannelLogout({
    client: { logoutTokenChecks: () => Promise.reject(new Error('not reached')) } as never,
    sessions: createSessionPolicy(),
  });
  const form = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' };

  it('moves with routes.backchannelLogout, is off with false or without a receiver', async () => {
    const passportInstance = new passport.Passport();
    for (const [options, path, status] of [
      [{ routes: { backchannelLogout: '/bcl' }, backchannelLogout: receiver }, '/auth/bcl', 400],
      [{ routes: { backchannelLogout: '/bcl' }, backchannelLogout: receiver }, '/auth/backchannel-logout', 404],
      [{ routes: { backchannelLogout: false }, backchannelLogout: receiver }, '/auth/backchannel-logout', 404],
      [{}, '/auth/backchannel-logout', 404],
    ] as const) {
      const server = await serve(ndIdRouter({ passport: passportInstance, ...options }));
      try {
        expect((await fetch(`${server.url}${path}`, form)).status, `${JSON.stringify(options)} ${path}`).toBe(status);
      } finally {
        await server.close();
      }
    }
  });

  it('takes the form a body parser already read (express.urlencoded)', async () => {
    const app = express();
    app.use(express.urlencoded({ extended: false }));
    app.use('/auth', ndIdRouter({ passport: new passport.Passport(), backchannelLogout: receiver }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/backchannel-logout`;
      // The receiver's client refuses every token: reaching it proves the parsed form was read.
      const res = await fetch(url, { ...form, body: 'logout_token=a.b.c' });
      expect(res.status).toBe(500); // its plain Error: server_error
      const empty = await fetch(url, form);
      expect(((await empty.json()) as { code: string }).code).toBe('logout_token_missing');
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('reads the form itself behind Express 4 and its JSON parser, which sets req.body to {} without reading it', async () => {
    const app = express4();
    app.use(express4.json());
    app.use('/auth', ndIdRouter({ passport: new passport.Passport(), backchannelLogout: receiver }));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/auth/backchannel-logout`;
      // Reaching the receiver's client (its plain Error: 500) proves the token was read, not logout_token_missing.
      expect((await fetch(url, { ...form, body: 'logout_token=a.b.c' })).status).toBe(500);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('refuses a backchannelLogout option that is not a receiver, saying what to give', () => {
    expect(() => ndIdRouter({ passport: new passport.Passport(), backchannelLogout: {} as never })).toThrow(
      /backchannelLogout must be createBackchannelLogout\(\{ client, sessions \}\)/,
    );
    const sessions = createSessionPolicy();
    expect(() => createBackchannelLogout({ client: {} as never, sessions })).toThrow(
      /client must be the IdClient or NdIdStrategy/,
    );
    expect(() => createBackchannelLogout({ client: receiverClient, sessions, maxTokenAge: 5 })).toThrow(
      /maxTokenAge is in seconds/,
    );
    // Without its policy, logouts would go to this process's memory while the guards read another store.
    expect(() => createBackchannelLogout({ client: receiverClient } as never)).toThrow(TypeError);
    expect(() => createBackchannelLogout({ client: receiverClient } as never)).toThrow(
      /sessions is required: give the createSessionPolicy\(\{ \.\.\. \}\) your router and guards use/,
    );
  });
});

const receiverClient = { logoutTokenChecks: () => Promise.reject(new Error('not reached')) } as never;
