/** Small helpers shared by the relying-party code and the provider. */

/** True for a plain object: not null, not an array. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `data` (text as UTF-8, or bytes) as base64url without padding. */
export function base64url(data: string | Uint8Array): string {
  return (
    typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  ).toString('base64url');
}

const utf8 = new TextDecoder();

/**
 * The JSON object in segment `index` of a compact JWS or JWE (0: the protected header; 1 of a
 * JWS: its claims), read as jose's decoders read it.
 * @throws when the segment is missing, not base64url, or not a JSON object.
 */
export function decodeJsonSegment(token: string, index: number): Record<string, unknown> {
  const segment = token.split('.')[index];
  if (segment === undefined || !/^[A-Za-z0-9_-]+$/.test(segment)) throw new TypeError('not a base64url segment');
  const value: unknown = JSON.parse(utf8.decode(Buffer.from(segment, 'base64url')));
  if (!isRecord(value)) throw new TypeError('not a JSON object');
  return value;
}
