/**
 * The HTTP layer, seen through IdClient: each provider fault has its own code.
 */
import { Agent, createServer as createHttpServer, type Server } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { IdError } from '../../src/errors.js';
import { STUB_PATHS, sendJson } from '../helpers/stub-provider.js';
import { clientFor, login, startStubProvider, type StubProvider } from './support.js';
import { freePort } from '../helpers/ports.js';

let stub: StubProvider;
beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(() => stub.close());
afterEach(() => {
  for (const path of Object.values(STUB_PATHS)) stub.override(path, undefined);
});

async function failure(promise: Promise<unknown>): Promise<IdError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdError);
  return err as IdError;
}

describe('HTTP faults of the token endpoint', () => {
  it('times out when the provider never answers', async () => {
    stub.override(STUB_PATHS.token, () => {
      /* never answers */
    });
    const err = await failure(login(clientFor(stub, { timeout: 150 }), stub));
    expect(err.code).toBe('provider_timeout');
    expect(err.message).toContain('150 ms');
  });

  it('times out when the provider stops half-way through the body', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 100 });
      res.write('{"access_token":');
    });
    expect((await failure(login(clientFor(stub, { timeout: 150 }), stub))).code).toBe('provider_timeout');
  });

  it('reports a connection dropped half-way through the body as provider_unreachable', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 100 });
      res.write('{"access_token":', () => res.socket?.destroy());
    });
    expect((await failure(login(clientFor(stub), stub))).code).toBe('provider_unreachable');
  });

  it('reports a 5xx as provider_server_error with the status', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => sendJson(res, 502, { error: 'bad_gateway' }));
    const err = await failure(login(clientFor(stub), stub));
    expect(err.code).toBe('provider_server_error');
    expect(err.status).toBe(502);
  });

  it('reports a body that is not JSON as provider_invalid_response', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html>maintenance</html>');
    });
    expect((await failure(login(clientFor(stub), stub))).code).toBe('provider_invalid_response');
  });

  it('reports JSON that is not an object as provider_invalid_response', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => sendJson(res, 200, ['a']));
    expect((await failure(login(clientFor(stub), stub))).code).toBe('provider_invalid_response');
  });

  it('refuses an oversized body announced by Content-Length', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => sendJson(res, 200, { pad: 'x'.repeat(5000) }));
    const err = await failure(login(clientFor(stub, { maxResponseBytes: 1000 }), stub));
    expect(err.code).toBe('provider_response_too_large');
  });

  it('refuses an oversized chunked body while it streams', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      for (let i = 0; i < 20; i++) res.write('x'.repeat(500));
      res.end();
    });
    const err = await failure(login(clientFor(stub, { maxResponseBytes: 1000 }), stub));
    expect(err.code).toBe('provider_response_too_large');
  });

  it('refuses to follow a redirect', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.writeHead(302, { Location: 'https://evil.example/token' });
      res.end();
    });
    const err = await failure(login(clientFor(stub), stub));
    expect(err.code).toBe('provider_redirect_refused');
    expect(err.status).toBe(302);
    expect(stub.requests.at(-1)!.path).toBe(STUB_PATHS.token);
  });

  it('surfaces the provider OAuth error body as the cause of token_request_failed', async () => {
    stub.override(STUB_PATHS.token, (_req, res) =>
      sendJson(res, 400, { error: 'invalid_grant', error_description: 'code already used', extra: 'dropped' }),
    );
    const err = await failure(login(clientFor(stub), stub));
    expect(err.code).toBe('token_request_failed');
    expect(err.status).toBe(400);
    expect(err.cause).toEqual({ error: 'invalid_grant', error_description: 'code already used' });
    expect(err.message).toContain('invalid_grant');
  });

  it('reports a 4xx without an OAuth body as token_request_failed without cause', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.writeHead(401);
      res.end('no');
    });
    const err = await failure(login(clientFor(stub), stub));
    expect(err.code).toBe('token_request_failed');
    expect(err.status).toBe(401);
    expect(err.cause).toBeUndefined();
  });

  it('reports an unreachable provider as provider_unreachable', async () => {
    const port = await freePort();
    const client = clientFor(stub, { hostname: `http://127.0.0.1:${port}` });
    const err = await failure(login(client, stub));
    expect(err.code).toBe('provider_unreachable');
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('never puts the client secret or code verifier in an error', async () => {
    stub.override(STUB_PATHS.token, (_req, res) => sendJson(res, 400, { error: 'invalid_client' }));
    const err = await failure(login(clientFor(stub), stub));
    const body = stub.requests.at(-1)!.body as Record<string, string>;
    expect(JSON.stringify({ message: err.message, cause: err.cause })).not.toContain(body.client_secret);
    expect(err.message).not.toContain(body.code_verifier);
  });
});

