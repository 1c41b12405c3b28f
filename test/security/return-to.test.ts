/**
 * Finding (low): a non-Latin-1 returnTo (`/中文`) broke the fetch adapter's callback with a 500
 * after the code was redeemed (a Location header carries Latin-1 only), so the person was not
 * signed in and the login was used up. Both adapters now redirect to the percent-encoded path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from '../helpers/harness.js';
import { ADAPTERS } from '../helpers/rp-apps.js';
import { signIn, startAppWithProvider, type AppWithProvider } from './support.js';

describe.each(ADAPTERS)('%s: a returnTo outside Latin-1', (adapter) => {
  let rp: AppWithProvider;
  beforeAll(async () => {
    rp = await startAppWithProvider(adapter);
  });
  afterAll(async () => {
    await rp.close();
  });

  it('signs the person in and returns to the percent-encoded path', async () => {
    const browser = new Browser(rp.app.baseUrl);
    const location = await signIn(browser, `/auth/login?returnTo=${encodeURIComponent('/中文?q=é#ü')}`);
    expect(location).toBe('/%E4%B8%AD%E6%96%87?q=%C3%A9#%C3%BC');
  });
});
