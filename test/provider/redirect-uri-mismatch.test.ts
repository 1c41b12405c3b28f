/**
 * An unregistered callback URL: the error page and the log show the URI sent and the registered
 * ones, point at a host-name slip (localhost against 127.0.0.1), and escape what was sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { describeRedirectUriMismatch } from '../../src/provider/redirect-uri-hint.js';
import { authorizeQuery, pkce, startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

let started: StartedProvider;
const lines: string[] = [];

beforeAll(async () => {
  started = await startTestProvider({ autoApprove: true, log: (line) => lines.push(line) });
});
afterAll(() => started.close());

async function authorizePage(redirectUri: string): Promise<{ status: number; html: string }> {
  const res = await fetch(
    `${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge, { redirect_uri: redirectUri })}`,
    { redirect: 'manual' },
  );
  return { status: res.status, html: await res.text() };
}

describe('unregistered redirect_uri', () => {
  it('the page shows the URI sent, the registered one and that only the host differs; the log says the same', async () => {
    // Registered: http://127.0.0.1:9999/callback
    const sent = TEST_CLIENT.redirectUri.replace('127.0.0.1', 'localhost');
    const { status, html } = await authorizePage(sent);
    expect(status).toBe(400);
    expect(html).toContain('data-error-code="redirect_uri_mismatch"');
    expect(html).toContain(`Sent: ${sent}.`);
    expect(html).toContain(`Registered: ${TEST_CLIENT.redirectUri}.`);
    expect(html).toMatch(
      /Likely cause: the host differs: localhost was sent, 127\.0\.0\.1 is registered \(they are different origins/,
    );
    expect(lines.join('\n')).toContain(
      `authorize: refused: redirect_uri_mismatch for client ${TEST_CLIENT.clientId}: The redirect_uri is not registered for this client (it must match exactly). Sent: ${sent}. Registered: ${TEST_CLIENT.redirectUri}.`,
    );
    // Never redirected to the unregistered URI.
    expect(html).not.toContain('http-equiv="refresh"');
  });

  it('escapes markup in the URI sent', async () => {
    const { status, html } = await authorizePage(`${TEST_CLIENT.redirectUri}?next="><script>alert(1)</script>`);
    expect(status).toBe(400);
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&quot;&gt;');
  });

  it('names a trailing-slash, port or scheme slip, and cuts long URIs and long lists', () => {
    expect(describeRedirectUriMismatch('http://127.0.0.1:3000/cb/', ['http://127.0.0.1:3000/cb'])).toMatch(
      /Likely cause: only a trailing slash differs/,
    );
    expect(describeRedirectUriMismatch('http://127.0.0.1:3001/cb', ['http://127.0.0.1:3000/cb'])).toMatch(
      /Likely cause: the port differs: 3001 was sent, 3000 is registered/,
    );
    expect(describeRedirectUriMismatch('http://app.example/cb', ['https://app.example/cb'])).toMatch(
      /Likely cause: the scheme differs: http was sent, https is registered/,
    );
    expect(describeRedirectUriMismatch('https://a.example/x', ['https://b.example/y'])).not.toMatch(/Likely cause/);
    const long = describeRedirectUriMismatch(
      `https://a.example/${'x'.repeat(3000)}`,
      Array.from({ length: 8 }, (_, i) => `https://a.example/${i}`),
    );
    expect(long.length).toBeLessThan(600);
    expect(long).toMatch(/…\. Registered: .*, and 3 more\./);
  });
});
