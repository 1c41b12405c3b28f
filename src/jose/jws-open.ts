/** A compact JWS read whole: shape, header and signature, for callers that want its payload. */
import type { KeyObject } from 'node:crypto';
import { strictBase64url, utf8 } from './base64url.js';
import { type JwsAlgorithm, verifyCompactJws } from './jws-verify.js';
import { JweRefused } from './refused.js';

/** Three base64url segments, the first two non-empty: the only JWS shape read. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/;

/**
 * A compact JWS verified with `key` under `alg`, and read: its header must be a JSON object
 * naming `alg`, with no `crit` (no extension is understood), every segment canonical base64url.
 * @returns the protected header and the payload bytes.
 * @throws JweRefused `malformed` (not such a JWS), `crit`, or `failed` (another alg, or the signature does not verify).
 */
export function openCompactJws(
  token: string,
  key: KeyObject,
  alg: JwsAlgorithm,
): { header: Record<string, unknown>; payload: Buffer } {
  if (!COMPACT_JWS.test(token)) throw new JweRefused('malformed');
  const [headerSegment, payloadSegment] = token.split('.') as [string, string, string];
  let header: unknown;
  try {
    header = JSON.parse(utf8.decode(strictBase64url(headerSegment)));
  } catch {
    throw new JweRefused('malformed');
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new JweRefused('malformed');
  const fields = header as Record<string, unknown>;
  if (fields.crit !== undefined) throw new JweRefused('crit');
  if (fields.alg !== alg) throw new JweRefused('failed');
  const payload = strictBase64url(payloadSegment);
  if (!verifyCompactJws(token, key, alg)) throw new JweRefused('failed');
  return { header: fields, payload };
}
