import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { authorizeQuery, pkce, startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

describe('the QR image', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider();
  });
  afterAll(() => started.close());

  it('decodes to the mobile-app URL of its data-qr-payload, with a white quiet zone, at 320 px or more', async () => {
    const { challenge } = pkce();
    const html = await (await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`)).text();
    const img = /<img class="qr"[^>]*>/.exec(html)?.[0] ?? '';
    const payload = /data-qr-payload="([^"]+)"/.exec(img)?.[1] ?? '';
    const dataUrl = /src="data:image\/png;base64,([^"]+)"/.exec(img)?.[1] ?? '';
    const png = PNG.sync.read(Buffer.from(dataUrl, 'base64'));
    expect(png.width).toBeGreaterThanOrEqual(200);
    expect(png.height).toBe(png.width);
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(decoded?.data).toBe(payload);
    // Quiet zone: the outer 4% of the image is white.
    const edge = Math.floor(png.width * 0.04);
    for (const [x, y] of [[edge, edge], [png.width - 1 - edge, edge], [edge, png.height - 1 - edge]] as const) {
      expect(png.data[(y * png.width + x) * 4]).toBe(255);
    }

    const phone = await (await fetch(payload)).text();
    expect(phone).toContain(TEST_CLIENT.name);
  });
});
