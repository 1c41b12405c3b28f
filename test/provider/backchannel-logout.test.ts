/**
 * The provider's end of back-channel logout, over real HTTP: discovery advertises it, ID tokens
 * carry `sid`, and `provider.signOut()` POSTs a logout token to each client of the person that
 * registered a `backchannelLogoutUri`. The tokens are checked by a validator written here from
 * the spec's rules (Back-Channel Logout 1.0, 2.4 and 2.6) on jose, not by this package's code;
 * they end the sessions of our own Express, NestJS and Fastify apps; a relying party that refuses, fails or does not
 * answer is an audit finding.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterEach, describe, expect, it } from 'vitest';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { requireSignIn } from '../../src/passport/require-sign-in.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import {
  createTestProvider,
  DEFAULT_PERSONAS,
  signIn,
  startProvider,
  type StartedProvider,
} from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';
import { runCli } from '../../src/provider/cli.js';
import { INIT_FILES } from '../../src/provider/cli-init.js';
import {
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  startExpressApp,
  type TestApp,
  type TestAppOptions,
} from '../sessions/harness.js';
import { startFastifyApp } from '../adapters/fastify-app.js';
import { startNestConformanceApp } from '../adapters/nest-app.js';

const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
const PERSONA = DEFAULT_PERSONAS[0]!;

/** A relying party's back-channel logout endpoint that keeps each POSTed form, answering as told. */
interface Receiver {
  url: string;
  forms: URLSearchParams[];
  answer: (res: ServerResponse) => void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const receiver = {
    forms: [] as URLSearchParams[],
    answer: (res: ServerResponse) => {
      res.writeHead(200).end();
    },
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receiver.forms.push(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      receiver.answer(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/backchannel-logout`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function providerFor(backchannelLogoutUri: string, redirectUri: string): Promise<StartedProvider> {
  const started = await startProvider({
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [redirectUri],
        publicKey: testKeyPair('sessions').publicKeyPem,
        backchannelLogoutUri,
      },
    ],
    autoApprove: true,
  });
  opened.push(started);
  return started;
}

type StartApp = (options: TestAppOptions) => Promise<TestApp>;

/** An app of the sessions harness (Express unless `start` says), whose provider registers its back-channel logout route. */
async function appWithProvider(start: StartApp = startExpressApp): Promise<TestApp> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const provider = await providerFor(`${base}/auth/backchannel-logout`, `${base}/auth/callback`);
  const app = await start({ provider, port });
  opened.push(app);
  return app;
}

/** An app of the sessions harness, its provider posting logout tokens to a separate receiver. */
async function appWithReceiver(): Promise<{ receiver: Receiver; started: StartedProvider; app: TestApp }> {
  const receiver = await startReceiver();
  opened.push(receiver);
  const port = await freePort();
  const started = await providerFor(receiver.url, `http://127.0.0.1:${port}/auth/callback`);
  const app = await startExpressApp({ provider: started, port });
  opened.push(app);
  return { receiver, started, app };
}

/** The spec's validation (2.6), written here on jose alone: the claims, or a thrown reason. */
async function validateBySpec(token: string, issuer: string, clientId: string): Promise<Record<string, unknown>> {
  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string;
    id_token_signing_alg_values_supported: string[];
  };
  const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(discovery.jwks_uri)), {
    issuer,
    audience: clientId,
    algorithms: discovery.id_token_signing_alg_values_supported,
    typ: 'logout+jwt',
    requiredClaims: ['iat', 'jti'],
  });
  expect(protectedHeader.typ).toBe('logout+jwt');
  const events = payload.events as Record<string, unknown> | undefined;
  if (typeof events?.[EVENT] !== 'object' || events[EVENT] === null) throw new Error('no logout event');
  if (payload.sub === undefined && payload.sid === undefined) throw new Error('neither sub nor sid');
  if ('nonce' in payload) throw new Error('a nonce');
  const now = Math.floor(Date.now() / 1000);
  if (Math.abs((payload.iat as number) - now) > 60) throw new Error('iat not recent');
  if (payload.exp === undefined || payload.exp - (payload.iat as number) > 300) throw new Error('exp not short');
  return payload;
}

