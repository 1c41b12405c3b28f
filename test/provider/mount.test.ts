/**
 * `provider.handler` is a plain Node handler: served by node:http at the root and under a
 * prefix, and mounted under a prefix by Express 4, Express 5 (behind the app's own body
 * parsers) and Fastify (through @fastify/middie). Through each, a person signs in the
 * interactive way (QR page, its image, the phone page, the number, the approval, the status
 * poll), the app redeems the code, verifies the ID token against the published keys and reads
 * userinfo, decrypting it with its own key.
 */
import { createPrivateKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import middie from '@fastify/middie';
import express5 from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { compactDecrypt, createRemoteJWKSet, importJWK, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { createProvider, type Provider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { pkce, providerOptions, TEST_CLIENT } from '../helpers/provider-fixtures.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** A server whose request listener is set once the provider (which needs the origin) exists. */
async function nodeServer(): Promise<{ origin: string; serve(handler: Provider['handler']): void }> {
  let current: Provider['handler'] | undefined;
  const server = createServer((req, res) => (current ? current(req, res) : res.writeHead(503).end()));
  const origin = await listen(server);
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { origin, serve: (handler) => (current = handler) };
}

function providerAt(origin: string, basePath?: string): Provider {
  const provider = createProvider({
    ...providerOptions(),
    baseUrl: origin,
    ...(basePath === undefined ? {} : { basePath }),
  });
  closers.push(async () => provider.close());
  return provider;
}

const timeout = (): AbortSignal => AbortSignal.timeout(5000);

/** The interactive sign-in against the provider at `issuerBase` (origin + prefix). */
async function signInThrough(origin: string, prefix: string): Promise<{ sub: string; name: string }> {
  const discovery = (await (
    await fetch(`${origin}${prefix}/v2/.well-known/openid-configuration`, { signal: timeout() })
  ).json()) as Record<string, string>;
  expect(discovery['issuer']).toBe(`${origin}${prefix}/v2`);
  const { verifier, challenge } = pkce();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: TEST_CLIENT.clientId,
    redirect_uri: TEST_CLIENT.redirectUri,
    scope: 'openid profile.name',
    state: 'state-1',
    nonce: 'nonce-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const page = await fetch(`${discovery['authorization_endpoint']}?${query}`, { signal: timeout() });
  expect(page.status).toBe(200);
  const html = await page.text();
  const mobileUrl = /data-qr-payload="([^"]+)"/.exec(html)?.[1]?.replace(/&amp;/g, '&') ?? '';
  const matchCode = /data-match-code="(\d\d)"/.exec(html)?.[1] ?? '';
  const statusPath = /"statusUrl":"([^"]+)"/.exec(html)?.[1] ?? '';
  const imagePath = /<img class="qr" id="qr" src="([^"]+)"/.exec(html)?.[1] ?? '';
  expect(mobileUrl.startsWith(`${origin}${prefix}/mobile-app/`)).toBe(true);
  expect(statusPath.startsWith(`${prefix}/_provider/qr-status/`)).toBe(true);
  expect(imagePath.startsWith(`${prefix}/_provider/qr-image/`)).toBe(true);

  const image = await fetch(`${origin}${imagePath}`, { signal: timeout() });
  expect(image.headers.get('content-type')).toBe('image/svg+xml');
  expect((await image.text()).startsWith('<svg')).toBe(true);
  const phone = await fetch(mobileUrl, { signal: timeout() });
  const phoneHtml = await phone.text();
  const action = /<form method="post" action="([^"]+)"/.exec(phoneHtml)?.[1] ?? '';
  expect(action.startsWith(`${prefix}/mobile-app/`)).toBe(true);
  expect(
    ((await (await fetch(`${origin}${statusPath}`, { signal: timeout() })).json()) as { status: string }).status,
  ).toBe('pending');
  const approved = await fetch(`${origin}${action}`, {
    method: 'POST',
    body: new URLSearchParams({ decision: 'approve', match: matchCode, persona: 'ada' }),
    signal: timeout(),
  });
  expect(await approved.text()).toContain('data-outcome="approved"');
  const status = (await (await fetch(`${origin}${statusPath}`, { signal: timeout() })).json()) as {
    status: string;
    redirectTo: string;
  };
  expect(status.status).toBe('approved');
  const code = new URL(status.redirectTo).searchParams.get('code') ?? '';

  const tokenRes = await fetch(discovery['token_endpoint']!, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_id: TEST_CLIENT.clientId,
      client_secret: TEST_CLIENT.clientSecret,
      grant_type: 'authorization_code',
      code,
      redirect_uri: TEST_CLIENT.redirectUri,
      code_verifier: verifier,
    }),
    signal: timeout(),
  });
  expect(tokenRes.status).toBe(200);
  const tokens = (await tokenRes.json()) as { id_token: string; access_token: string };
  const { payload } = await jwtVerify(tokens.id_token, createRemoteJWKSet(new URL(discovery['jwks_uri']!)), {
    issuer: `${origin}${prefix}/v2`,
    audience: TEST_CLIENT.clientId,
  });
  expect(payload['nonce']).toBe('nonce-1');

  const info = (await (
    await fetch(discovery['userinfo_endpoint']!, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
      signal: timeout(),
    })
  ).json()) as { sub: string; key: string; data: Record<string, string> };
  expect(info.sub).toBe(payload.sub);
  const rpKey = createPrivateKey(testKeyPair('rp').privateKeyPem);
  const blockKey = JSON.parse(new TextDecoder().decode((await compactDecrypt(info.key, rpKey)).plaintext)) as Record<
    string,
    unknown
  >;
  const name = new TextDecoder().decode(
    (await compactDecrypt(info.data['profile.name'] ?? '', await importJWK(blockKey, 'A128GCM'))).plaintext,
  );
  return { sub: info.sub, name };
}

