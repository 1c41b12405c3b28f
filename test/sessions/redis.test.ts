/**
 * signOutEverywhere across two app instances sharing a real redis-server (loopback, free port):
 * a person signed in on each instance is signed out of both at their next request, and a
 * protected request reads the shared store once.
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisSignOutStore } from '../../src/flow/redis-sign-out-store.js';
import type { RedisCommandClient } from '../../src/flow/redis-replay-store.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { freePort } from '../helpers/ports.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { Browser, OTHER_PERSONA, startExpressApp, startFetchApp, startTestProvider } from './harness.js';
import { logoutToken, post, providerPem, tokenForm } from './logout-tokens.js';
import { createRedisReplayStore } from '../../src/flow/redis-replay-store.js';

let redis: TestRedis;
let client: ReturnType<typeof createClient>;
let provider: StartedProvider;
const apps: Array<{ close(): Promise<void> }> = [];
/** Commands our sign-out store sent, by name; and the last one whole. */
const commands: string[] = [];
let lastCommand: string[] = [];
let counting: RedisCommandClient;
let ports: number[];

beforeAll(async () => {
  const problem = inject('systemPackagesProblem');
  if (problem) throw new Error(problem);
  redis = await startRedis();
  client = createClient({ url: redis.url });
  await client.connect();
  counting = {
    sendCommand: (args: string[]) => {
      commands.push(args[0]!);
      lastCommand = args;
      return client.sendCommand(args);
    },
  };
  ports = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];
  provider = await startTestProvider(ports.map((p) => `http://127.0.0.1:${p}/auth/callback`));
});

afterAll(async () => {
  for (const app of apps) await app.close();
  await provider?.close();
  await client?.quit();
  await redis?.close();
});

describe('signOutEverywhere with Redis', () => {
  it("ends the sessions of one person on every instance at their next request, and no one else's", async () => {
    const policy = { signOutStore: createRedisSignOutStore(counting) };
    const a = await startExpressApp({ provider, port: ports[0]!, policy });
    const b = await startExpressApp({ provider, port: ports[1]!, policy });
    const c = await startFetchApp({ provider, port: ports[2]!, policy });
    apps.push(a, b, c);
    const onA = new Browser(a.baseUrl);
    const onB = new Browser(b.baseUrl);
    const onC = new Browser(c.baseUrl);
    const someoneElse = new Browser(b.baseUrl);
    for (const browser of [onA, onB, onC]) expect((await browser.signIn()).status).toBe(302);
    provider.provider.approveNext({ persona: OTHER_PERSONA.id });
    expect((await someoneElse.signIn()).status).toBe(302);
    for (const browser of [onA, onB, onC, someoneElse]) expect((await browser.request('/account')).status).toBe(200);

    // One read of the shared store per protected request, and no write: the record's four keys in one MGET.
    commands.length = 0;
    expect((await onB.request('/account')).status).toBe(200);
    expect(commands).toEqual(['MGET']);
    expect(lastCommand.slice(1)).toHaveLength(4);

    const sub = ((await (await onA.request('/account')).json()) as { user: { sub: string } }).user.sub;
    await a.sessions.signOutEverywhere(sub); // asked on instance A only
    expect(await client.keys('nd-id:signed-out:*')).toHaveLength(1);
    expect((await client.keys('nd-id:signed-out:*'))[0]).not.toContain(sub);
    for (const browser of [onA, onB, onC]) {
      const res = await browser.request('/account');
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe('/auth/login?returnTo=%2Faccount');
    }
    expect((await someoneElse.request('/account')).status).toBe(200);
    // Signing in again afterwards, on another instance, works.
    provider.provider.advanceClock(1000);
    expect((await onB.signIn()).status).toBe(302);
    expect((await onB.request('/account')).status).toBe(200);
  });

  it('keeps the later cut-off: an instance whose clock is behind does not bring an ended session back', async () => {
    const store = createRedisSignOutStore(client);
    const app = await startFetchApp({ provider, port: ports[4]!, policy: { signOutStore: store } });
    apps.push(app);
    const browser = new Browser(app.baseUrl);
    expect((await browser.signIn()).status).toBe(302);
    const copy = browser.cookieHeader();
    const sub = ((await (await browser.request('/account')).json()) as { user: { sub: string } }).user.sub;
    provider.provider.advanceClock(1000);
    await app.sessions.signOutEverywhere(sub);
    const replay = (): Promise<Response> =>
      fetch(`${app.baseUrl}/account`, { headers: { cookie: copy }, redirect: 'manual' });
    expect((await replay()).status).toBe(303);
    // Another instance, its clock an hour behind, signs the same person out everywhere.
    const behind = createSessionPolicy({
      signOutStore: store,
      clock: () => provider.provider.clock() - 60 * 60 * 1000,
    });
    await behind.signOutEverywhere(sub);
    expect((await replay()).status).toBe(303);
    expect(
      (await fetch(`${app.baseUrl}/me`, { headers: { cookie: copy } }).then((r) => r.json())) as { user: unknown },
    ).toEqual({ user: null });
  });

  it('stores the later of two times, whichever comes second, and only ever lengthens its lifetime', async () => {
    const store = createRedisSignOutStore(client, { prefix: 'test:keep-later:' });
    await store.signOutBefore('p', 2_000, 60_000);
    await store.signOutBefore('p', 1_000, 120_000);
    expect(await store.signedOutBefore('p')).toBe(2_000);
    expect(await client.pTTL('test:keep-later:p')).toBeGreaterThan(60_000);
    await store.signOutBefore('p', 3_000, 1_000);
    expect(await store.signedOutBefore('p')).toBe(3_000);
    expect(await client.pTTL('test:keep-later:p')).toBeLessThanOrEqual(1_000);
  });

  it('refuses the request (503) rather than letting it through when Redis cannot be read', async () => {
    const failing: RedisCommandClient = { sendCommand: () => Promise.reject(new Error('connection refused')) };
    const app = await startFetchApp({
      provider,
      port: ports[3]!,
      policy: { signOutStore: createRedisSignOutStore(failing) },
    });
    apps.push(app);
    const browser = new Browser(app.baseUrl);
    expect((await browser.signIn()).status).toBe(302);
    const res = await browser.request('/account');
    expect(res.status).toBe(503);
    expect(await res.text()).not.toContain('connection refused');
  });
});

