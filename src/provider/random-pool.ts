/**
 * Random bytes for the per-login values (ids, codes, nonces, keys, IVs), drawn from the
 * operating system's generator in blocks of {@link RANDOM_POOL_SIZE} bytes: a `randomBytes`
 * call costs about the same whatever its size up to a few KiB (docs/internals.md), so a login's
 * dozen draws are served from one call. Each byte is handed out once; a new
 * block is a new buffer, so the bytes already handed out (views into the old block) never change.
 * The first block is drawn at the first request, not when this module loads: a worker runtime
 * (workerd) refuses random bytes outside a request, so importing the provider there must not
 * draw any.
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

/**
 * Text of base64url characters only (A-Z a-z 0-9 - _), such as an id drawn here: safe as it is in
 * a URL path, an HTML attribute and a JSON string, so a page puts it in without escaping.
 */
export type Base64url = string & { readonly base64url: true };

/** `bytes` as base64url text. */
export function base64url(bytes: Buffer): Base64url {
  return encodeBase64url(bytes) as Base64url;
}

/** `bytes` fresh random bytes as base64url: an authorization code, an access token, an id. */
export function pooledRandomToken(bytes: number): string {
  return pooledRandomBytes(bytes).toString('base64url');
}
