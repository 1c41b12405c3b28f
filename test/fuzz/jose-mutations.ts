/**
 * Mutations of compact JWS and JWE strings for the fuzz suites, described as plain data so
 * fast-check can generate, print and shrink them. Every mutation here yields a token that must
 * be refused: bits are flipped in the decoded bytes of a segment (so the bytes really change,
 * unlike a flip of a base64url padding bit), segments are reordered, dropped, added or cut,
 * and protected headers are altered without re-signing or re-encrypting.
 *
 * Not here: appending base64 padding (`=`) to the last segment. jose decodes it to the same
 * bytes, so such a token is the same signed or encrypted content, not a forgery.
 */
import fc from 'fast-check';

/** base64url of bytes or text. */
export function b64u(input: Uint8Array | string): string {
  return Buffer.from(input).toString('base64url');
}

/** JSON of a base64url segment, or undefined when it is not JSON. */
export function decodeJsonSegment(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A change of a compact token that keeps its signature or ciphertext as it was. */
export type CompactMutation =
  | { kind: 'flip'; segment: number; bit: number }
  | { kind: 'reorder'; order: number[] }
  | { kind: 'truncate'; keep: number }
  | { kind: 'drop'; segment: number }
  | { kind: 'append'; extra: string }
  | { kind: 'header'; changes: Record<string, unknown> }
  | { kind: 'garbage-segment'; segment: number; text: string };

/** Header fields an attacker would play with, and values of every JSON type for them. */
const headerValue = fc.oneof(
  fc.constantFrom(
    'none',
    'None',
    'HS256',
    'RS512',
    'PS256',
    'ES256',
    'EdDSA',
    'RSA1_5',
    'RSA-OAEP-384',
    'PBES2-HS256+A128KW',
    'ECDH-ES',
    'dir',
    'A128KW',
    'DEF',
    'JWT',
    'at+jwt',
    'http://127.0.0.1:1/jwks.json',
    '',
  ),
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ maxLength: 20 }),
);

const headerChanges = fc.dictionary(
  fc.constantFrom(
    'alg',
    'enc',
    'kid',
    'typ',
    'cty',
    'crit',
    'jku',
    'x5u',
    'x5c',
    'jwk',
    'zip',
    'b64',
    'epk',
    'p2s',
    'p2c',
  ),
  headerValue,
  { minKeys: 1, maxKeys: 3 },
);

/** Mutations for a token of `segments` parts (3 for JWS, 5 for JWE). */
export function compactMutation(segments: number): fc.Arbitrary<CompactMutation> {
  const segment = fc.nat({ max: segments - 1 });
  return fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('flip' as const), segment, bit: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('reorder' as const),
        order: fc.array(fc.nat({ max: segments - 1 }), { minLength: segments, maxLength: segments }),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), keep: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), segment }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('append' as const),
        extra: fc.constantFrom('.', '..', '.AAAA', '.e30.e30'),
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('header' as const), changes: headerChanges }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('garbage-segment' as const),
        segment,
        text: fc.oneof(fc.constantFrom('', '!!!', '%00', 'e30', 'bnVsbA', 'W10', '....'), fc.string({ maxLength: 30 })),
      }),
    },
  );
}

/** Applies `m` to `token`; the result may still equal `token` (callers skip those cases). */
export function applyMutation(token: string, m: CompactMutation): string {
  const parts = token.split('.');
  switch (m.kind) {
    case 'flip': {
      const bytes = Buffer.from(parts[m.segment]!, 'base64url');
      if (bytes.length === 0) {
        parts[m.segment] = 'AA'; // an empty segment (JWE "dir" key) gets a byte instead
      } else {
        const bit = m.bit % (bytes.length * 8);
        bytes[bit >> 3] = bytes[bit >> 3]! ^ (1 << (bit & 7));
        parts[m.segment] = bytes.toString('base64url');
      }
      return parts.join('.');
    }
    case 'reorder':
      return m.order.map((i) => parts[i]!).join('.');
    case 'truncate':
      return token.slice(0, m.keep % token.length);
    case 'drop':
      return parts.filter((_p, i) => i !== m.segment).join('.');
    case 'append':
      return token + m.extra;
    case 'header': {
      const header = decodeJsonSegment(parts[0]!) ?? {};
      parts[0] = b64u(JSON.stringify({ ...header, ...m.changes }));
      return parts.join('.');
    }
    case 'garbage-segment':
      parts[m.segment] = m.text;
      return parts.join('.');
  }
}
