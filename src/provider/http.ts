/**
 * Request and response helpers shared by the endpoints: reading single-valued parameters,
 * running body parsers with limits, and RFC 6749 JSON errors.
 */
import type { Request, RequestHandler, Response } from 'express';

/** Largest accepted request body, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024;
/** Most parameters accepted in a form body. */
export const MAX_FORM_PARAMETERS = 32;

/** The query string of a request, parsed without any framework conversion (duplicates kept). */
export function queryOf(req: Request): URLSearchParams {
  const url = req.originalUrl;
  const q = url.indexOf('?');
  return new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
}

/** A parameter read once: its value, or why it cannot be used. */
export type ParamResult = { ok: true; value: string | undefined } | { ok: false; reason: string };

/** Read `name` from query parameters: at most once, and at most `maxLength` characters. */
export function singleParam(params: URLSearchParams, name: string, maxLength: number): ParamResult {
  const all = params.getAll(name);
  if (all.length > 1) return { ok: false, reason: `The ${name} parameter was sent more than once.` };
  const value = all[0];
  if (value !== undefined && value.length > maxLength) {
    return { ok: false, reason: `The ${name} parameter is longer than ${maxLength} characters.` };
  }
  return { ok: true, value: value === '' ? undefined : value };
}

/** Run a connect-style middleware (such as a body parser) and resolve when it calls next. */
export function runMiddleware(mw: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    mw(req, res, (err?: unknown) => (err ? reject(err) : resolve()));
  });
}

/** Send an RFC 6749 section 5.2 error body. */
export function sendOAuthError(
  res: Response,
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): void {
  res.status(status).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers });
  res.json({ error, error_description: description });
}

/** The HTTP status carried by a body-parser error, if any. */
export function errorStatus(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null) {
    const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number') return status;
  }
  return undefined;
}
