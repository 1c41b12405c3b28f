/**
 * One adapter conformance suite: the same cases against every adapter — Express through plain
 * `passport.authenticate('nd-id')`, the Express router, NestJS, the fetch handlers on Hono, and
 * Fastify on @fastify/session, @fastify/secure-session and beside @fastify/passport — over real
 * HTTP and real cookies against the provider with its movable clock. A guarantee that holds on
 * one adapter and not another fails here. The conformance-*.test.ts files run it per framework.
 * Not a test file itself.
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createRedisSignOutStore } from '../../src/flow/redis-sign-out-store.js';
import type { SignOutStore } from '../../src/flow/sign-out-store.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';
import {
  appsUnderTest,
  Browser,
  MINUTE,
  OTHER_PERSONA,
  recordingLogger,
  type TestApp,
  type TestAppOptions,
} from '../sessions/harness.js';

/** Starts a login in `browser` and has the provider approve it: the callback URL to open. */
async function approvedCallback(browser: Browser, loginPath = '/auth/login'): Promise<string> {
  const start = await browser.request(loginPath);
  expect(start.status).toBe(302);
  const approved = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  const callback = approved.headers.get('location');
  if (callback === null) throw new Error(`the provider answered ${approved.status}`);
  return callback;
}

/** The person's sub, read through the guarded page. */
async function subOf(browser: Browser): Promise<string> {
  const res = await browser.request('/account');
  expect(res.status).toBe(200);
  return ((await res.json()) as { user: { sub: string } }).user.sub;
}

/** A sign-out store whose reads fail, as Redis being down. */
const FAILING_STORE: SignOutStore = {
  signOutBefore: async () => undefined,
  signedOutBefore: async () => {
    throw new Error('store down');
  },
};

/** An adapter of the suite: its name, and how to start its app with the suite's routes. */
export type Adapter = [name: string, start: (options?: TestAppOptions) => Promise<TestApp>];

/**
 * Runs every case against each of `adapters`; call once at the top of a test file (one file per
 * framework, so the files run side by side).
 */
export function conformanceSuite(adapters: Adapter[]): void {
  /** One redis-server (loopback) for the Redis sign-out store cases. */
  let redis: TestRedis | undefined;
  let redisClient: ReturnType<typeof createClient> | undefined;
  beforeAll(async () => {
    const problem = inject('systemPackagesProblem');
    if (problem) throw new Error(problem);
    redis = await startRedis();
    redisClient = createClient({ url: redis.url });
    await redisClient.connect();
  });
  afterAll(async () => {
    await redisClient?.quit();
    await redis?.close();
  });
  describe.each(adapters)('%s', (name, start) => adapterCases(name, start, () => redisClient!));
}