describe('HTTP faults of the userinfo endpoint', () => {
  it('surfaces a 401 OAuth error as the cause of userinfo_request_failed', async () => {
    const client = clientFor(stub);
    const { sub, accessToken } = await login(client, stub);
    stub.override(STUB_PATHS.userinfo, (_req, res) =>
      sendJson(res, 401, { error: 'invalid_token', error_description: 'expired' }),
    );
    const err = await failure(client.userinfo({ sub, accessToken }));
    expect(err.code).toBe('userinfo_request_failed');
    expect(err.status).toBe(401);
    expect(err.cause).toEqual({ error: 'invalid_token', error_description: 'expired' });
    expect(err.message).not.toContain(accessToken);
  });

  it('retries a GET once when the keep-alive socket was closed by the provider', async () => {
    const client = clientFor(stub);
    const { sub, accessToken } = await login(client, stub);
    const before = stub.requests.length;
    stub.override(STUB_PATHS.userinfo, (_req, res) => {
      stub.override(STUB_PATHS.userinfo, undefined);
      res.socket?.destroy();
    });
    // The first attempt dies on the reused socket; the retry on a fresh one succeeds.
    await expect(client.userinfo({ sub, accessToken })).resolves.toMatchObject({ sub });
    expect(stub.requests.slice(before).map((r) => r.path)).toEqual([STUB_PATHS.userinfo, STUB_PATHS.userinfo]);
  });

  it('reports provider_unreachable when the retry lands on another stale keep-alive socket', async () => {
    // Every connection answers its first request and is reset on its second one.
    let connections = 0;
    let requests = 0;
    const served = new WeakSet<Socket>();
    const server = createHttpServer((req, res) => {
      // The discovery document (read once, first): absent, so the spec's paths stand in.
      if (req.url?.includes('openid-configuration')) return sendJson(res, 404, { error: 'not_found' });
      requests += 1;
      const socket = req.socket;
      if (served.has(socket)) {
        socket.destroy();
        return;
      }
      served.add(socket);
      sendJson(res, 200, { sub: 'u-1', data: {} });
    });
    server.on('connection', () => (connections += 1));
    const origin = await listen(server);
    const client = clientFor(stub, { hostname: origin });
    await client.discover();
    try {
      // Two concurrent calls leave two idle sockets in the keep-alive pool.
      await Promise.all([
        client.userinfo({ sub: 'u-1', accessToken: 'at-1' }),
        client.userinfo({ sub: 'u-1', accessToken: 'at-1' }),
      ]);
      await new Promise((resolve) => setImmediate(resolve));
      expect(connections).toBe(2);
      // The call dies on one pooled socket, its retry on the other.
      const err = await failure(client.userinfo({ sub: 'u-1', accessToken: 'at-1' }));
      expect(err.code).toBe('provider_unreachable');
      expect(requests).toBe(4);
      expect(connections).toBe(2);
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('does not retry the token POST (a code is one-time) when its socket breaks', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    const before = stub.requests.length;
    stub.override(STUB_PATHS.token, (_req, res) => {
      res.socket?.destroy();
    });
    const err = await failure(login(client, stub));
    expect(err.code).toBe('provider_unreachable');
    expect(stub.requests.length - before).toBe(1);
  });
});

describe('requests Node refuses to send', () => {
  it('reports a header value Node cannot send as provider_unreachable, and sends nothing', async () => {
    const http = new HttpClient({ timeout: 1000, maxResponseBytes: 1000 });
    const before = stub.requests.length;
    const err = await failure(
      http.json({
        method: 'GET',
        url: new URL(`${stub.issuer}/oauth/userinfo`),
        what: 'userinfo endpoint',
        refusedCode: 'userinfo_request_failed',
        headers: { 'X-Header': 'a\r\nX-Injected: 1' },
      }),
    );
    expect(err.code).toBe('provider_unreachable');
    expect(err.message).toContain('ERR_INVALID_CHAR');
    expect(err.message).not.toContain('X-Injected');
    expect(stub.requests.length).toBe(before);
  });

  it('reports an agent for the other protocol as provider_unreachable, not a TypeError', async () => {
    const agent = new HttpsAgent();
    const err = await failure(login(clientFor(stub, { agent: agent as unknown as Agent }), stub));
    expect(err.code).toBe('provider_unreachable');
    expect(err.message).toContain('ERR_INVALID_PROTOCOL');
    agent.destroy();
  });
});

describe('HTTP agent option', () => {
  it('sends every request through the given agent (for a proxy or custom CA)', async () => {
    const agent = new Agent({ keepAlive: true });
    let created = 0;
    const original = agent.createConnection.bind(agent);
    agent.createConnection = ((...args: Parameters<typeof original>) => {
      created += 1;
      return original(...args);
    }) as typeof agent.createConnection;
    const client = clientFor(stub, { agent });
    const { sub, accessToken } = await login(client, stub);
    await client.userinfo({ sub, accessToken });
    expect(created).toBeGreaterThanOrEqual(1);
    agent.destroy();
  });
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

describe('node:http, loaded at the first call', () => {
  it('reaches a patch of http.request made after the first call (a test mock, a monitoring agent)', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    const http = process.getBuiltinModule('node:http');
    const original = http.request;
    let calls = 0;
    http.request = function (this: unknown, ...args: unknown[]) {
      calls += 1;
      return (original as (...a: unknown[]) => ReturnType<typeof original>).apply(this, args);
    } as typeof original;
    try {
      await login(client, stub);
    } finally {
      http.request = original;
    }
    expect(calls).toBeGreaterThan(0);
    client.close();
  });
});
