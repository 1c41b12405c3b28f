/**
 * The package's one loopback test, and that every place deciding "plain http is fine here" asks
 * it: the client's hostname, the provider's callback URLs, a FAPI client's jwksUri (see
 * test/provider/fapi/registration.test.ts) and `nd-id-provider init`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../src/loopback.js';
import { isLoopbackHost as clientExport } from '../src/client/id-client.js';
import { isLoopbackHost as providerExport } from '../src/provider/config.js';
import { IdClient } from '../src/client/id-client.js';
import { createProvider, type ProviderOptions } from '../src/provider/index.js';
import { runInit } from '../src/provider/cli-init.js';
import { testKeyPair } from './helpers/keys.js';

const LOOPBACK = ['localhost', 'LOCALHOST', 'LocalHost', '127.0.0.1', '127.1.2.3', '127.255.255.255', '[::1]', '::1'];
const REMOTE = [
  '127.0.0.1.attacker.example',
  '127.0.0.1.nip.io',
  'localhost.attacker.example',
  'attacker.localhost.example',
  '127.0.0',
  '127.0.0.256',
  '127.0.0.01',
  '127.0.0.1.',
  '128.0.0.1',
  '0.0.0.0',
  '[::2]',
  '[::ffff:127.0.0.1]',
  '',
];

describe('isLoopbackHost', () => {
  it('accepts localhost (any case), a whole dotted quad in 127.0.0.0/8 and ::1', () => {
    for (const host of LOOPBACK) expect(isLoopbackHost(host), host).toBe(true);
  });

  it('refuses every other host, however it starts', () => {
    for (const host of REMOTE) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('is the same function under its older export names', () => {
    expect(clientExport).toBe(isLoopbackHost);
    expect(providerExport).toBe(isLoopbackHost);
  });
});

describe('every plain-http decision asks it', () => {
  const client = (hostname: string) =>
    new IdClient({
      clientId: 'a',
      clientSecret: 'b',
      privateKey: testKeyPair('rp').privateKeyPem,
      hostname,
      redirectUri: 'https://rp.example/cb',
    });

  it('the client hostname', () => {
    expect(() => client('http://127.0.0.1.attacker.example')).toThrow(/not loopback/);
    expect(() => client('http://LOCALHOST:4000')).not.toThrow();
  });

  it('the provider callback URLs', () => {
    const provider = (redirectUri: string) => () =>
      createProvider({
        baseUrl: 'http://127.0.0.1:4000',
        clients: [
          { clientId: 'a', clientSecret: 'b', redirectUris: [redirectUri], publicKey: testKeyPair('rp').publicKeyPem },
        ],
      } as ProviderOptions);
    expect(provider('http://127.0.0.1.attacker.example/cb')).toThrow(/non-loopback host/);
    expect(provider('http://LocalHost:3000/cb')).not.toThrow();
    expect(provider('http://[::1]:3000/cb')).not.toThrow();
  });

  it('nd-id-provider init', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nd-id-loopback-'));
    try {
      const refused = runInit({ redirectUri: 'http://127.0.0.1.attacker.example/cb', dir });
      expect(refused.ok).toBe(false);
      expect(runInit({ redirectUri: 'http://LocalHost:3000/cb', dir }).ok).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
