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
