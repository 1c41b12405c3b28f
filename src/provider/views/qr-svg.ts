/**
 * The QR code as SVG: `uqr` encodes (byte mode, level M), this file draws the modules as one
 * `<path>` of horizontal runs with a white quiet zone of four modules. Vector shapes cost a
 * fraction of rasterizing and compressing a PNG, and the image has its own route so the
 * authorize page itself does no encoding.
 */
import { encode } from 'uqr';

/** Width of the white border around the code, in modules (the QR standard's quiet zone). */
export const QR_QUIET_ZONE = 4;

/**
 * The mask pattern every code uses: 0, dark where (row + column) is even. Scoring all eight
 * masks costs more than the rest of the encoding, and these payloads (URLs ending in a random
 * id) do not form the blocks and finder-like runs the scoring guards against.
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