describe('provider.handler mounted by node:http, Express 4, Express 5 and Fastify', () => {
  it('node:http at the root: a person signs in, and IdClient signs in through it too', async () => {
    const server = await nodeServer();
    const provider = providerAt(server.origin);
    server.serve(provider.handler);
    const person = await signInThrough(server.origin, '');
    expect(person).toEqual({ sub: provider.subjectFor(TEST_CLIENT.clientId, 'ada'), name: 'Ada Testperson' });

    const client = new IdClient({
      clientId: TEST_CLIENT.clientId,
      clientSecret: TEST_CLIENT.clientSecret,
      privateKey: testKeyPair('rp').privateKeyPem,
      hostname: server.origin,
      redirectUri: TEST_CLIENT.redirectUri,
    });
    try {
      provider.approveNext({ persona: 'ben' });
      const { verifier, challenge } = pkce();
      const start = client.authorizationUrl({ state: 's', codeChallenge: challenge });
      const location =
        (await fetch(start.url, { redirect: 'manual', signal: timeout() })).headers.get('location') ?? '';
      const tokens = await client.callback({
        code: new URL(location).searchParams.get('code') ?? '',
        codeVerifier: verifier,
        nonce: start.nonce,
      });
      expect(tokens.sub).toBe(provider.subjectFor(TEST_CLIENT.clientId, 'ben'));
      const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken });
      expect(info.sub).toBe(tokens.sub);
    } finally {
      client.close();
    }
  });

  it('node:http with basePath /idp: the handler removes the prefix itself', async () => {
    const server = await nodeServer();
    const provider = providerAt(server.origin, '/idp');
    server.serve(provider.handler);
    expect(provider.issuer).toBe(`${server.origin}/idp/v2`);
    expect((await signInThrough(server.origin, '/idp')).name).toBe('Ada Testperson');
  });

  it('Express 4: app.use("/idp", provider.handler), beside the app\'s own routes and body parsers', async () => {
    const app = express4();
    app.use(express4.json());
    app.use(express4.urlencoded({ extended: false }));
    app.get('/', (_req, res) => void res.send('home'));
    const server = createServer(app);
    const origin = await listen(server);
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const provider = providerAt(origin, '/idp');
    app.use('/idp', provider.handler);
    app.use((_req, res) => void res.status(404).send('app 404'));
    expect((await signInThrough(origin, '/idp')).sub).toBe(provider.subjectFor(TEST_CLIENT.clientId, 'ada'));
    const unknown = await fetch(`${origin}/idp/not-a-provider-path`, { signal: timeout() });
    expect([unknown.status, await unknown.text()]).toEqual([404, 'app 404']);
  });

  it('Express 5: app.use("/idp", provider.handler) behind express.json() and express.urlencoded()', async () => {
    const app = express5();
    app.use(express5.json());
    app.use(express5.urlencoded({ extended: false }));
    const server = createServer(app);
    const origin = await listen(server);
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const provider = providerAt(origin, '/idp');
    app.use('/idp', provider.handler);
    expect((await signInThrough(origin, '/idp')).sub).toBe(provider.subjectFor(TEST_CLIENT.clientId, 'ada'));
  });

  it('Fastify 5 with @fastify/middie: fastify.use("/idp", provider.handler)', async () => {
    const fastify = Fastify();
    await fastify.register(middie);
    fastify.get('/', async () => 'home');
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => fastify.close());
    const origin = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
    const provider = providerAt(origin, '/idp');
    fastify.use('/idp', provider.handler);
    expect((await signInThrough(origin, '/idp')).sub).toBe(provider.subjectFor(TEST_CLIENT.clientId, 'ada'));
    expect(await (await fetch(`${origin}/`, { signal: timeout() })).text()).toBe('home');
  });
});
