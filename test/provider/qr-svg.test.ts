import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import jsQR from 'jsqr';
import { afterAll, describe, expect, it } from 'vitest';
import { createProvider } from '../../src/provider/index.js';
import { QR_MASK, QR_QUIET_ZONE, renderQrSvg } from '../../src/provider/views/qr-svg.js';
import { authorizeQuery, pkce, providerOptions } from '../helpers/provider-fixtures.js';
import { rasterize } from '../helpers/qr-raster.js';

/** Decodes `svg` as a scanner would; returns the text, its raw bytes and the version read. */
function scan(svg: string): { text: string; bytes: number[]; version: number } | null {
  const { data, width } = rasterize(svg, 2);
  const found = jsQR(data, width, width, { inversionAttempts: 'dontInvert' });
  return found && { text: found.data, bytes: found.binaryData, version: found.version };
}

/** A deterministic stream of pseudo-random numbers (xorshift32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const URL_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&()*+,;=%';

function randomText(length: number, next: () => number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += URL_CHARS[Math.floor(next() * URL_CHARS.length)];
  return s;
}

/** Scheme, the longest DNS name (253), the largest port, the longest basePath (8 × 64), the phone path and id. */
const LONGEST_HOST = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
const LONGEST_BASE_PATH = `/${'p'.repeat(64)}`.repeat(8);
const LONGEST_PAYLOAD = `https://${LONGEST_HOST}:65535${LONGEST_BASE_PATH}/mobile-app/${'A'.repeat(43)}`.length;

/** The dark modules of an SVG drawn by renderQrSvg, read back from its path of runs (quiet zone removed). */
function modulesOf(svg: string): { size: number; at: (row: number, col: number) => number } {
  const total = Number(/viewBox="0 0 (\d+) /.exec(svg)?.[1]);
  const size = total - 2 * QR_QUIET_ZONE;
  const dark = new Set<number>();
  for (const [, x, y, w] of svg.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g)) {
    for (let i = 0; i < Number(w); i++) dark.add((Number(y) - QR_QUIET_ZONE) * size + Number(x) - QR_QUIET_ZONE + i);
  }
  return { size, at: (row, col) => (dark.has(row * size + col) ? 1 : 0) };
}

describe('the QR code (uqr, drawn as SVG)', () => {
  it(`decodes with a scanner at payload lengths up to ${LONGEST_PAYLOAD} bytes, the provider's longest`, () => {
    const next = prng(0x9e3779b9);
    for (const length of [1, 14, 15, 100, 213, 214, 500, LONGEST_PAYLOAD]) {
      const text = randomText(length, next);
      expect(scan(renderQrSvg(text, 320))?.text, `${length} bytes`).toBe(text);
    }
    expect(LONGEST_HOST).toHaveLength(253);
    expect(LONGEST_PAYLOAD).toBe(842);
  });

  it('encodes UTF-8 text as its bytes', () => {
    const text = 'Zoë 李 🙂 café';
    expect(scan(renderQrSvg(text, 320))?.bytes).toEqual([...Buffer.from(text, 'utf8')]);
  });

  it('writes the format bits of level M with the fixed mask 0 (101010000010010) in both copies', () => {
    const { size: n, at } = modulesOf(renderQrSvg(`https://id.example/mobile-app/${'A'.repeat(43)}`, 320));
    let first = 0;
    let second = 0;
    for (let i = 0; i < 15; i++) {
      first |= (i < 6 ? at(i, 8) : i < 8 ? at(i + 1, 8) : i === 8 ? at(8, 7) : at(8, 14 - i)) << i;
      second |= (i < 8 ? at(8, n - 1 - i) : at(n - 15 + i, 8)) << i;
    }
    expect(QR_MASK).toBe(0);
    expect([first, second]).toEqual([0b101010000010010, 0b101010000010010]);
  });
});

describe("the provider's QR code at its longest", () => {
  const closers: (() => unknown)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it('refuses a baseUrl whose host name is longer than a DNS name can be', () => {
    expect(() => createProvider({ ...providerOptions(), baseUrl: `https://${LONGEST_HOST}x` })).toThrow(
      /baseUrl host name is 254 characters long; a DNS name has at most 253/,
    );
  });

  it('with the longest host name, port and basePath, the QR image still decodes to the phone link', async () => {
    const provider = createProvider({
      ...providerOptions(),
      baseUrl: `https://${LONGEST_HOST}:65535`,
      basePath: LONGEST_BASE_PATH,
    });
    const server = createServer(provider.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(
      () => new Promise((resolve) => server.close(resolve)),
      () => provider.close(),
    );
    const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}${LONGEST_BASE_PATH}`;
    const html = await (await fetch(`${local}/v2/oauth/authorize?${authorizeQuery(pkce().challenge)}`)).text();
    const payload = /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '';
    const src = /<img class="qr" id="qr" src="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(payload).toHaveLength(LONGEST_PAYLOAD);
    const image = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}${src}`);
    expect(image.status).toBe(200);
    const read = scan(await image.text());
    expect(read?.text).toBe(payload);
    expect(read?.version).toBe(23);
  });
});
