/**
 * ECDSA signatures in their two forms: DER, which OpenSSL makes and takes, and the JWS form,
 * r || s with each integer at the curve's size (RFC 7518 3.4). Signing and verifying with the
 * key object alone and converting here costs about half what asking node:crypto for
 * `dsaEncoding: 'ieee-p1363'` costs on Node 24 (figures in docs/internals.md).
 */

/**
 * The JWS form of a DER `ECDSA-Sig-Value` (SEQUENCE of INTEGER r, INTEGER s) for a curve of
 * `size`-byte integers. Only DER itself is read: lengths in their shortest form, each integer
 * positive and minimal (a zero byte before it only when its high bit is set), nothing after.
 */
export function derToJose(der: Uint8Array, size: number): Buffer {
  let at = 0;
  if (der[at++] !== 0x30) malformed();
  let length = der[at++] ?? malformed();
  // A signature on P-521 is longer than 127 bytes: one length byte after 0x81, and only then.
  if (length === 0x81) {
    length = der[at++] ?? malformed();
    if (length < 0x80) malformed();
  } else if (length > 0x80) malformed();
  if (at + length !== der.length) malformed();
  const out = Buffer.alloc(2 * size);
  for (let i = 0; i < 2; i++) {
    if (der[at++] !== 0x02) malformed();
    let bytes = der[at++] ?? malformed();
    if (bytes === 0 || bytes > 0x7f || at + bytes > der.length) malformed();
    const first = der[at] as number;
    // Negative (high bit set), or a zero byte that is not needed: not DER.
    if ((first & 0x80) !== 0) malformed();
    if (first === 0 && (bytes === 1 || ((der[at + 1] as number) & 0x80) === 0)) malformed();
    // DER adds a zero byte before an integer whose high bit is set.
    if (first === 0) {
      at += 1;
      bytes -= 1;
    }
    if (bytes > size) malformed();
    out.set(der.subarray(at, at + bytes), i * size + size - bytes);
    at += bytes;
  }
  if (at !== der.length) malformed();
  return out;
}

function malformed(): never {
  throw new Error('not a DER ECDSA signature of this curve');
}

/** The DER form of a JWS ECDSA signature of exactly `2 * size` bytes (the caller checks the length). */
export function joseToDer(signature: Uint8Array, size: number): Buffer {
  const r = derInteger(signature.subarray(0, size));
  const s = derInteger(signature.subarray(size, 2 * size));
  const body = r.length + s.length;
  return Buffer.concat([Buffer.from(body < 0x80 ? [0x30, body] : [0x30, 0x81, body]), r, s]);
}

/** A DER INTEGER of the unsigned big-endian `value`: leading zeros dropped, one added before a high bit. */
function derInteger(value: Uint8Array): Buffer {
  let start = 0;
  while (start < value.length - 1 && value[start] === 0) start += 1;
  const digits = value.subarray(start);
  const pad = (digits[0]! & 0x80) !== 0 ? 1 : 0;
  const out = Buffer.alloc(2 + pad + digits.length);
  out[0] = 0x02;
  out[1] = pad + digits.length;
  out.set(digits, 2 + pad);
  return out;
}
