/**
 * `npm start` (example-app/start.ts) as a newcomer meets it: one line saying where to open the
 * site, a key pair generated on first run and kept, and one clear sentence per configuration
 * mistake in real-provider mode.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { spawnExampleApp, waitForReady, type ExampleProcess } from '../helpers/example-process.js';
import { testKeyPair } from '../helpers/keys.js';

const dataDir = mkdtempSync(join(tmpdir(), 'example-app-start-'));
const running: ExampleProcess[] = [];

function start(env: Record<string, string>): ExampleProcess {
  const proc = spawnExampleApp(env);
  running.push(proc);
  return proc;
}

afterAll(async () => {
  for (const proc of running) await proc.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('starting the example app', () => {
  it('with no configuration it prints one line with the address, and the home page offers Log in', async () => {
    const problem = inject('buildProblem');
    if (problem) throw new Error(problem);
    const proc = start({ PORT: '0', EXAMPLE_APP_DATA_DIR: dataDir });
    const printed = await waitForReady(proc);
    expect(printed).toMatch(/^http:\/\/localhost:\d+$/);
    // The site listens on 127.0.0.1 (HOST's default); ask it there, whatever localhost resolves to.
    const url = printed.replace('//localhost:', '//127.0.0.1:');

    const home = await fetch(url);
    expect(home.status).toBe(200);
    const html = await home.text();
    expect(html).toMatch(/<a class="button" href="\/auth\/login[^"]*">Log in<\/a>/);

    const login = await fetch(`${url}/auth/login`, { redirect: 'manual' });
    expect(login.status).toBe(302);
    expect(login.headers.get('location')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2\/oauth\/authorize\?/);
    const cookie = login.headers.getSetCookie().join('\n');
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);

    expect(proc.stdout().trim().split('\n')).toHaveLength(1);
    expect(proc.stderr()).toBe('');
    await proc.stop();
  });

  it('generates the app key pair on first run, readable only by its owner, and reuses it afterwards', async () => {
    const ownDir = join(dataDir, 'second');
    const keyFile = join(ownDir, 'rp-private-key.pem');
    const firstRun = start({ PORT: '0', EXAMPLE_APP_DATA_DIR: ownDir });
    await waitForReady(firstRun);
    await firstRun.stop();
    const first = readFileSync(keyFile, 'utf8');
    expect(first).toContain('-----BEGIN PRIVATE KEY-----');
    expect(statSync(keyFile).mode & 0o077).toBe(0);
    expect(statSync(join(ownDir, 'secrets.json')).mode & 0o077).toBe(0);

    const again = start({ PORT: '0', EXAMPLE_APP_DATA_DIR: ownDir });
    const url = (await waitForReady(again)).replace('//localhost:', '//127.0.0.1:');
    expect((await fetch(url)).status).toBe(200);
    expect(readFileSync(keyFile, 'utf8')).toBe(first);
    await again.stop();
  });

  it('pointed at a real service with variables missing, it names each one and exits with an error code', async () => {
    const proc = start({ ND_ID_HOSTNAME: 'https://id.example', SESSION_SECRET: 'too-short' });
    const code = await proc.exited;
    expect(code).not.toBe(0);
    const err = proc.stderr();
    expect(err).toContain('The example app cannot start:');
    expect(err).toContain('ND_ID_CLIENT_ID is required');
    expect(err).toContain('ND_ID_CLIENT_SECRET is required');
    expect(err).toMatch(/ND_ID_PRIVATE_KEY \(the PEM text\) or ND_ID_PRIVATE_KEY_FILE \(a path to it\) is required/);
    expect(err).toContain('ND_ID_REDIRECT_URI is required');
    expect(err).toContain('SESSION_SECRET must be at least 32 characters long');
    expect(err).not.toMatch(/\n\s+at /); // a sentence per mistake, no stack trace
    expect(proc.stdout()).toBe('');
  });

  it('pointed at a real service without REDIS_URL, it warns that sessions are kept in memory', async () => {
    const proc = start({
      PORT: '0',
      ND_ID_HOSTNAME: 'https://id.example',
      ND_ID_CLIENT_ID: 'rp',
      ND_ID_CLIENT_SECRET: 'client-secret-value',
      ND_ID_PRIVATE_KEY: testKeyPair().privateKeyPem,
      ND_ID_REDIRECT_URI: 'http://localhost:3999/auth/callback',
      SESSION_SECRET: 'y'.repeat(40),
    });
    await waitForReady(proc);
    expect(proc.stderr()).toContain('Warning: REDIS_URL is not set, so sessions are kept in memory');
    expect(proc.stdout()).toMatch(
      /^Example app ready: open http:\/\/localhost:3999 \(listening on 127\.0\.0\.1:\d+; identity service https:\/\/id\.example\)\n$/,
    );
    await proc.stop();
  });

  it('with an unreadable private key it says which variable is wrong without echoing the key', async () => {
    const proc = start({
      ND_ID_HOSTNAME: 'https://id.example',
      ND_ID_CLIENT_ID: 'rp',
      ND_ID_CLIENT_SECRET: 'client-secret-value',
      ND_ID_PRIVATE_KEY: '-----BEGIN PRIVATE KEY-----\\nbm90LWEta2V5\\n-----END PRIVATE KEY-----',
      ND_ID_REDIRECT_URI: 'https://rp.example/auth/callback',
      SESSION_SECRET: 'x'.repeat(40),
      TRUST_PROXY: '1',
    });
    expect(await proc.exited).not.toBe(0);
    expect(proc.stderr()).toContain('ND_ID_PRIVATE_KEY is not a readable PEM private key');
    expect(proc.stderr()).not.toContain('bm90LWEta2V5');
  });
});
