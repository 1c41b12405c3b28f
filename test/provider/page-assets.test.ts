/**
 * The provider's pages take their stylesheet and script from its own static files (named by a
 * hash of their content, cached for good), so the CSP allows no inline script or style: only the
 * error pages inline the stylesheet, allowed by its hash. Over HTTP, at the root and below a base path.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { authorizeQuery, pkce, startTestProvider } from '../helpers/provider-fixtures.js';

describe.each([
  ['at the root', ''],
  ['below a base path', '/idp'],
])('the pages %s', (_where, basePath) => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider(basePath === '' ? {} : { basePath });
  });
  afterAll(() => started.close());

  it('link the stylesheet and the poll script, served immutable with their media type, and the CSP allows nothing inline', async () => {
    const page = await fetch(`${started.baseUrl}${basePath}/v2/oauth/authorize?${authorizeQuery(pkce().challenge)}`);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).not.toMatch(/unsafe-inline|nonce-/);
    expect(csp).toMatch(/script-src 'self'/);
    const html = await page.text();
    expect(html).not.toMatch(/<style>|<script>|<script nonce/);
    const css = new RegExp(
      `<link rel="stylesheet" href="(${basePath}/_provider/static/page\\.[\\w-]{16}\\.css)">`,
    ).exec(html)?.[1];
    const js = new RegExp(`<script src="(${basePath}/_provider/static/qr\\.[\\w-]{16}\\.js)"></script>`).exec(
      html,
    )?.[1];
    for (const [path, type, sample] of [
      [css, 'text/css; charset=utf-8', '.qr {'],
      [js, 'text/javascript; charset=utf-8', 'qr-config'],
    ] as const) {
      expect(path).toBeDefined();
      const res = await fetch(`${started.baseUrl}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe(type);
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const text = await res.text();
      expect(text).toContain(sample);
      // The name carries the content's hash: a changed file is a new URL.
      expect(path).toContain(createHash('sha256').update(text).digest('base64url').slice(0, 16));
    }
  });

  it('an error page inlines the stylesheet, allowed by its hash in the CSP', async () => {
    const page = await fetch(`${started.baseUrl}${basePath}/v2/oauth/authorize?client_id=nobody`);
    expect(page.status).toBe(400);
    const style = /<style>([^<]*)<\/style>/.exec(await page.text())?.[1] ?? '';
    expect(style).toContain('.error-code');
    expect(page.headers.get('content-security-policy')).toContain(
      `'sha256-${createHash('sha256').update(style).digest('base64')}'`,
    );
  });
});
