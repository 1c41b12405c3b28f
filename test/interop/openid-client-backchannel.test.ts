/**
 * The provider's logout tokens reach an app built on openid-client 6, which leaves back-channel
 * logout to the app: its own handler checks each token with jose against the key set openid-client
 * discovered (the spec's rules, 2.6) and ends the sessions it names. Over real HTTP with a real
 * cookie: signed in, the provider signs the person out, and the app's next answer is 401.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import * as client from 'openid-client';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';

const CLIENT_ID = 'openid-client-app';
const CLIENT_SECRET = 'openid-client-app-secret-0123456789';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** The openid-client app: its sessions by cookie, each with the ID token's sub and sid. */
interface OpenidClientApp {
  baseUrl: string;
  sessions: Map<string, { sub: string; sid?: string }>;
  logoutAnswers: number[];
  close(): Promise<void>;
}

function cookieOf(req: IncomingMessage): string | undefined {
  return /(?:^|;\s*)rp=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1];
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function startOpenidClientApp(port: number, issuer: string): Promise<OpenidClientApp> {
  const baseUrl = `http://127.0.0.1:${port}`;
  const config = await client.discovery(
    new URL(issuer),
    CLIENT_ID,
    CLIENT_SECRET,
    client.ClientSecretBasic(CLIENT_SECRET),
    { execute: [client.allowInsecureRequests] },
  );
  const jwks = createRemoteJWKSet(new URL(config.serverMetadata().jwks_uri!));
  const pending = new Map<string, { verifier: string; state: string; nonce: string }>();
  const sessions = new Map<string, { sub: string; sid?: string }>();
  const usedJtis = new Set<string>();
  const logoutAnswers: number[] = [];

  /** The app's back-channel logout handler: the spec's checks on jose, then its sessions ended. */
  async function backchannelLogout(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const token = (await readForm(req)).get('logout_token') ?? '';
      const { payload } = await jwtVerify(token, jwks, {
        issuer: config.serverMetadata().issuer,
        audience: CLIENT_ID,
        algorithms: ['RS256'],
        typ: 'logout+jwt',
        requiredClaims: ['iat', 'jti'],
      });
      const events = payload.events as Record<string, unknown> | undefined;
      if (typeof events?.[EVENT] !== 'object' || 'nonce' in payload) throw new Error('not a logout token');
      if (payload.sub === undefined && payload.sid === undefined) throw new Error('no sub or sid');
      if (usedJtis.has(payload.jti!)) throw new Error('replayed');
      usedJtis.add(payload.jti!);
      for (const [id, s] of sessions)
        if (payload.sid !== undefined ? s.sid === payload.sid : s.sub === payload.sub) sessions.delete(id);
      logoutAnswers.push(200);
      res.writeHead(200, { 'cache-control': 'no-store' }).end();
    } catch {
      logoutAnswers.push(400);
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_request"}');
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', baseUrl);
    if (url.pathname === '/login') {
      const id = randomUUID();
      const login = {
        verifier: client.randomPKCECodeVerifier(),
        state: client.randomState(),
        nonce: client.randomNonce(),
      };
      pending.set(id, login);
      const to = client.buildAuthorizationUrl(config, {
        redirect_uri: `${baseUrl}/callback`,
        scope: 'openid',
        code_challenge: await client.calculatePKCECodeChallenge(login.verifier),
        code_challenge_method: 'S256',
        state: login.state,
        nonce: login.nonce,
      });
      res.writeHead(302, { location: to.href, 'set-cookie': `rp=${id}; HttpOnly; Path=/` }).end();
    } else if (url.pathname === '/callback') {
      const id = cookieOf(req) ?? '';
      const login = pending.get(id);
      if (login === undefined) return void res.writeHead(401).end();
      pending.delete(id);
      const tokens = await client.authorizationCodeGrant(config, url, {
        pkceCodeVerifier: login.verifier,
        expectedState: login.state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      sessions.set(id, { sub: claims.sub, ...(typeof claims.sid === 'string' ? { sid: claims.sid } : {}) });
      res.writeHead(302, { location: '/account' }).end();
    } else if (url.pathname === '/account') {
      res.writeHead(sessions.has(cookieOf(req) ?? '') ? 200 : 401).end();
    } else if (url.pathname === '/backchannel-logout' && req.method === 'POST') {
      await backchannelLogout(req, res);
    } else res.writeHead(404).end();
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    baseUrl,
    sessions,
    logoutAnswers,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Signs in through the app: its login, the provider (auto-approving), its callback; returns the app's cookie. */
async function signIn(app: OpenidClientApp): Promise<string> {
  const login = await fetch(`${app.baseUrl}/login`, { redirect: 'manual' });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const approved = await fetch(login.headers.get('location')!, { redirect: 'manual' });
  const callback = await fetch(approved.headers.get('location')!, { redirect: 'manual', headers: { cookie } });
  expect(callback.status).toBe(302);
  return cookie;
}

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

describe("the provider's back-channel logout reaches an app built on openid-client", () => {
  it("ends the app's session by the sid of openid-client's ID token", async () => {
    const port = await freePort();
    const started: StartedProvider = await startProvider({
      clients: [
        {
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          redirectUris: [`http://127.0.0.1:${port}/callback`],
          publicKey: testKeyPair('rp').publicKeyPem,
          backchannelLogoutUri: `http://127.0.0.1:${port}/backchannel-logout`,
        },
      ],
      autoApprove: true,
    });
    opened.push(started);
    const app = await startOpenidClientApp(port, started.provider.issuer);
    opened.push(app);
    const cookie = await signIn(app);
    const other = await signIn(app);
    const account = (c: string) => fetch(`${app.baseUrl}/account`, { headers: { cookie: c } }).then((r) => r.status);
    expect(await account(cookie)).toBe(200);
    const sid = app.sessions.get(cookie.slice('rp='.length))?.sid;
    expect(sid).toEqual(expect.any(String));

    expect(await started.provider.signOut({ sid: sid! })).toEqual([
      { clientId: CLIENT_ID, outcome: 'ok', status: 200 },
    ]);
    expect(app.logoutAnswers).toEqual([200]);
    expect(await account(cookie)).toBe(401);
    expect(await account(other)).toBe(200);

    await started.provider.signOut({ persona: DEFAULT_PERSONAS[0]!.id });
    expect(app.logoutAnswers).toEqual([200, 200]);
    expect(await account(other)).toBe(401);
  });
});
