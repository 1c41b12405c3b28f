/**
 * The QR code as SVG: `uqr` encodes (byte mode, level M), this file draws one `<path>` of runs with
 * a four-module quiet zone. Vectors cost a fraction of a PNG, and the image has its own route.
 */
import { encode } from 'uqr';

/** Width of the white border around the code, in modules (the QR standard's quiet zone). */
export const QR_QUIET_ZONE = 4;

/**
 * The mask every code uses: scoring all eight costs more than the rest of the encoding, and these
 * payloads (URLs ending in a random id) lack the patterns the scoring guards against.
 */
export const QR_MASK = 0;

/** A standalone SVG document of the QR code of `text`, scaled to `size` CSS pixels. Throws when `text` does not fit in a QR code. */
export function renderQrSvg(text: string, size: number): string {
  const { size: n, data } = encode(text, { ecc: 'M', maskPattern: QR_MASK, border: 0 });
  const total = n + 2 * QR_QUIET_ZONE;
  let d = '';
  for (let r = 0; r < n; r++) {
    const row = data[r]!;
    let c = 0;
    while (c < n) {
      if (!row[c]) {
        c++;
        continue;
      }
      const start = c;
      while (c < n && row[c]) c++;
      d += `M${start + QR_QUIET_ZONE} ${r + QR_QUIET_ZONE}h${c - start}v1h-${c - start}z`;
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${total}" width="${size}" height="${size}" ` +
    `shape-rendering="crispEdges"><rect width="${total}" height="${total}" fill="#fff"/>` +
    `<path fill="#000" d="${d}"/></svg>`
  );
}
