import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import jsQR from 'jsqr';
import { afterAll, describe, expect, it } from 'vitest';
import { createProvider } from '../../src/provider/index.js';
import { encodeQr, QR_MAX_BYTES } from '../../src/provider/views/qr-encoder.js';
import { qrVersionLayout } from '../../src/provider/views/qr-versions.js';
import { renderQrSvg } from '../../src/provider/views/qr-svg.js';
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

describe('the QR encoder', () => {
  it('holds the byte-mode capacities of level M that ISO/IEC 18004 lists', () => {
    expect(LONGEST_HOST).toHaveLength(253);
    expect([1, 2, 9, 10, 23, 27, 40].map((v) => qrVersionLayout(v).byteCapacity)).toEqual([14, 26, 180, 213, 857, 1125, 2331]);
    expect(QR_MAX_BYTES).toBe(2331);
    expect(LONGEST_PAYLOAD).toBe(842);
  });

  it(`round-trips through a scanner every payload length from 1 to ${LONGEST_PAYLOAD} bytes, the provider's longest`, () => {
    const next = prng(0x9e3779b9);
    const failures: number[] = [];
    for (let length = 1; length <= LONGEST_PAYLOAD; length++) {
      const text = randomText(length, next);
      if (scan(renderQrSvg(text, 320))?.text !== text) failures.push(length);
    }
    expect(failures).toEqual([]);
  });

  it('round-trips the last length of every version 1 to 40 and the first of the next, in the smallest version that holds it', () => {
    const next = prng(12345);
    const failures: string[] = [];
    for (let v = 1; v <= 40; v++) {
      const capacity = qrVersionLayout(v).byteCapacity;
      for (const [length, version] of [[capacity, v], [capacity + 1, v + 1]] as const) {
        if (length > QR_MAX_BYTES) continue;
        const text = randomText(length, next);
        const code = encodeQr(text);
        const read = scan(renderQrSvg(text, 320));
        if (code.version !== version || code.size !== 4 * version + 17 || read?.text !== text || read.version !== version) {
          failures.push(`${length} bytes: version ${code.version}, read ${read?.version} ${read?.text === text ? 'same' : 'different'}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('encodes UTF-8 text as its bytes, and every byte value 0 to 255 survives', () => {
    const text = 'Zoë 李 🙂 café';
    expect(scan(renderQrSvg(text, 320))?.bytes).toEqual([...Buffer.from(text, 'utf8')]);
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('latin1');
    const code = encodeQr(all);
    expect(code.version).toBeGreaterThan(1);
  });

  it('writes the format bits of level M, mask 0 (101010000010010) in both copies, and the version bits of ISO/IEC 18004 annex D', () => {
    const { size: n, modules } = encodeQr('x'.repeat(200));
    const at = (row: number, col: number): number => modules[row * n + col]!;
    let first = 0;
    let second = 0;
    for (let i = 0; i < 15; i++) {
      first |= (i < 6 ? at(i, 8) : i < 8 ? at(i + 1, 8) : i === 8 ? at(8, 7) : at(8, 14 - i)) << i;
      second |= (i < 8 ? at(8, n - 1 - i) : at(n - 15 + i, 8)) << i;
    }
    expect([first, second]).toEqual([0b101010000010010, 0b101010000010010]);
    expect(at(n - 8, 8)).toBe(1);
    for (const [version, bits] of [[7, 0x07c94], [23, 0x177ec], [40, 0x28c69]] as const) {
      const capacity = qrVersionLayout(version).byteCapacity;
      const code = encodeQr('y'.repeat(capacity));
      expect(code.version).toBe(version);
      let topRight = 0;
      let bottomLeft = 0;
      for (let i = 0; i < 18; i++) {
        const a = Math.floor(i / 3);
        const b = code.size - 11 + (i % 3);
        topRight |= code.modules[a * code.size + b]! << i;
        bottomLeft |= code.modules[b * code.size + a]! << i;
      }
      expect([topRight, bottomLeft]).toEqual([bits, bits]);
    }
  });

  it('refuses a payload longer than a QR code holds, saying the limit', () => {
    expect(() => encodeQr('x'.repeat(QR_MAX_BYTES + 1))).toThrow(RangeError);
    expect(() => encodeQr('x'.repeat(QR_MAX_BYTES + 1))).toThrow(/2332 bytes; a QR code holds at most 2331/);
    expect(encodeQr('x'.repeat(QR_MAX_BYTES)).version).toBe(40);
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
    const provider = createProvider({ ...providerOptions(), baseUrl: `https://${LONGEST_HOST}:65535`, basePath: LONGEST_BASE_PATH });
    const server = createServer(provider.handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)), () => provider.close());
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
