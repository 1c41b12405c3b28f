/**
 * `npm start` with ND_ID_PROVIDER_PORT: the built-in provider answers on that port (on
 * 127.0.0.1), so a bookmark or a second tool can reach it across restarts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { startEmbeddedExample, type RunningEmbeddedExample } from '../../example-app/server.js';

const dataDir = mkdtempSync(join(tmpdir(), 'nd-id-provider-port-'));
let site: RunningEmbeddedExample | undefined;
afterAll(async () => {
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the example app with a fixed provider port', () => {
  it('runs the built-in provider on the port given, on loopback, and the site signs in with it', async () => {
    const providerPort = await freePort();
    site = await startEmbeddedExample({ port: 0, dataDir, providerPort, autoApprove: true, log: () => undefined });
    expect(site.providerUrl).toBe(`http://127.0.0.1:${providerPort}`);
    const discovery = await fetch(`${site.providerUrl}/v2/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const login = await fetch(`http://127.0.0.1:${site.port}/auth/login`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    expect(login.headers.get('location')).toContain(`http://127.0.0.1:${providerPort}/`);
  });
});
