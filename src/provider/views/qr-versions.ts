/**
 * The per-version numbers of a QR code at error correction level M (ISO/IEC 18004, tables 1, 9
 * and annex E): how the codewords split into Reed-Solomon blocks, how many bytes fit in byte
 * mode, and where the alignment patterns sit.
 */

/** The largest QR version (177 × 177 modules). */
export const QR_MAX_VERSION = 40;

/**
 * Level M block structure of versions 1 to 40, as [error correction codewords per block,
 * blocks in group 1, data codewords per group-1 block, blocks in group 2]. Group-2 blocks hold
 * one data codeword more than group-1 blocks.
 */
const BLOCKS_M: readonly (readonly [number, number, number, number])[] = [
  [10, 1, 16, 0], [16, 1, 28, 0], [26, 1, 44, 0], [18, 2, 32, 0], [24, 2, 43, 0],
  [16, 4, 27, 0], [18, 4, 31, 0], [22, 2, 38, 2], [22, 3, 36, 2], [26, 4, 43, 1],
  [30, 1, 50, 4], [22, 6, 36, 2], [22, 8, 37, 1], [24, 4, 40, 5], [24, 5, 41, 5],
  [28, 7, 45, 3], [28, 10, 46, 1], [26, 9, 43, 4], [26, 3, 44, 11], [26, 3, 41, 13],
  [26, 17, 42, 0], [28, 17, 46, 0], [28, 4, 47, 14], [28, 6, 45, 14], [28, 8, 47, 13],
  [28, 19, 46, 4], [28, 22, 45, 3], [28, 3, 45, 23], [28, 21, 45, 7], [28, 19, 47, 10],
  [28, 2, 46, 29], [28, 10, 46, 23], [28, 14, 46, 21], [28, 14, 46, 23], [28, 12, 47, 26],
  [28, 6, 47, 34], [28, 29, 46, 14], [28, 13, 46, 32], [28, 40, 47, 7], [28, 18, 47, 31],
];

/** How one version's codewords are laid out. */
export interface QrVersionLayout {
  version: number;
  /** Modules per side: 4 × version + 17. */
  size: number;
  /** Error correction codewords of each block. */
  ecPerBlock: number;
  /** Data codewords of each block, in order (group 1 first). */
  blockData: readonly number[];
  /** Data codewords in all. */
  dataCodewords: number;
  /** Data + error correction codewords in all. */
  totalCodewords: number;
  /** Bits of the byte-mode character count: 8 up to version 9, 16 from version 10. */
  countBits: number;
  /** The most bytes byte mode holds: 4 mode bits and the count, then 8 bits a byte. */
  byteCapacity: number;
}

/** The layout of `version` (1 to 40) at level M. */
export function qrVersionLayout(version: number): QrVersionLayout {
  const row = BLOCKS_M[version - 1];
  if (!Number.isInteger(version) || !row) throw new RangeError(`QR version must be an integer from 1 to 40, got ${version}`);
  const [ecPerBlock, group1, data1, group2] = row;
  const blockData: number[] = [];
  for (let i = 0; i < group1; i++) blockData.push(data1);
  for (let i = 0; i < group2; i++) blockData.push(data1 + 1);
  const dataCodewords = group1 * data1 + group2 * (data1 + 1);
  const countBits = version < 10 ? 8 : 16;
  return {
    version,
    size: 4 * version + 17,
    ecPerBlock,
    blockData,
    dataCodewords,
    totalCodewords: dataCodewords + (group1 + group2) * ecPerBlock,
    countBits,
    byteCapacity: Math.floor((dataCodewords * 8 - 4 - countBits) / 8),
  };
}

/**
 * Row/column centres of the alignment patterns of `version` (none for version 1): 6, then evenly
 * spaced (an even step) up to size - 7, counted back from the far end. Version 32 is the one
 * exception to the step rule in the standard's table.
 */
export function alignmentCentres(version: number): number[] {
  if (version === 1) return [];
  const count = Math.floor(version / 7) + 2;
  const last = 4 * version + 10;
  const step = version === 32 ? 26 : Math.ceil((last - 6) / (count - 1) / 2) * 2;
  const centres = [6];
  for (let i = count - 2; i >= 0; i--) centres.push(last - i * step);
  return centres;
}
