/**
 * Reed-Solomon error correction codewords over GF(256), as QR codes use them (ISO/IEC 18004,
 * 7.5.2): the field is built on the primitive polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11d) with
 * generator element α = 2, and the generator polynomial of `n` codewords is (x - α^0)…(x - α^(n-1)).
 * The codewords are the remainder of the data polynomial times x^n divided by that generator.
 */

/** α^i for i in 0..509 (doubled, so a sum of two logarithms needs no reduction modulo 255). */
const EXP = new Uint8Array(510);
/** log_α(v) for v in 1..255 (LOG[0] is unused: zero has no logarithm). */
const LOG = new Uint8Array(256);
{
  let v = 1;
  for (let i = 0; i < 255; i++) {
    EXP[i] = v;
    EXP[i + 255] = v;
    LOG[v] = i;
    v <<= 1;
    if (v & 0x100) v ^= 0x11d;
  }
}

/** The product of two field elements. */
export function gfMultiply(a: number, b: number): number {
  return a === 0 || b === 0 ? 0 : EXP[LOG[a]! + LOG[b]!]!;
}

/** Generator polynomials by degree, highest coefficient (always 1) dropped: index 0 is x^(n-1). */
const generators = new Map<number, Uint8Array>();

/** The generator polynomial of `degree` error correction codewords (computed once per degree). */
function generator(degree: number): Uint8Array {
  let g = generators.get(degree);
  if (g) return g;
  // Coefficients of the monic product, from x^degree down to x^0; starts as the polynomial 1.
  let poly = new Uint8Array([1]);
  for (let i = 0; i < degree; i++) {
    // Multiply by (x + α^i): subtraction is addition (XOR) in GF(2^8).
    const next = new Uint8Array(poly.length + 1);
    for (let j = 0; j < poly.length; j++) {
      next[j]! ^= poly[j]!;
      next[j + 1]! ^= gfMultiply(poly[j]!, EXP[i]!);
    }
    poly = next;
  }
  g = poly.subarray(1);
  generators.set(degree, g);
  return g;
}

/** The `degree` error correction codewords of the data codewords `data`. */
export function reedSolomon(data: Uint8Array, degree: number): Uint8Array {
  if (!Number.isInteger(degree) || degree < 1 || degree > 68) {
    throw new RangeError(`Reed-Solomon degree must be an integer from 1 to 68, got ${degree}`);
  }
  const g = generator(degree);
  // Polynomial long division, keeping only the running remainder.
  const rem = new Uint8Array(degree);
  for (let i = 0; i < data.length; i++) {
    const factor = data[i]! ^ rem[0]!;
    rem.copyWithin(0, 1);
    rem[degree - 1] = 0;
    if (factor === 0) continue;
    const logFactor = LOG[factor]!;
    for (let j = 0; j < degree; j++) {
      const c = g[j]!;
      if (c !== 0) rem[j]! ^= EXP[LOG[c]! + logFactor]!;
    }
  }
  return rem;
}
