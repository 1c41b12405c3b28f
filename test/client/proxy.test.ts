/**
 * Behind a corporate proxy: IdClient's `agent` carries every call (token, JWKS, userinfo) through
 * a real CONNECT proxy on loopback to the provider served over HTTPS (a certificate made for the
 * test with openssl), both with https-proxy-agent (the README recipe) and with our own
 * proxyAgentFromEnv (HTTPS_PROXY/NO_PROXY). The provider records, per request, whether it arrived
 * through a proxy tunnel, so a call that bypassed the agent would show.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { bypassesProxy, proxyAgentFromEnv } from '../../src/client/proxy-agent.js';
import { IdError } from '../../src/errors.js';
import { createProvider, type Provider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { authorizeQuery, pkce, providerOptions, TEST_CLIENT } from '../helpers/provider-fixtures.js';

interface Seen {
  path: string;
  viaProxy: boolean;
}

let ca: string;
let provider: Provider;
let service: https.Server;
let origin: string;
const seen: Seen[] = [];
/** Local ports of the proxy's sockets to the provider: a request from one of them came through a tunnel. */
const tunnelPorts = new Set<number>();
let proxy: http.Server;
let proxyUrl: string;
const tunnels: string[] = [];
const tunnelSockets = new Set<net.Socket>();
let refuseTunnels = false;

const listen = (server: net.Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

beforeAll(async () => {
  const tls = selfSignedCertificate();
  ca = tls.cert;
  service = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    seen.push({ path: (req.url ?? '').split('?')[0]!, viaProxy: tunnelPorts.has(req.socket.remotePort ?? -1) });
    provider.handler(req, res);
  });
  origin = `https://127.0.0.1:${await listen(service)}`;
  provider = createProvider({ ...providerOptions({ autoApprove: true }), baseUrl: origin });

  proxy = http.createServer((_req, res) => {
    // Absolute-form requests are not how an HTTPS origin is reached: refuse them, loudly.
    res.writeHead(405).end();
  });
  proxy.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    tunnelSockets.add(client);
    if (refuseTunnels) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const [host, port] = [(req.url ?? '').replace(/:\d+$/, ''), Number((req.url ?? '').split(':').pop())];
    const upstream = net.connect(port, host, () => {
      tunnelSockets.add(upstream);
      tunnelPorts.add(upstream.localPort ?? -1);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  proxyUrl = `http://127.0.0.1:${await listen(proxy)}`;
});

afterAll(async () => {
  provider.close();
  for (const socket of tunnelSockets) socket.destroy();
  service.closeAllConnections();
  proxy.closeAllConnections();
  await Promise.all([new Promise((r) => service.close(r)), new Promise((r) => proxy.close(r))]);
});

/** The browser's part: an approved code straight from the provider (not through IdClient). */
async function freshCode(): Promise<{ code: string; codeVerifier: string; nonce: string }> {
  const { verifier, challenge } = pkce();
  const nonce = `nonce-${Math.random().toString(36).slice(2)}`;
  const location = await new Promise<string>((resolve, reject) => {
    https
      .get(`${origin}/v2/oauth/authorize?${authorizeQuery(challenge, { nonce })}`, { ca, agent: false }, (res) => {
        res.resume();
        resolve(String(res.headers.location ?? ''));
      })
      .on('error', reject);
  });
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error('no code');
  return { code, codeVerifier: verifier, nonce };
}

function clientWith(agent: http.Agent): IdClient {
  return new IdClient({
    clientId: TEST_CLIENT.clientId,
    clientSecret: TEST_CLIENT.clientSecret,
    privateKey: testKeyPair('rp').privateKeyPem,
    redirectUri: TEST_CLIENT.redirectUri,
    hostname: origin,
    agent,
  });
}

/** Two whole logins; returns what the provider saw of IdClient's calls (the browser's authorize excluded). */
async function twoLogins(client: IdClient): Promise<Seen[]> {
  seen.length = 0;
  for (let i = 0; i < 2; i++) {
    const tokens = await client.callback(await freshCode());
    const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken });
    expect(info.data['profile.name']).toBeTruthy();
  }
  client.close();
  return seen.filter((s) => s.path !== '/v2/oauth/authorize');
}