/** The cases, against one adapter. */
function adapterCases(name: string, start: Adapter[1], redisClient: () => ReturnType<typeof createClient>): void {
  const apps = appsUnderTest(start);

  it('answers the login start, the callback and the guarded page with Cache-Control: no-store', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const login = await browser.request('/auth/login');
    expect(login.headers.get('cache-control')).toContain('no-store');
    const approved = await fetch(login.headers.get('location')!, { redirect: 'manual' });
    const callback = await browser.request(approved.headers.get('location')!);
    expect(callback.status).toBe(302);
    expect(callback.headers.get('cache-control')).toContain('no-store');
    expect((await browser.request('/account')).headers.get('cache-control')).toContain('no-store');
    const refused = await new Browser(app.baseUrl).request('/account');
    expect(refused.headers.get('cache-control')).toContain('no-store');
  });

  it('lets two tabs of one browser both complete: the other tab’s login survives the sign-in', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const first = await approvedCallback(browser, '/auth/login?returnTo=%2Fone');
    const second = await approvedCallback(browser, '/auth/login?returnTo=%2Ftwo');
    expect((await browser.request(second)).headers.get('location')).toBe('/two');
    // Completed, not merely sent on as a signed-in replay (which would go to '/').
    expect((await browser.request(first)).headers.get('location')).toBe('/one');
    expect((await browser.request('/account')).status).toBe(200);
  });

  it('gives the browser a new session at sign-in (no fixation): the cookie from before signs nobody in', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const callback = await approvedCallback(browser);
    const before = browser.cookieHeader();
    expect(before).not.toBe('');
    expect((await browser.request(callback)).status).toBe(302);
    expect(browser.cookieHeader()).not.toBe(before);
    const planted = await fetch(`${app.baseUrl}/api/me`, { headers: { cookie: before, accept: 'application/json' } });
    expect(planted.status).toBe(401);
  });

  it('refuses a callback opened in another browser (login CSRF): 403, nobody signed in there', async () => {
    const app = await apps.start();
    const attacker = new Browser(app.baseUrl);
    const callback = await approvedCallback(attacker);
    const victim = new Browser(app.baseUrl);
    expect((await victim.request('/auth/login')).status).toBe(302); // the victim has a session of its own
    const res = await victim.request(callback);
    expect(res.status).toBe(403);
    expect((await victim.request('/api/me', { headers: { accept: 'application/json' } })).status).toBe(401);
  });

  it.each(['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/%5cevil.example', 'javascript:alert(1)'])(
    'never sends the person off-site after sign-in for returnTo=%s',
    async (hostile) => {
      const app = await apps.start();
      const browser = new Browser(app.baseUrl);
      const callback = await approvedCallback(browser, `/auth/login?returnTo=${encodeURIComponent(hostile)}`);
      const res = await browser.request(callback);
      expect(res.status).toBe(302);
      const location = res.headers.get('location')!;
      expect(new URL(location, app.baseUrl).origin).toBe(app.baseUrl);
      expect(location.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\')).toBe(true);
    },
  );

  it('ends the session after maxSessionAge and says why', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await apps.signedIn({
      policy: { maxSessionAge: 60 * MINUTE, idleTimeout: false, logger },
    });
    app.provider.provider.advanceClock(59 * MINUTE);
    expect((await browser.request('/account')).status).toBe(200);
    app.provider.provider.advanceClock(2 * MINUTE);
    const res = await browser.request('/account');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/auth/login?returnTo=%2Faccount');
    const api = await browser.request('/api/me', { headers: { accept: 'application/json' } });
    expect(api.status).toBe(401);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'max_session_age' }));
  });

  it('rolls the idle timeout on activity and ends an idle session', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await apps.signedIn({
      policy: { idleTimeout: 30 * MINUTE, touchInterval: MINUTE, logger },
    });
    for (let i = 0; i < 3; i++) {
      app.provider.provider.advanceClock(20 * MINUTE);
      expect((await browser.request('/account')).status).toBe(200);
    }
    app.provider.provider.advanceClock(31 * MINUTE);
    expect((await browser.request('/account')).status).toBe(303);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'idle_timeout' }));
  });

  it('signOutEverywhere ends every session of the person at its next request, not those of others', async () => {
    const { app, browser } = await apps.signedIn();
    const laptop = new Browser(app.baseUrl);
    expect((await laptop.signIn()).status).toBe(302);
    const other = new Browser(app.baseUrl);
    app.provider.provider.approveNext({ persona: OTHER_PERSONA.id });
    expect((await other.signIn()).status).toBe(302);
    await app.sessions.signOutEverywhere(await subOf(browser));
    expect((await browser.request('/account')).status).toBe(303);
    const api = await laptop.request('/api/me', { headers: { accept: 'application/json' } });
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: string }).error).toBe('session_ended');
    expect((await other.request('/account')).status).toBe(200);
  });

  it('signOutEverywhere through a Redis sign-out store ends the person’s sessions on this adapter too', async () => {
    const signOutStore = createRedisSignOutStore(redisClient(), { prefix: `conformance:${name}:` });
    const { app, browser } = await apps.signedIn({ policy: { signOutStore } });
    const copy = browser.cookieHeader();
    await app.sessions.signOutEverywhere(await subOf(browser));
    expect((await browser.request('/account')).status).toBe(303);
    const replay = await fetch(`${app.baseUrl}/api/me`, { headers: { cookie: copy, accept: 'application/json' } });
    expect(replay.status).toBe(401);
  });

  it('step-up: an older sign-in starts a login with max_age, and a fresh one lets the action through', async () => {
    const { app, browser } = await apps.signedIn();
    expect((await browser.request('/transfer')).status).toBe(200);
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toBe('/auth/login?returnTo=%2Ftransfer&maxAge=300');
    const done = await browser.signIn(refused.headers.get('location')!);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/transfer');
    expect((await browser.request('/transfer')).status).toBe(200);
  });

  it('step-up: an auth_time that comes back too old is refused (403), the person still signed in as before', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await apps.signedIn({ policy: { logger } });
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    app.provider.provider.approveNext({ claims: { auth_time: -3600 } });
    const page = await browser.signIn(refused.headers.get('location')!);
    expect(page.status).toBe(403);
    expect(page.headers.get('cache-control')).toContain('no-store');
    expect(events).toContainEqual(expect.objectContaining({ event: 'step_up_refused', reason: 'not_recent' }));
    expect((await browser.request('/account')).status).toBe(200);
    expect((await browser.request('/transfer')).status).toBe(303);
  });

  it('step-up: a different person coming back is refused (403) and the session is ended', async () => {
    const { logger, events } = recordingLogger();
    const { app, browser } = await apps.signedIn({ policy: { logger } });
    app.provider.provider.advanceClock(10 * MINUTE);
    const refused = await browser.request('/transfer');
    app.provider.provider.approveNext({ persona: OTHER_PERSONA.id });
    const page = await browser.signIn(refused.headers.get('location')!);
    expect(page.status).toBe(403);
    expect((await browser.request('/account')).status).toBe(303);
    expect(events).toContainEqual(expect.objectContaining({ event: 'session_ended', reason: 'other_person' }));
  });

  it('refuses the guarded request (5xx) rather than letting it through when the sign-out store fails', async () => {
    const { browser } = await apps.signedIn({ policy: { signOutStore: FAILING_STORE } });
    const res = await browser.request('/account');
    // Express and Nest hand the session_store_unavailable IdError to the app's error handler; the others answer 503.
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(await res.text()).not.toContain('store down');
  });

  it('shows a 5xx page and signs nobody in when the service is down at the callback', async () => {
    const app = await apps.start();
    const browser = new Browser(app.baseUrl);
    const callback = await approvedCallback(browser);
    app.provider.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'token', times: 3 });
    const res = await browser.request(callback);
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect((await browser.request('/api/me', { headers: { accept: 'application/json' } })).status).toBe(401);
  });
}
