/**
 * The example app without Redis: its in-memory sessions expire by themselves and are bounded in
 * number, seen over HTTP through the app with a real provider on loopback.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createExampleApp, LOGIN_SESSION_MAX_AGE_MS, type ExampleAppConfig } from '../../example-app/app.js';
import { DEFAULT_SCOPE } from '../../example-app/config.js';
import { BoundedMemoryStore } from '../../example-app/memory-store.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { spawnExampleApp, waitForReady } from '../helpers/example-process.js';
import { testKeyPair } from '../helpers/keys.js';
import { manualClock, startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

let provider: StartedProvider;

beforeAll(async () => {
  provider = await startTestProvider({ autoApprove: true });
});
afterAll(async () => {
  await provider.close();
});

function config(memoryStore: ExampleAppConfig['memoryStore']): ExampleAppConfig {
  return {
    provider: {
      hostname: provider.baseUrl,
      clientId: TEST_CLIENT.clientId,
      clientSecret: TEST_CLIENT.clientSecret,
      privateKey: testKeyPair().privateKeyPem,
      redirectUri: TEST_CLIENT.redirectUri,
      scope: DEFAULT_SCOPE,
    },
    sessionSecrets: ['s'.repeat(40)],
    log: () => undefined,
    memoryStore,
  };
}

type Browser = ReturnType<typeof request.agent>;

/** GET /auth/login in `browser`; returns the provider's authorization URL. */
async function startLogin(browser: Browser): Promise<string> {
  const res = await browser.get('/auth/login');
  expect(res.status).toBe(302);
  return res.headers.location as string;
}

/** Let the provider approve (autoApprove), then bring its answer back to the app. */
async function finishLogin(browser: Browser, authorizeUrl: string): Promise<request.Response> {
  const approved = await fetch(authorizeUrl, { redirect: 'manual' });
  const back = new URL(approved.headers.get('location')!);
  return browser.get(`${back.pathname}${back.search}`);
}

async function signIn(browser: Browser): Promise<void> {
  const done = await finishLogin(browser, await startLogin(browser));
  expect(done.status).toBe(302);
  expect(done.headers.location).toBe('/profile');
}

describe('example app sessions in memory', () => {
  it("an abandoned login's session leaves memory once its login has expired, without a request for it; a signed-in session stays", async () => {
    const clock = manualClock();
    const example = createExampleApp(config({ now: clock.now, sweepIntervalMs: 20 }));
    try {
      const store = example.sessions.store;
      expect(store).toBeInstanceOf(BoundedMemoryStore);
      const memory = store as BoundedMemoryStore;

      const abandoned = request.agent(example.app);
      const authorizeUrl = await startLogin(abandoned);
      const signedIn = request.agent(example.app);
      await signIn(signedIn);
      expect(memory.size).toBe(2);

      clock.advance(LOGIN_SESSION_MAX_AGE_MS / 1000 + 1);
      // The sweep removes it by itself: nobody asks for that session again.
      await vi.waitFor(() => expect(memory.size).toBe(1), { timeout: 2000, interval: 20 });
      expect(memory.expired).toBe(1);

      const profile = await signedIn.get('/profile');
      expect(profile.status).toBe(200);
      expect(profile.text).toContain('data-field="name"');
      // Coming back to the abandoned login: its session is gone, so it ends on a clear page.
      const late = await finishLogin(abandoned, authorizeUrl);
      expect(late.status).toBe(403);
      expect(late.text).toContain('Sign-in failed');
    } finally {
      await example.close();
    }
  });

  it('one client starting logins without end cannot grow the store past its bound, nor sign out a signed-in person', async () => {
    const example = createExampleApp(config({ maxSessions: 3 }));
    try {
      const memory = example.sessions.store as BoundedMemoryStore;
      const signedIn = request.agent(example.app);
      await signIn(signedIn);

      const flood: { browser: Browser; authorizeUrl: string }[] = [];
      for (let i = 0; i < 8; i++) {
        const browser = request.agent(example.app);
        flood.push({ browser, authorizeUrl: await startLogin(browser) });
        expect(memory.size).toBeLessThanOrEqual(3);
      }
      expect(memory.size).toBe(3);
      expect(memory.evicted).toBe(6);

      const profile = await signedIn.get('/profile');
      expect(profile.status).toBe(200);
      expect(profile.text).toContain('data-field="name"');
      // The oldest unfinished login was dropped: its owner sees "Sign-in failed" and may start again.
      const dropped = await finishLogin(flood[0]!.browser, flood[0]!.authorizeUrl);
      expect(dropped.status).toBe(403);
      // The newest still completes.
      const last = flood.at(-1)!;
      const done = await finishLogin(last.browser, last.authorizeUrl);
      expect(done.status).toBe(302);
      expect(done.headers.location).toBe('/profile');
      expect((await last.browser.get('/profile')).status).toBe(200);
      expect(memory.size).toBeLessThanOrEqual(3);
    } finally {
      await example.close();
    }
  });

  it('the store refuses an unusable bound with a TypeError naming the option', () => {
    expect(() => new BoundedMemoryStore({ maxSessions: 0 })).toThrow(
      /maxSessions must be a whole number of at least 1/,
    );
  });

  it('started against a real service without REDIS_URL, the app says its sessions are per-process and bounded', async () => {
    const app = spawnExampleApp({
      PORT: '0',
      ND_ID_HOSTNAME: 'https://id.example',
      ND_ID_CLIENT_ID: 'rp-1',
      ND_ID_CLIENT_SECRET: 'client-secret-value',
      ND_ID_PRIVATE_KEY: testKeyPair().privateKeyPem,
      ND_ID_REDIRECT_URI: 'http://127.0.0.1:3000/auth/callback',
      SESSION_SECRET: 's'.repeat(40),
      MAX_MEMORY_SESSIONS: '500',
    });
    try {
      await waitForReady(app);
      expect(app.stderr()).toMatch(
        /per-process \(not shared between instances, lost on restart\) and bounded \(at most 500 sessions/,
      );
    } finally {
      await app.stop();
    }
  });
});
