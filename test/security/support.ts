/**
 * An app of each adapter (see rp-apps.ts) wired to a provider on loopback that approves every
 * login, and a real sign-in through it. Not a test file itself.
 */
import { expect } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import type { ReplayStore } from '../../src/flow/replay-store.js';
import {
  approve,
  Browser,
  CLIENT_ID,
  CLIENT_SECRET,
  me,
  startIntegrationProvider,
  startLogin,
} from '../helpers/harness.js';
import { startRpApp, type AdapterName, type RpApp } from '../helpers/rp-apps.js';

/** An app and its provider. */
export interface AppWithProvider {
  app: RpApp;
  provider: StartedProvider;
  close(): Promise<void>;
}

/** Starts the app of `adapter` and a provider registered for its callback URL. */
export async function startAppWithProvider(adapter: AdapterName, replayStore?: ReplayStore): Promise<AppWithProvider> {
  let provider: StartedProvider | undefined;
  const app = await startRpApp(adapter, {
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    ...(replayStore === undefined ? {} : { replayStore }),
    hostname: async (callbackUrl) => {
      provider = (await startIntegrationProvider(callbackUrl)).provider;
      return provider.baseUrl;
    },
  });
  const started = provider as unknown as StartedProvider;
  return {
    app,
    provider: started,
    close: async () => {
      await app.close();
      await started.close();
    },
  };
}

/** Signs a person in through `loginPath` in `browser`; returns where the app sent the browser after the callback. */
export async function signIn(browser: Browser, loginPath = '/auth/login'): Promise<string | null> {
  const callback = await approve(await startLogin(browser, loginPath));
  const done = await browser.get(callback.href);
  expect(done.status).toBe(302);
  expect((await me(browser))?.sub).toMatch(/\S/);
  // Still one redemption per login.
  expect((await new Browser(browser.baseUrl).get(callback.href)).status).toBe(403);
  return done.location;
}
