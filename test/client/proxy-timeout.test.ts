/**
 * Finding (info): a proxy that accepts the CONNECT and never answers used to keep the socket
 * open after the request gave up. The tunnel is now bounded by the request's timeout.
 */
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { proxyAgentFromEnv } from '../../src/client/proxy-agent.js';
import { IdError } from '../../src/errors.js';
import { testKeyPair } from '../helpers/keys.js';

let silent: net.Server;
let proxyUrl: string;
const accepted: net.Socket[] = [];

beforeAll(async () => {
  // Accepts, reads the CONNECT, never answers.
  silent = net.createServer((socket) => {
    accepted.push(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  proxyUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const socket of accepted) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

describe('the proxy agent against a proxy that never answers the CONNECT', () => {
  it('gives up with provider_timeout and closes the socket to the proxy', async () => {
    const client = new IdClient({
      clientId: 'proxy-timeout',
      clientSecret: 'proxy-timeout-secret-0123456789',
      privateKey: testKeyPair('rp').privateKeyPem,
      redirectUri: 'https://app.example/auth/callback',
      hostname: 'https://127.0.0.1:9',
      agent: proxyAgentFromEnv({ env: { HTTPS_PROXY: proxyUrl } }),
      // Long enough for the proxy (in this process) to accept the connection on a loaded machine.
      timeout: 1000,
    });
    const failure = await client
      .callback({ code: 'c', nonce: 'n', codeVerifier: 'v'.repeat(43) })
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(IdError);
    expect((failure as IdError).code).toBe('provider_timeout');
    expect(accepted.length).toBeGreaterThan(0);
    // Without a bound on the CONNECT this never happens, and the test fails on its own timeout.
    await Promise.all(
      accepted.map((socket) =>
        socket.destroyed || socket.readableEnded ? undefined : new Promise((resolve) => socket.once('close', resolve)),
      ),
    );
    expect(accepted.every((socket) => socket.destroyed)).toBe(true);
  }, 10_000);
});
