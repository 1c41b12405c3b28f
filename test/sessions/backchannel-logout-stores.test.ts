/**
 * Back-channel logout and its stores, over real HTTP with real cookies: a logout whose sessions
 * could not be ended gives its `jti` back, so the provider's retry is taken (and a success stays
 * once only); a logout token ends the sessions of its own provider only, when apps of two
 * providers share one sign-out store, while the records and cut-offs of earlier versions (no
 * issuer) still end; and a full memory sign-out store refuses (503) rather than drop a live cut-off.
 */
import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ReplayStore } from '../../src/flow/replay-store.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { createMemorySignOutStore, type SignOutStore } from '../../src/flow/sign-out-store.js';
import { freePort } from '../helpers/ports.js';
import {
  appsUnderTest,
  Browser,
  OTHER_PERSONA,
  startExpressApp,
  startFetchApp,
  startTestProvider,
  type CountingStore,
  type TestApp,
} from './harness.js';
import { logoutToken, post, providerPem, tokenForm } from './logout-tokens.js';

interface Signed {
  sub: string;
  sid?: string;
  iss?: string;
}

async function signInOf(browser: Browser): Promise<Signed> {
  const res = await browser.request('/account', { headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { signIn: Signed }).signIn;
}

async function signedIn(browser: Browser): Promise<boolean> {
  const res = await browser.request('/account', { headers: { accept: 'application/json' } });
  expect([200, 401]).toContain(res.status);
  return res.status === 200;
}

async function codeOf(res: Response): Promise<string> {
  return ((await res.json()) as { code: string }).code;
}

/** A memory sign-out store whose next write fails, as a Redis that is briefly away. */
function flakyStore(): { store: SignOutStore; failNext(): void } {
  const inner = createMemorySignOutStore();
  let failures = 0;
  return {
    store: {
      signOutBefore(key, at, ttl) {
        if (failures === 0) return inner.signOutBefore(key, at, ttl);
        failures -= 1;
        return Promise.reject(new Error('connection lost'));
      },
      signedOutBefore: (key) => inner.signedOutBefore(key),
    },
    failNext() {
      failures = 1;
    },
  };
}

describe('a back-channel logout whose sessions could not be ended', () => {
  const apps = appsUnderTest<TestApp>((options) => startExpressApp({ ...options, signingKey: providerPem }));

  /** A replay store of an app's own making: consume only, no release. */
  function consumeOnly(): ReplayStore {
    const inner = createMemoryReplayStore();
    return { consume: (key, ttl) => inner.consume(key, ttl) };
  }

  it.each([
    ['the memory replay store (release)', () => createMemoryReplayStore()],
    ['a replay store without release, retried at the same instance', consumeOnly],
  ])('answers 503, takes the retry of its jti, and then the jti once only: %s', async (_what, replayStore) => {
    const flaky = flakyStore();
    const { app, browser } = await apps.signedIn({ policy: { signOutStore: flaky.store }, replayStore: replayStore() });
    const { sub } = await signInOf(browser);
    const token = await logoutToken(app, sub);
    flaky.failNext();
    const failed = await post(app, tokenForm(token));
    expect(failed.status).toBe(503);
    expect(await codeOf(failed)).toBe('session_store_unavailable');
    expect(await signedIn(browser)).toBe(true);
    // The provider retries the same token once the store is back.
    expect((await post(app, tokenForm(token))).status).toBe(200);
    expect(await signedIn(browser)).toBe(false);
    const again = await post(app, tokenForm(token));
    expect(again.status).toBe(400);
    expect(await codeOf(again)).toBe('logout_token_replayed');
  });
});

describe('back-channel logout with apps of two providers sharing one sign-out store', () => {
  async function twoProviders() {
    const ports = [await freePort(), await freePort()];
    const [providerA, providerB] = await Promise.all(
      ports.map((port) => startTestProvider([`http://127.0.0.1:${port}/auth/callback`], providerPem)),
    );
    const signOutStore = createMemorySignOutStore();
    const a = await startExpressApp({ provider: providerA!, port: ports[0]!, policy: { signOutStore } });
    const b = await startFetchApp({ provider: providerB!, port: ports[1]!, policy: { signOutStore } });
    const atA = new Browser(a.baseUrl);
    const atB = new Browser(b.baseUrl);
    expect((await atA.signIn()).status).toBe(302);
    expect((await atB.signIn()).status).toBe(302);
    return {
      a,
      b,
      atA,
      atB,
      signOutStore,
      async close() {
        await a.close();
        await b.close();
        await providerA!.close();
        await providerB!.close();
      },
    };
  }

  it("keeps the provider's issuer in the sign-in record", async () => {
    const apps = await twoProviders();
    try {
      expect((await signInOf(apps.atA)).iss).toBe(`${apps.a.provider.baseUrl}/v2`);
      expect((await signInOf(apps.atB)).iss).toBe(`${apps.b.provider.baseUrl}/v2`);
    } finally {
      await apps.close();
    }
  });

  it("a token of provider B naming a sub or sid of provider A's person ends nothing at A; A's own does", async () => {
    const apps = await twoProviders();
    try {
      const { sub, sid } = await signInOf(apps.atA);
      expect(sid).toBeTypeOf('string');
      expect((await post(apps.b, tokenForm(await logoutToken(apps.b, sub)))).status).toBe(200);
      const bySid = await logoutToken(apps.b, sub, { claims: { sid }, without: ['sub'] });
      expect((await post(apps.b, tokenForm(bySid))).status).toBe(200);
      expect(await signedIn(apps.atA)).toBe(true);
      expect(await signedIn(apps.atB)).toBe(true);
      expect((await post(apps.a, tokenForm(await logoutToken(apps.a, sub, { claims: { sid } })))).status).toBe(200);
      expect(await signedIn(apps.atA)).toBe(false);
    } finally {
      await apps.close();
    }
  });

  it('signOutEverywhere with an issuer ends the person at that provider only; without one, at every provider', async () => {
    const apps = await twoProviders();
    try {
      const { sub } = await signInOf(apps.atA);
      const otherSub = (await signInOf(apps.atB)).sub;
      await apps.b.sessions.signOutEverywhere(sub, { issuer: `${apps.b.provider.baseUrl}/v2` });
      expect(await signedIn(apps.atA)).toBe(true);
      await apps.a.sessions.signOutEverywhere(sub, { issuer: `${apps.a.provider.baseUrl}/v2` });
      expect(await signedIn(apps.atA)).toBe(false);
      // Without an issuer, as before: that sub at every provider.
      await apps.a.sessions.signOutEverywhere(otherSub);
      expect(await signedIn(apps.atB)).toBe(false);
    } finally {
      await apps.close();
    }
  });

  it('a cut-off written by an earlier version (no issuer in its key) still ends a session of either provider', async () => {
    const apps = await twoProviders();
    try {
      const { sid } = await signInOf(apps.atA);
      const { sub } = await signInOf(apps.atB);
      const legacyKey = (kind: string, value: string) => hash('sha256', `nd-id ${kind}\n${value}`, 'base64url');
      const now = apps.a.provider.provider.clock();
      await apps.signOutStore.signOutBefore(legacyKey('sid', sid!), now, 60_000);
      await apps.signOutStore.signOutBefore(legacyKey('sign-out', sub), now, 60_000);
      expect(await signedIn(apps.atA)).toBe(false);
      expect(await signedIn(apps.atB)).toBe(false);
    } finally {
      await apps.close();
    }
  });

  it('a sign-in record kept by an earlier version (no issuer) is still ended by a logout for its sub', async () => {
    const apps = await twoProviders();
    try {
      const { sub } = await signInOf(apps.atA);
      await dropIssuer(apps.a as TestApp & { store: CountingStore }, apps.atA);
      expect((await signInOf(apps.atA)).iss).toBeUndefined();
      expect((await post(apps.a, tokenForm(await logoutToken(apps.a, sub)))).status).toBe(200);
      expect(await signedIn(apps.atA)).toBe(false);
    } finally {
      await apps.close();
    }
  });
});

/** Rewrites the session's sign-in record as an earlier version kept it: without `iss`. */
async function dropIssuer(app: TestApp & { store: CountingStore }, browser: Browser): Promise<void> {
  const sid = ((await (await browser.request('/sid')).json()) as { sid: string }).sid;
  const data = await new Promise<Record<string, unknown>>((resolve, reject) =>
    app.store.get(sid, (err, value) => (err ? reject(err) : resolve(value as unknown as Record<string, unknown>))),
  );
  const { iss: _dropped, ...record } = data['nd-id.signin'] as Record<string, unknown>;
  await new Promise<void>((resolve, reject) =>
    app.store.set(sid, { ...data, 'nd-id.signin': record } as never, (err) => (err ? reject(err) : resolve())),
  );
}

describe('a full memory sign-out store', () => {
  const apps = appsUnderTest<TestApp>((options) => startExpressApp({ ...options, signingKey: providerPem }));
  const HOUR = 60 * 60 * 1000;

  it('refuses a new cut-off (503, the provider retries) rather than drop a live one, and makes room as they expire', async () => {
    let clock = (): number => Date.now();
    // A logout by sub keeps two entries: its provider's, and one for records of earlier versions.
    const signOutStore = createMemorySignOutStore({ maxEntries: 4, clock: () => clock() });
    const { app, browser } = await apps.signedIn({ policy: { signOutStore, maxSessionAge: HOUR } });
    clock = app.provider.provider.clock;
    const { sub } = await signInOf(browser);
    app.provider.provider.approveNext({ persona: OTHER_PERSONA.id });
    const other = new Browser(app.baseUrl);
    expect((await other.signIn()).status).toBe(302);
    const otherSub = (await signInOf(other)).sub;

    expect((await post(app, tokenForm(await logoutToken(app, sub)))).status).toBe(200);
    expect((await post(app, tokenForm(await logoutToken(app, 'someone-else')))).status).toBe(200);
    const full = await post(app, tokenForm(await logoutToken(app, otherSub)));
    expect(full.status).toBe(503);
    expect(await codeOf(full)).toBe('session_store_unavailable');
    // The first cut-off was kept: that session stays ended; the refused one's person is still in.
    expect(await signedIn(browser)).toBe(false);
    expect(await signedIn(other)).toBe(true);
    // Once the cut-offs have expired (after maxSessionAge), the store takes new ones again.
    app.provider.provider.advanceClock(HOUR + 1000);
    expect((await post(app, tokenForm(await logoutToken(app, 'a-later-person')))).status).toBe(200);
  });
});
