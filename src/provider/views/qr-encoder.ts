/**
 * A QR code encoder (ISO/IEC 18004, model 2): byte mode, error correction level M, the smallest
 * version 1 to 40 the text fits in, and one fixed mask pattern.
 *
 * The standard lets an encoder pick any of the eight masks (the one used is written in the format
 * information, which every reader decodes first); scoring all eight against the penalty rules
 * costs more than the rest of the encoding together, and the payloads here (URLs ending in a
 * random id) do not form the large blocks and finder-like runs those rules guard against. So the
 * mask is chosen once, here.
 *
 * What depends only on the version (the function patterns, the format and version information,
 * the order the data modules are filled in, the mask over them) is built once per version and
 * kept; encoding a text is then the codewords, their Reed-Solomon blocks, and one pass that writes
 * each bit into its module.
 */
import { reedSolomon } from './reed-solomon.js';
import { alignmentCentres, QR_MAX_VERSION, qrVersionLayout, type QrVersionLayout } from './qr-versions.js';

/** The mask pattern every code uses: 0, dark where (row + column) is even. */
export const QR_MASK = 0;

/** The most bytes a code holds (version 40, level M, byte mode). */
export const QR_MAX_BYTES = qrVersionLayout(QR_MAX_VERSION).byteCapacity;

/** A QR code: `size` × `size` modules, row by row, 1 for dark. */
export interface QrCode {
  version: number;
  size: number;
  modules: Uint8Array;
}

/** What one version's codes share. */
interface VersionTemplate {
  layout: QrVersionLayout;
  /** The function patterns drawn, data modules light. */
  base: Uint8Array;
  /** Module index of each data bit, in placement order. */
  order: Int32Array;
  /** The mask's value (0 or 1) at each data bit's module, in placement order. */
  mask: Uint8Array;
}

const templates: (VersionTemplate | undefined)[] = [];

/** The 15 format bits: level M (00) and the mask, BCH(15,5) protected, XOR 101010000010010. */
function formatBits(mask: number): number {
  const data = (0b00 << 3) | mask;
  let rem = data;
  for (let i = 0; i < 10; i++) rem = (rem << 1) ^ ((rem >> 9) * 0x537);
  return ((data << 10) | rem) ^ 0x5412;
}

/** The 18 version bits (versions 7 and up): the version, BCH(18,6) protected. */
function versionBits(version: number): number {
  let rem = version;
  for (let i = 0; i < 12; i++) rem = (rem << 1) ^ ((rem >> 11) * 0x1f25);
  return (version << 12) | rem;
}

/** True where mask pattern {@link QR_MASK} flips a data module. */
function maskAt(row: number, col: number): boolean {
  return (row + col) % 2 === 0;
}

function buildTemplate(version: number): VersionTemplate {
  const layout = qrVersionLayout(version);
  const n = layout.size;
  const base = new Uint8Array(n * n);
  const reserved = new Uint8Array(n * n);
  const set = (row: number, col: number, dark: boolean): void => {
    base[row * n + col] = dark ? 1 : 0;
    reserved[row * n + col] = 1;
  };

  // Finder patterns (7 × 7 rings with a 3 × 3 centre) with their light separators.
  for (const [top, left] of [[0, 0], [0, n - 7], [n - 7, 0]] as const) {
    for (let dr = -1; dr <= 7; dr++) {
      for (let dc = -1; dc <= 7; dc++) {
        const row = top + dr;
        const col = left + dc;
        if (row < 0 || row >= n || col < 0 || col >= n) continue;
        const ring = Math.max(Math.abs(dr - 3), Math.abs(dc - 3));
        set(row, col, ring !== 2 && ring !== 4);
      }
    }
  }
  // Timing patterns: row 6 and column 6, alternating, dark on even positions.
  for (let i = 8; i < n - 8; i++) {
    set(6, i, i % 2 === 0);
    set(i, 6, i % 2 === 0);
  }
  // Alignment patterns (5 × 5 rings) at every pair of centres not on a finder.
  const centres = alignmentCentres(version);
  for (const r of centres) {
    for (const c of centres) {
      if ((r === 6 && c === 6) || (r === 6 && c === n - 7) || (r === n - 7 && c === 6)) continue;
      for (let dr = -2; dr <= 2; dr++) {
        for (let dc = -2; dc <= 2; dc++) set(r + dr, c + dc, Math.max(Math.abs(dr), Math.abs(dc)) !== 1);
      }
    }
  }
  // Format information, twice, bit 0 the least significant; and the module that is always dark.
  const format = formatBits(QR_MASK);
  for (let i = 0; i < 15; i++) {
    const bit = ((format >> i) & 1) === 1;
    // Around the top-left finder: down column 8 (skipping the timing row), then left along row 8.
    if (i < 6) set(i, 8, bit);
    else if (i < 8) set(i + 1, 8, bit);
    else if (i === 8) set(8, 7, bit);
    else set(8, 14 - i, bit);
    // Split between the other two finders: along row 8 from the right, then up column 8.
    if (i < 8) set(8, n - 1 - i, bit);
    else set(n - 15 + i, 8, bit);
  }
  set(n - 8, 8, true);
  // Version information (versions 7 and up), twice: 6 × 3 beside the top-right and bottom-left finders.
  if (version >= 7) {
    const bits = versionBits(version);
    for (let i = 0; i < 18; i++) {
      const bit = ((bits >> i) & 1) === 1;
      const a = Math.floor(i / 3);
      const b = n - 11 + (i % 3);
      set(a, b, bit);
      set(b, a, bit);
    }
  }

  // Data modules: two-column strips from the right edge leftwards, skipping the timing column,
  // going up then down in turn; in each row the right module of the pair first.
  const order: number[] = [];
  for (let right = n - 1, upward = true; right >= 1; right -= 2, upward = !upward) {
    if (right === 6) right = 5;
    for (let step = 0; step < n; step++) {
      const row = upward ? n - 1 - step : step;
      for (const col of [right, right - 1]) {
        if (!reserved[row * n + col]) order.push(row * n + col);
      }
    }
  }
  // The modules left over after the last codeword (0 to 7 remainder bits) stay light before masking.
  if (Math.floor(order.length / 8) !== layout.totalCodewords) {
    throw new Error(`QR version ${version}: ${order.length} data modules do not hold ${layout.totalCodewords} codewords`);
  }
  const mask = new Uint8Array(order.length);
  for (let k = 0; k < order.length; k++) {
    const index = order[k]!;
    mask[k] = maskAt(Math.floor(index / n), index % n) ? 1 : 0;
  }
  return { layout, base, order: Int32Array.from(order), mask };
}