describe('back-channel logout with Redis', () => {
  it('ends the session on every instance and takes a logout token once across them', async () => {
    const own = [await freePort(), await freePort()];
    const signing = await startTestProvider(
      own.map((p) => `http://127.0.0.1:${p}/auth/callback`),
      providerPem,
    );
    const replayStore = createRedisReplayStore(client, { prefix: 'test:bcl-used:' });
    const policy = { signOutStore: createRedisSignOutStore(client, { prefix: 'test:bcl-out:' }) };
    const a = await startExpressApp({ provider: signing, port: own[0]!, policy, replayStore });
    const b = await startFetchApp({ provider: signing, port: own[1]!, policy, replayStore });
    apps.push(a, b, { close: () => signing.close() });
    const onA = new Browser(a.baseUrl);
    const onB = new Browser(b.baseUrl);
    for (const browser of [onA, onB]) expect((await browser.signIn()).status).toBe(302);
    const sub = ((await (await onB.request('/account')).json()) as { user: { sub: string } }).user.sub;
    const token = await logoutToken(a, sub);
    expect((await post(b, tokenForm(token))).status).toBe(200);
    const again = await post(a, tokenForm(token));
    expect(again.status).toBe(400);
    expect(((await again.json()) as { code: string }).code).toBe('logout_token_replayed');
    for (const browser of [onA, onB]) expect((await browser.request('/account')).status).toBe(303);
    // The provider's cut-off, and the one for sign-in records of earlier versions (which name no provider).
    expect(await client.keys('test:bcl-out:*')).toHaveLength(2);
  });

  it("gives a failed logout's jti back, so the provider's retry is taken on another instance, and then once only", async () => {
    const own = [await freePort(), await freePort()];
    const signing = await startTestProvider(
      own.map((p) => `http://127.0.0.1:${p}/auth/callback`),
      providerPem,
    );
    let failWrites = 0;
    const flaky: RedisCommandClient = {
      sendCommand: (args: string[]) => {
        if (args[0] === 'EVAL' && failWrites > 0) {
          failWrites -= 1;
          return Promise.reject(new Error('connection lost'));
        }
        return client.sendCommand(args);
      },
    };
    const replayStore = createRedisReplayStore(client, { prefix: 'test:bcl-retry-used:' });
    const policy = { signOutStore: createRedisSignOutStore(flaky, { prefix: 'test:bcl-retry-out:' }) };
    const a = await startExpressApp({ provider: signing, port: own[0]!, policy, replayStore });
    const b = await startFetchApp({ provider: signing, port: own[1]!, policy, replayStore });
    apps.push(a, b, { close: () => signing.close() });
    const onA = new Browser(a.baseUrl);
    expect((await onA.signIn()).status).toBe(302);
    const sub = ((await (await onA.request('/account')).json()) as { user: { sub: string } }).user.sub;
    const token = await logoutToken(a, sub);
    failWrites = 1;
    const failed = await post(a, tokenForm(token));
    expect(failed.status).toBe(503);
    expect(await client.keys('test:bcl-retry-used:*')).toHaveLength(0);
    expect((await onA.request('/account')).status).toBe(200);
    expect((await post(b, tokenForm(token))).status).toBe(200);
    expect((await onA.request('/account')).status).toBe(303);
    const again = await post(a, tokenForm(token));
    expect(again.status).toBe(400);
    expect(((await again.json()) as { code: string }).code).toBe('logout_token_replayed');
  });
});