function expectAllThroughProxy(calls: Seen[]): void {
  expect(new Set(calls.map((c) => c.path))).toEqual(
    new Set([
      '/v2/.well-known/openid-configuration',
      '/v2/oauth/token',
      '/v2/.well-known/jwks.json',
      '/v2/oauth/userinfo',
    ]),
  );
  expect(calls.filter((c) => !c.viaProxy)).toEqual([]);
}

describe('IdClient behind a CONNECT proxy', () => {
  it('with https-proxy-agent (README recipe): token, JWKS and userinfo all go through the tunnel', async () => {
    tunnels.length = 0;
    const agent = new HttpsProxyAgent(proxyUrl, { keepAlive: true });
    // The service here has a certificate made for the test: trust it the way Node merges an
    // agent's options into each request (a real service has a publicly trusted certificate).
    Object.assign(agent.options, { ca });
    expectAllThroughProxy(await twoLogins(clientWith(agent)));
    expect(tunnels.length).toBeGreaterThan(0);
    expect(new Set(tunnels)).toEqual(new Set([new URL(origin).host]));
  });

  it('with proxyAgentFromEnv and HTTPS_PROXY: the same, over kept-alive tunnels', async () => {
    tunnels.length = 0;
    const agent = proxyAgentFromEnv({ env: { HTTPS_PROXY: proxyUrl }, ca });
    const calls = await twoLogins(clientWith(agent));
    expectAllThroughProxy(calls);
    expect(tunnels.length).toBeGreaterThan(0);
    expect(tunnels.length).toBeLessThan(calls.length); // connections are reused, not one tunnel per call
  });

  it('with NO_PROXY naming the service, connects directly (no tunnel)', async () => {
    tunnels.length = 0;
    const agent = proxyAgentFromEnv({ env: { https_proxy: proxyUrl, no_proxy: 'example.com, 127.0.0.1' }, ca });
    const calls = await twoLogins(clientWith(agent));
    expect(tunnels).toEqual([]);
    expect(calls.every((c) => !c.viaProxy)).toBe(true);
  });

  it('a proxy refusing the tunnel fails the login as provider_unreachable, without hanging', async () => {
    refuseTunnels = true;
    try {
      const client = clientWith(proxyAgentFromEnv({ env: { HTTPS_PROXY: proxyUrl }, ca }));
      const err = await client.callback(await freshCode()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IdError);
      expect((err as IdError).code).toBe('provider_unreachable');
      expect((err as IdError).message).toContain('EPROXYREFUSED');
      client.close();
    } finally {
      refuseTunnels = false;
    }
  });

  it('refuses an HTTPS_PROXY that is not an http:// URL, saying so', () => {
    expect(() => proxyAgentFromEnv({ env: { HTTPS_PROXY: 'socks5://127.0.0.1:1080' } })).toThrow(
      /HTTPS_PROXY must be an http:\/\/ proxy URL/,
    );
    expect(() => proxyAgentFromEnv({ env: { HTTPS_PROXY: 'not a url' } })).toThrow(TypeError);
  });

  it('matches NO_PROXY entries by host, domain suffix, port and *', () => {
    expect(bypassesProxy(['example.com'], 'id.example.com', 443)).toBe(true);
    expect(bypassesProxy(['.example.com'], 'example.com', 443)).toBe(true);
    expect(bypassesProxy(['example.com'], 'badexample.com', 443)).toBe(false);
    expect(bypassesProxy(['id.example:8443'], 'id.example', 443)).toBe(false);
    expect(bypassesProxy(['id.example:8443'], 'id.example', 8443)).toBe(true);
    expect(bypassesProxy(['*'], 'anything', 1)).toBe(true);
    expect(bypassesProxy(['[::1]'], '::1', 443)).toBe(true);
  });
});
