import jsQR from 'jsqr';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { authorizeQuery, pkce, startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';
import { rasterize } from '../helpers/qr-raster.js';

describe('the QR image', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider();
  });
  afterAll(() => started.close());

  it('is an SVG on its own route that decodes to the mobile-app URL of its data-qr-payload, with a white quiet zone, shown at 320 px', async () => {
    const { challenge } = pkce();
    const html = await (await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`)).text();
    const img = /<img class="qr"[^>]*>/.exec(html)?.[0] ?? '';
    expect(img).toContain('width="320" height="320"');
    const payload = /data-qr-payload="([^"]+)"/.exec(img)?.[1] ?? '';
    const src = /src="([^"]+)"/.exec(img)?.[1] ?? '';
    const res = await fetch(new URL(src, started.baseUrl));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(res.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    const svg = await res.text();
    expect(svg).not.toMatch(/<script|on\w+=/i);
    const { data, width } = rasterize(svg, 4);
    expect(jsQR(data, width, width)?.data).toBe(payload);
    // Quiet zone: four modules of white around the code.
    const quiet = 4 * 4;
    for (let i = 0; i < quiet; i++) {
      expect(data[(i * width + i) * 4]).toBe(255);
      expect(data[((width - 1 - i) * width + i) * 4]).toBe(255);
    }

    const phone = await (await fetch(payload)).text();
    expect(phone).toContain(TEST_CLIENT.name);
  });

  it('is gone once the request is answered or unknown', async () => {
    const res = await fetch(`${started.baseUrl}/_provider/qr-image/${'A'.repeat(43)}`);
    expect(res.status).toBe(404);
  });
});
