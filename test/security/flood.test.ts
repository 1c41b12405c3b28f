/**
 * Findings (medium) and section 2: request traffic from one address cannot fill a map of the
 * relying party so that real people are refused. Each map is flooded over HTTP, against every
 * adapter, then a real sign-in through the provider still succeeds.
 *
 * - Replay keys: a callback carrying `error` spends none, and a full in-memory store forgets its
 *   oldest keys instead of answering 503 (a small `maxKeys` keeps the test fast).
 * - Pending logins in a session: at most `maxPendingLogins`, the oldest dropped first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryReplayStore, type ReplayStore } from '../../src/flow/replay-store.js';
import { Browser, startLogin } from '../helpers/harness.js';
import { ADAPTERS } from '../helpers/rp-apps.js';
import { signIn, startAppWithProvider, type AppWithProvider } from './support.js';

const MAX_KEYS = 8;
const FLOOD = 3 * MAX_KEYS;

describe.each(ADAPTERS)('%s: flooding the maps request traffic can grow', (adapter) => {
  let rp: AppWithProvider;
  let consumed = 0;
  const app = {
    get baseUrl(): string {
      return rp.app.baseUrl;
    },
  };

  beforeAll(async () => {
    const store = createMemoryReplayStore({ maxKeys: MAX_KEYS });
    const replayStore: ReplayStore = {
      consume: (key, ttl) => {
        consumed++;
        return store.consume(key, ttl);
      },
    };
    rp = await startAppWithProvider(adapter, replayStore);
  });
  afterAll(async () => {
    await rp.close();
  });

  it('cancelled logins (login + callback with error) spend no replay key, and a real sign-in still succeeds', async () => {
    const before = consumed;
    for (let i = 0; i < FLOOD; i++) {
      const browser = new Browser(app.baseUrl);
      const authorize = await startLogin(browser, '/auth/login');
      const state = authorize.searchParams.get('state') ?? '';
      const iss = encodeURIComponent(`${authorize.origin}/v2`);
      expect((await browser.get(`/auth/callback?error=access_denied&state=${state}&iss=${iss}`)).text).toMatch(
        /cancelled or refused/,
      );
    }
    expect(consumed - before).toBe(0);
    await signIn(new Browser(app.baseUrl));
  });

  it('a replay store full of consumed keys forgets the oldest instead of refusing, and a real sign-in still succeeds', async () => {
    const before = consumed;
    for (let i = 0; i < FLOOD; i++) {
      const browser = new Browser(app.baseUrl);
      const authorize = await startLogin(browser, '/auth/login');
      const state = authorize.searchParams.get('state') ?? '';
      const iss = encodeURIComponent(`${authorize.origin}/v2`);
      // A made-up code: the key is spent, then the service refuses the code.
      const page = await browser.get(`/auth/callback?code=made-up-${i}&state=${state}&iss=${iss}`);
      expect(page.status).not.toBe(503);
    }
    expect(consumed - before).toBe(FLOOD);
    await signIn(new Browser(app.baseUrl));
  });

  it('many logins started in one session keep at most maxPendingLogins, and the newest still signs in', async () => {
    const browser = new Browser(app.baseUrl);
    for (let i = 0; i < 40; i++) expect((await browser.get('/auth/login')).status).toBe(302);
    await signIn(browser);
  });
});
