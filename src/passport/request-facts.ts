/** What an Express request tells the flow for its diagnoses: names and flags only, no cookie value leaves this file. */
import type { Request } from 'express';
import type { RequestFacts } from '../flow/diagnose.js';

/** express-session's default cookie name. */
export const DEFAULT_SESSION_COOKIE_NAME = 'connect.sid';

/** The raw value of cookie `name` in a Cookie header, or undefined. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The session id a signed express-session cookie (`s:<id>.<signature>`) names, or undefined. */
function signedSessionId(raw: string): string | undefined {
  let value: string;
  try {
    value = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  if (!value.startsWith('s:')) return undefined;
  const dot = value.lastIndexOf('.');
  return dot > 2 ? value.slice(2, dot) : undefined;
}

/** The Host header of `req` (as sent, with its port), or `''`. */
export function hostOf(req: Request): string {
  const host = req.headers?.host;
  return typeof host === 'string' ? host : '';
}

/** Facts about `req` for the flow; `cookieName` is the session middleware's cookie name. */
export function requestFacts(req: Request, cookieName: string = DEFAULT_SESSION_COOKIE_NAME): RequestFacts {
  const headers = req.headers ?? {};
  const header = headers.cookie;
  const raw = cookieValue(header, cookieName);
  const session = (req as { session?: { cookie?: { sameSite?: unknown; secure?: unknown } } }).session;
  const sessionId = (req as { sessionID?: unknown }).sessionID;
  const sentId = raw === undefined ? undefined : signedSessionId(raw);
  const forwarded = headers['x-forwarded-proto'];
  const sameSite = session?.cookie?.sameSite;
  const secure = session?.cookie?.secure;
  return {
    host: hostOf(req),
    secure: req.secure === true,
    ...(typeof forwarded === 'string' ? { forwardedProto: forwarded } : {}),
    cookieHeaderPresent: header !== undefined && header !== '',
    sessionCookiePresent: raw !== undefined,
    ...(sentId !== undefined && typeof sessionId === 'string' ? { sessionNotInStore: sentId !== sessionId } : {}),
    cookie: {
      ...(sameSite === true || sameSite === false || sameSite === 'lax' || sameSite === 'strict' || sameSite === 'none'
        ? { sameSite }
        : {}),
      ...(secure === true || secure === false || secure === 'auto' ? { secure } : {}),
    },
  };
}
