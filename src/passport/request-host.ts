/**
 * The host a request was sent to, port included, as Express 5's `req.host`: Express 4's drops the
 * port, so a same-origin `Origin` would not match. `X-Forwarded-Host` counts only under `trust proxy`.
 */
import type { Request } from 'express';

type TrustProxy = (address: string | undefined, hop: number) => boolean;

/** The request's `host[:port]`, or `undefined` when it has none. */
export function requestHost(req: Request): string | undefined {
  const trust: unknown = req.app?.get('trust proxy fn');
  if (typeof trust !== 'function') return req.host; // not mounted in an Express app
  let host = req.get('x-forwarded-host');
  if (!host || !(trust as TrustProxy)(req.socket?.remoteAddress, 0)) host = req.get('host');
  else if (host.includes(',')) host = host.slice(0, host.indexOf(',')).trimEnd();
  return host || undefined;
}
