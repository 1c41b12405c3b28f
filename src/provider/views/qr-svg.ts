/**
 * The QR code as SVG. The encoder ({@link encodeQr}) gives the module matrix; this file draws it
 * as one `<path>` of horizontal runs, with a white quiet zone of four modules. Drawing vector
 * shapes costs a fraction of rasterizing and compressing a PNG, and the image is served on its
 * own route so the authorize page itself does no encoding at all.
 */
import { encodeQr } from './qr-encoder.js';

/** Width of the white border around the code, in modules (the QR standard's quiet zone). */
export const QR_QUIET_ZONE = 4;

/**
 * A standalone SVG document of the QR code of `text`, scaled to `size` CSS pixels. Throws a
 * RangeError when `text` does not fit in a QR code (see {@link encodeQr}).
 */
export function renderQrSvg(text: string, size: number): string {
  const { size: n, modules } = encodeQr(text);
  const total = n + 2 * QR_QUIET_ZONE;
  let d = '';
  for (let r = 0; r < n; r++) {
    const row = r * n;
    let c = 0;
    while (c < n) {
      if (modules[row + c] === 0) {
        c++;
        continue;
      }
      const start = c;
      while (c < n && modules[row + c] === 1) c++;
      d += `M${start + QR_QUIET_ZONE} ${r + QR_QUIET_ZONE}h${c - start}v1h-${c - start}z`;
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${total} ${total}" width="${size}" height="${size}" ` +
    `shape-rendering="crispEdges"><rect width="${total}" height="${total}" fill="#fff"/>` +
    `<path fill="#000" d="${d}"/></svg>`
  );
}
