/**
 * Random bytes for per-login values, drawn in blocks of {@link RANDOM_POOL_SIZE}: a `randomBytes`
 * call costs about the same for a few bytes as for a block (docs/internals.md). Each byte is
 * handed out once, and a new block is a new buffer, so handed-out views never change. Nothing is
 * drawn at import: workerd refuses random bytes outside a request.
 */
import { randomBytes } from 'node:crypto';
import { base64url as encodeBase64url } from '../encoding.js';

/** Bytes drawn from the operating system at a time. */
export const RANDOM_POOL_SIZE = 4096;

/** Empty until the first request; `used` starts at the size so that the first request draws a block. */
let block: Buffer = Buffer.alloc(0);
let used = RANDOM_POOL_SIZE;

/** `size` fresh random bytes (a view, not to be written to); larger requests are drawn on their own. */
export function pooledRandomBytes(size: number): Buffer {
  if (size > RANDOM_POOL_SIZE / 4) return randomBytes(size);
  if (used + size > RANDOM_POOL_SIZE) {
    block = randomBytes(RANDOM_POOL_SIZE);
    used = 0;
  }
  const out = block.subarray(used, used + size);
  used += size;
  return out;
}

/** Base64url characters only: safe as is in a URL path, an HTML attribute and a JSON string. */
export type Base64url = string & { readonly base64url: true };

/** `bytes` as base64url text. */
export function base64url(bytes: Buffer): Base64url {
  return encodeBase64url(bytes) as Base64url;
}

/** `bytes` fresh random bytes as base64url: an authorization code, an access token, an id. */
export function pooledRandomToken(bytes: number): string {
  return pooledRandomBytes(bytes).toString('base64url');
}
