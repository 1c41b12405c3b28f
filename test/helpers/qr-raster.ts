/** Rasterizing the provider's QR SVG the way a screen would, so tests can decode it with jsQR. */
import { expect } from 'vitest';

/**
 * Rasterize the QR SVG: the white background, then each `M x y h w v1 h-w z` run of the dark
 * path, `scale` pixels per module, as RGBA. Anything else in the path fails the test.
 */
export function rasterize(svg: string, scale: number): { data: Uint8ClampedArray; width: number } {
  const size = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1]);
  expect(size).toBeGreaterThan(21);
  expect(svg).toContain(`<rect width="${size}" height="${size}" fill="#fff"/>`);
  const d = /<path fill="#000" d="([^"]*)"/.exec(svg)?.[1] ?? '';
  const width = size * scale;
  const data = new Uint8ClampedArray(width * width * 4).fill(255);
  const runs = [...d.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)];
  expect(runs.map((m) => m[0]).join('')).toBe(d);
  for (const [, x, y, w] of runs) {
    for (let py = Number(y) * scale; py < (Number(y) + 1) * scale; py++) {
      for (let px = Number(x) * scale; px < (Number(x) + Number(w)) * scale; px++) {
        const i = (py * width + px) * 4;
        data[i] = data[i + 1] = data[i + 2] = 0;
      }
    }
  }
  return { data, width };
}