function template(version: number): VersionTemplate {
  let t = templates[version];
  if (!t) {
    t = buildTemplate(version);
    templates[version] = t;
  }
  return t;
}

/** The smallest version whose byte capacity holds `length` bytes. */
function versionFor(length: number): number {
  for (let v = 1; v <= QR_MAX_VERSION; v++) if (qrVersionLayout(v).byteCapacity >= length) return v;
  throw new RangeError(
    `QR payload is ${length} bytes; a QR code holds at most ${QR_MAX_BYTES} (version 40, error correction M): shorten the text`,
  );
}

/** The data codewords: mode 0100 (byte), the count, the bytes, a terminator, then 0xEC 0x11 padding. */
function dataCodewords(bytes: Uint8Array, layout: QrVersionLayout): Uint8Array {
  const out = new Uint8Array(layout.dataCodewords);
  let bitPos = 0;
  const put = (value: number, bits: number): void => {
    for (let i = bits - 1; i >= 0; i--, bitPos++) {
      if ((value >>> i) & 1) out[bitPos >> 3]! |= 0x80 >> (bitPos & 7);
    }
  };
  put(0b0100, 4);
  put(bytes.length, layout.countBits);
  for (const b of bytes) put(b, 8);
  // Terminator (up to four 0 bits) and the rest of the last byte are already 0.
  let next = Math.ceil(Math.min(bitPos + 4, out.length * 8) / 8);
  for (let pad = 0xec; next < out.length; next++, pad ^= 0xec ^ 0x11) out[next] = pad;
  return out;
}

/** The final codeword sequence: the data blocks interleaved, then their error correction interleaved. */
function interleave(data: Uint8Array, layout: QrVersionLayout): Uint8Array {
  const { blockData, ecPerBlock } = layout;
  const blocks: Uint8Array[] = [];
  const ecs: Uint8Array[] = [];
  let offset = 0;
  for (const length of blockData) {
    const block = data.subarray(offset, offset + length);
    blocks.push(block);
    ecs.push(reedSolomon(block, ecPerBlock));
    offset += length;
  }
  const out = new Uint8Array(layout.totalCodewords);
  let k = 0;
  const longest = blockData[blockData.length - 1]!;
  for (let i = 0; i < longest; i++) {
    for (const block of blocks) if (i < block.length) out[k++] = block[i]!;
  }
  for (let i = 0; i < ecPerBlock; i++) {
    for (const ec of ecs) out[k++] = ec[i]!;
  }
  return out;
}

/**
 * The QR code of `text` (UTF-8 in byte mode, level M). Throws a RangeError when it is longer
 * than {@link QR_MAX_BYTES} bytes.
 */
export function encodeQr(text: string): QrCode {
  const bytes = Buffer.from(text, 'utf8');
  const t = template(versionFor(bytes.length));
  const codewords = interleave(dataCodewords(bytes, t.layout), t.layout);
  const modules = t.base.slice();
  const { order, mask } = t;
  const bits = codewords.length * 8;
  for (let k = 0; k < order.length; k++) {
    const bit = k < bits ? (codewords[k >> 3]! >> (7 - (k & 7))) & 1 : 0;
    modules[order[k]!] = bit ^ mask[k]!;
  }
  return { version: t.layout.version, size: t.layout.size, modules };
}
