/**
 * The QR code as SVG. The encoder (`qrcode-generator`, no dependencies) gives the module matrix;
 * this file draws it as one `<path>` of horizontal runs, with a white quiet zone of four modules.
 * Drawing vector shapes costs a fraction of rasterizing and compressing a PNG, and the image is
 * served on its own route so the authorize page itself does no encoding at all.
 */
import qrcode from 'qrcode-generator';

/** Width of the white border around the code, in modules (the QR standard's quiet zone). */
export const QR_QUIET_ZONE = 4;

/** The dark/light module matrix of `text` (rows of booleans, true for dark), error correction M. */
export function qrMatrix(text: string): boolean[][] {
  const qr = qrcode(0, 'M');
  qr.addData(text, 'Byte');
  qr.make();
  const n = qr.getModuleCount();
  const rows: boolean[][] = [];
  for (let r = 0; r < n; r++) {
    const row: boolean[] = new Array<boolean>(n);
    for (let c = 0; c < n; c++) row[c] = qr.isDark(r, c);
    rows.push(row);
  }
  return rows;
}

/** A standalone SVG document of the QR code of `text`, scaled to `size` CSS pixels. */
export function renderQrSvg(text: string, size: number): string {
  const matrix = qrMatrix(text);
  const n = matrix.length;
  const total = n + 2 * QR_QUIET_ZONE;
  let d = '';
  for (let r = 0; r < n; r++) {
    const row = matrix[r]!;
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