describe("the provider's back-channel logout", () => {
  it('advertises back-channel logout with sid in its discovery document', async () => {
    const receiver = await startReceiver();
    opened.push(receiver);
    const started = await providerFor(receiver.url, 'http://127.0.0.1:9/cb');
    const doc = (await (await fetch(`${started.provider.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(doc.backchannel_logout_supported).toBe(true);
    expect(doc.backchannel_logout_session_supported).toBe(true);
  });

  it("refuses a backchannelLogoutUri that is not https (or http on loopback), naming the client's field", async () => {
    await expect(
      startProvider({
        clients: [
          {
            clientId: 'c',
            clientSecret: 's',
            redirectUris: ['http://127.0.0.1:9/cb'],
            publicKey: testKeyPair('sessions').publicKeyPem,
            backchannelLogoutUri: 'http://rp.example/logout',
          },
        ],
      }),
    ).rejects.toThrow(/clients\[0\]\.backchannelLogoutUri must be an absolute https URL/);
  });

  it("sends logout tokens that pass the spec's rules checked on jose, naming the ID token's sid", async () => {
    const { receiver, started, app } = await appWithReceiver();
    const browser = new Browser(app.baseUrl);
    expect((await browser.signIn()).status).toBe(302);
    const signIn = ((await (await browser.request('/account')).json()) as { signIn: { sub: string; sid?: string } })
      .signIn;
    expect(signIn.sid).toEqual(expect.any(String));

    const deliveries = await started.provider.signOut({ persona: PERSONA.id });
    expect(deliveries).toEqual([{ clientId: CLIENT_ID, outcome: 'ok', status: 200 }]);
    expect(receiver.forms).toHaveLength(1);
    const token = receiver.forms[0]!.get('logout_token') ?? '';
    const claims = await validateBySpec(token, started.provider.issuer, CLIENT_ID);
    expect(claims).toMatchObject({ sub: signIn.sub, sid: signIn.sid, aud: CLIENT_ID });
    expect(started.provider.audit(CLIENT_ID)).toEqual([]);
    // The session is forgotten: signing out again sends nothing.
    expect(await started.provider.signOut({ persona: PERSONA.id })).toEqual([]);
  });

  it.each<[string, StartApp]>([
    ['Express app', startExpressApp],
    ['NestJS app', (o) => startNestConformanceApp(o)],
    ['Fastify app', (o) => startFastifyApp({ ...o, plugin: 'session' })],
  ])("ends the person's session in our %s; by sid, only that sign-in", async (_name, start) => {
    const app = await appWithProvider(start);
    const first = new Browser(app.baseUrl);
    const second = new Browser(app.baseUrl);
    expect((await first.signIn()).status).toBe(302);
    expect((await second.signIn()).status).toBe(302);
    const sidOf = async (b: Browser) =>
      ((await (await b.request('/account')).json()) as { signIn: { sid: string } }).signIn.sid;
    const firstSid = await sidOf(first);
    expect(await sidOf(second)).not.toBe(firstSid);

    expect(await app.provider.provider.signOut({ sid: firstSid })).toEqual([
      { clientId: CLIENT_ID, outcome: 'ok', status: 200 },
    ]);
    expect((await first.request('/account')).status).toBe(303);
    expect((await second.request('/account')).status).toBe(200);

    await app.provider.provider.signOut({ persona: PERSONA.id });
    expect((await second.request('/account')).status).toBe(303);
  });

  it('reports a relying party that answers other than 200, or not at all, in the audit', async () => {
    const { receiver, started, app } = await appWithReceiver();
    const browser = new Browser(app.baseUrl);

    receiver.answer = (res) => res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
    expect((await browser.signIn()).status).toBe(302);
    expect(await started.provider.signOut({ persona: PERSONA.id })).toEqual([
      { clientId: CLIENT_ID, outcome: 'refused', status: 400 },
    ]);
    expect(started.provider.audit(CLIENT_ID).map((f) => f.code)).toEqual(['backchannel_logout_failed']);

    await receiver.close();
    expect((await browser.signIn()).status).toBe(302);
    expect(await started.provider.signOut({ persona: PERSONA.id })).toEqual([
      { clientId: CLIENT_ID, outcome: 'unreachable' },
    ]);
  });

  it('gives up on a relying party that does not answer within 5 seconds', async () => {
    const receiver = await startReceiver();
    opened.push(receiver);
    receiver.answer = () => undefined; // never answers
    const port = await freePort();
    const started = await providerFor(receiver.url, `http://127.0.0.1:${port}/auth/callback`);
    const app = await startExpressApp({ provider: started, port });
    opened.push(app);
    expect((await new Browser(app.baseUrl).signIn()).status).toBe(302);
    const at = performance.now();
    expect(await started.provider.signOut({ persona: PERSONA.id })).toEqual([
      { clientId: CLIENT_ID, outcome: 'timeout' },
    ]);
    expect(performance.now() - at).toBeLessThan(8_000);
    expect(started.provider.audit(CLIENT_ID).map((f) => f.code)).toEqual(['backchannel_logout_failed']);
  }, 15_000);

  it('the logout token is not an ID token: it carries no nonce, and its typ is logout+jwt', async () => {
    const { receiver, started, app } = await appWithReceiver();
    expect((await new Browser(app.baseUrl).signIn()).status).toBe(302);
    await started.provider.signOut({ persona: PERSONA.id });
    const claims = decodeJwt(receiver.forms[0]!.get('logout_token') ?? '');
    expect(claims.nonce).toBeUndefined();
    expect(Object.keys(claims).sort()).toEqual(['aud', 'events', 'exp', 'iat', 'iss', 'jti', 'sid', 'sub']);
  });
});

describe('nd-id-provider init', () => {
  it('registers and prints the back-channel logout URI beside the callback, and the provider takes the clients.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nd-id-bcl-init-'));
    try {
      const out: string[] = [];
      const outcome = await runCli(['init', '--redirect-uri', 'http://127.0.0.1:3000/auth/callback', '--dir', dir], {
        stdout: (text) => out.push(text),
        stderr: (text) => out.push(text),
        env: {},
      });
      expect(outcome).toMatchObject({ exitCode: 0 });
      expect(out.join('')).toContain('backchannel_logout_uri');
      expect(out.join('')).toContain('http://127.0.0.1:3000/auth/backchannel-logout');
      const written = JSON.parse(readFileSync(join(dir, INIT_FILES.clients), 'utf8')) as {
        clients: Array<Record<string, unknown>>;
      };
      expect(written.clients[0]!.backchannelLogoutUri).toBe('http://127.0.0.1:3000/auth/backchannel-logout');
      const { publicKeyFile: _file, ...client } = written.clients[0]!;
      const started = await startProvider({
        clients: [{ ...client, publicKey: readFileSync(join(dir, INIT_FILES.publicKey), 'utf8') } as never],
      });
      await started.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the test kit', () => {
  it("createTestProvider registers a backchannelLogoutUri: signIn, then provider.signOut ends the app's session", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const kit = await createTestProvider({
      redirectUri: `${base}/auth/callback`,
      backchannelLogoutUri: `${base}/auth/backchannel-logout`,
      autoApprove: true,
    });
    opened.push(kit);
    const strategy = new NdIdStrategy({
      clientId: kit.client.clientId,
      clientSecret: kit.client.clientSecret,
      privateKey: kit.client.privateKey,
      hostname: kit.baseUrl,
      callbackURL: kit.client.redirectUri,
    });
    const authenticator = new passport.Passport();
    authenticator.serializeUser((user, done) => done(null, user));
    authenticator.deserializeUser((user: Express.User, done) => done(null, user));
    authenticator.use(strategy);
    const sessions = createSessionPolicy();
    const app = express();
    app.use(session({ secret: 'test-kit-bcl', resave: false, saveUninitialized: false }));
    app.use(authenticator.session());
    const backchannelLogout = createBackchannelLogout({ client: strategy, sessions });
    app.use('/auth', ndIdRouter({ passport: authenticator, sessions, backchannelLogout }));
    app.get('/account', requireSignIn({ sessions, api: true }), (_req, res) => {
      res.send('account');
    });
    app.get('/', (_req, res) => {
      res.send('home');
    });
    const server = app.listen(port, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    opened.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });

    const signedIn = await signIn(base, { provider: kit });
    const account = () => fetch(`${base}/account`, { headers: { cookie: signedIn.cookieHeader } });
    expect((await account()).status).toBe(200);
    expect(await kit.provider.signOut({ persona: PERSONA.id })).toEqual([
      { clientId: kit.client.clientId, outcome: 'ok', status: 200 },
    ]);
    expect((await account()).status).toBe(401);
  });
});
