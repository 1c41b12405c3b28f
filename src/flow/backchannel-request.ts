/**
 * What every adapter's back-channel logout route needs besides the receiver: the bounded read of
 * the form. Kept apart from the receiver, so a bundle without the route
 * carries no logout-token code.
 */
/** Largest request body read: a logout token is at most 16 KiB, the form a little more. */
export const MAX_BACKCHANNEL_LOGOUT_BODY_BYTES = 32 * 1024;

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
