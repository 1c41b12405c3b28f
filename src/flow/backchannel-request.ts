/**
 * What every adapter's back-channel logout route needs besides the receiver: the option check and
 * the bounded read of the form. Kept apart from the receiver, so a bundle without the route
 * carries no logout-token code.
 */
import type { BackchannelLogout } from './backchannel-logout.js';

/** Largest request body read: a logout token is at most 16 KiB, the form a little more. */
export const MAX_BACKCHANNEL_LOGOUT_BODY_BYTES = 32 * 1024;

/** `value` when it is a receiver made by `createBackchannelLogout`, else a TypeError naming `who` and `option`. */
export function checkBackchannelLogout(value: unknown, who: string, option: string): BackchannelLogout {
  if (typeof value !== 'object' || value === null || typeof (value as Partial<BackchannelLogout>).handle !== 'function')
    throw new TypeError(`${who}: ${option} must be createBackchannelLogout({ client, sessions }).`);
  return value as BackchannelLogout;
}

/**
 * The request body as text, at most {@link MAX_BACKCHANNEL_LOGOUT_BODY_BYTES} bytes (a larger one
 * reads as empty, so it carries no token): for adapters whose framework did not parse it.
 */
export async function readBackchannelBody(stream: AsyncIterable<Uint8Array | string>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk);
    size += bytes.length;
    if (size > MAX_BACKCHANNEL_LOGOUT_BODY_BYTES) return '';
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}
