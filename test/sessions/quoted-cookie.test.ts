/**
 * The fetch handlers read their session cookie as RFC 6265 writes it: a value may come wrapped
 * in double quotes (some proxies and clients quote it), and is the same session.
 */
import { describe, expect, it } from 'vitest';
import { appsUnderTest, startFetchApp } from './harness.js';

const { signedIn } = appsUnderTest(startFetchApp);

describe('the sealed session cookie (fetch handlers)', () => {
  it('is read with or without double quotes around its value', async () => {
    const { app, browser } = await signedIn();
    const [name, value] = [...browser.cookies][0]!;
    const plain = await fetch(`${app.baseUrl}/account`, {
      headers: { cookie: `${name}=${value}` },
      redirect: 'manual',
    });
    expect(plain.status).toBe(200);
    const quoted = await fetch(`${app.baseUrl}/account`, {
      headers: { cookie: `other=1; ${name}="${value}"` },
      redirect: 'manual',
    });
    expect(quoted.status).toBe(200);
  });
});
