/**
 * Finding (low): a sign-out by GET with neither Sec-Fetch-Site nor Origin (a cross-site link in
 * Safari before 16.4) passed the cross-site check. A GET sign-out now needs Sec-Fetch-Site
 * same-origin or none; a POST still needs its Origin (or Sec-Fetch-Site) to say it is ours.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, me } from '../helpers/harness.js';
import { ADAPTERS } from '../helpers/rp-apps.js';
import { signIn, startAppWithProvider, type AppWithProvider } from './support.js';

function send(
  browser: Browser,
  method: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  return browser.send(method, '/auth/logout', headers);
}

describe.each(ADAPTERS)('%s: sign-out', (adapter) => {
  let rp: AppWithProvider;
  let browser: Browser;
  beforeAll(async () => {
    rp = await startAppWithProvider(adapter);
    browser = new Browser(rp.app.baseUrl);
    await signIn(browser);
  });
  afterAll(async () => {
    await rp.close();
  });

  it.each([
    ['a POST its browser says is cross-site', 'POST', { 'Sec-Fetch-Site': 'cross-site' }, 'signout_cross_site'],
    ['a POST from another Origin', 'POST', { Origin: 'https://evil.example' }, 'signout_cross_site'],
    ['a POST from a sibling subdomain', 'POST', { 'Sec-Fetch-Site': 'same-site' }, 'signout_cross_site'],
  ])('refuses %s (%s) with 403 %s and keeps the person signed in', async (_name, method, headers, code) => {
    const answer = await send(browser, method, headers);
    expect(answer.status).toBe(403);
    expect(answer.text).toContain(`<code>${code}</code>`);
    expect(await me(browser)).not.toBeNull();
  });

  it('refuses a POST whose Origin is its own host on another scheme (403 signout_cross_site), and takes one on its own', async () => {
    const otherScheme = rp.app.baseUrl.replace(/^http:/, 'https:');
    const refused = await send(browser, 'POST', { Origin: otherScheme });
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('<code>signout_cross_site</code>');
    expect(await me(browser)).not.toBeNull();
    expect([302, 303]).toContain((await send(browser, 'POST', { Origin: rp.app.baseUrl })).status);
    expect(await me(browser)).toBeNull();
    await signIn(browser);
  });

  if (adapter === 'fetch') {
    it.each([
      ['a GET with neither Sec-Fetch-Site nor Origin (a cross-site link in an older browser)', {}],
      ['a GET with only an Origin', { Origin: 'https://evil.example' }],
    ])('refuses %s with 403 signout_fetch_metadata_missing', async (_name, headers) => {
      const answer = await send(browser, 'GET', headers);
      expect(answer.status).toBe(403);
      expect(answer.text).toContain('<code>signout_fetch_metadata_missing</code>');
      expect(await me(browser)).not.toBeNull();
    });

    it('signs out on a GET the browser says is same-origin', async () => {
      const answer = await send(browser, 'GET', { 'Sec-Fetch-Site': 'same-origin' });
      expect(answer.status).toBe(302);
      expect(await me(browser)).toBeNull();
      await signIn(browser);
    });
  } else {
    it('offers no GET sign-out', async () => {
      expect((await send(browser, 'GET', { 'Sec-Fetch-Site': 'same-origin' })).status).toBe(404);
      expect(await me(browser)).not.toBeNull();
    });
  }

  it('signs out on a POST from its own page', async () => {
    const answer = await send(browser, 'POST', { Origin: rp.app.baseUrl, 'Sec-Fetch-Site': 'same-origin' });
    expect([302, 303]).toContain(answer.status);
    expect(await me(browser)).toBeNull();
  });
});
