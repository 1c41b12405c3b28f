/**
 * The one base64url decoder of every JOSE part read: JWS signatures, JWE segments, header
 * members (`iv`, `tag`, `epk`, `apu`, `apv`) and symmetric JWK values.
 */
import { JweRefused } from './refused.js';

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** UTF-8 that refuses invalid bytes: the one text decoder of JOSE headers and payloads. */
export const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Strict base64url: only the URL-safe alphabet, no padding, no length that cannot occur, and the
 * canonical text of its bytes (no stray low bits in the last character).
 * @throws JweRefused `malformed` otherwise.
 */
export function strictBase64url(text: string): Buffer {
  if (!BASE64URL.test(text) || text.length % 4 === 1) throw new JweRefused('malformed');
  const bytes = Buffer.from(text, 'base64url');
  if (bytes.toString('base64url') !== text) throw new JweRefused('malformed');
  return bytes;
}
