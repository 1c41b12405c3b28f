/**
 * Request and response helpers shared by the endpoints: reading single-valued parameters,
 * reading bodies with limits, and JSON answers, redirects and RFC 6749 JSON errors written
 * straight to Node's response: the endpoints that every login calls (authorize, token,
 * userinfo) need none of Express's content negotiation, and skipping it is a tenth of a login's
 * CPU in `npm run load:provider`.
 */
import type { Request, RequestHandler, Response } from 'express';

/** Largest accepted request body, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024;
/** Most parameters accepted in a form body. */
export const MAX_FORM_PARAMETERS = 32;

/** The query string of a request, parsed without any framework conversion (duplicates kept). */
export function queryOf(req: Request): URLSearchParams {
  // originalUrl under Express; the plain url when the provider answers before Express (index.ts).
  const url = req.originalUrl ?? req.url;
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

/** Why a body could not be read: `status` 413 (too large) or 400, and a sentence. */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** The media type of a request (`application/json`), lower case, without parameters; '' when none. */
export function mediaType(req: Request): string {
  const header = req.headers['content-type'];
  if (header === undefined) return '';
  const semicolon = header.indexOf(';');
  return (semicolon === -1 ? header : header.slice(0, semicolon)).trim().toLowerCase();
}

/**
 * The body of a request as UTF-8 text, at most `limit` bytes (413 beyond). Refuses a compressed
 * body and a charset other than UTF-8 with 400. A body another middleware already read is not
 * read again: undefined is returned and the caller uses `req.body`.
 */
export function readBodyText(req: Request, limit: number = MAX_BODY_BYTES): Promise<string | undefined> {
  // Read already: by a body parser ahead of the provider (Express 4's marks `_body`; Express 5's
  // leaves the stream ended). Waiting for 'end' again would never answer.
  if ((req as { _body?: unknown })._body === true || req.readableEnded) return Promise.resolve(undefined);
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
    return Promise.reject(new BodyError(400, 'A compressed body is not accepted: send it without Content-Encoding.'));
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return Promise.reject(new BodyError(400, 'The body must be UTF-8.'));
  }
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(new BodyError(413, `The body is larger than ${limit} bytes.`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume(); // drain the rest, so the answer can still be sent on this connection
        reject(new BodyError(413, `The body is larger than ${limit} bytes.`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, size).toString('utf8'));
    };
    const onError = (): void => {
      cleanup();
      reject(new BodyError(400, 'The body could not be read.'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/**
 * Parses a form body (application/x-www-form-urlencoded) into name → value, a repeated name
 * becoming an array of its values (as body parsers do), at most `maxParameters` (413 beyond).
 */
export function parseForm(text: string, maxParameters: number = MAX_FORM_PARAMETERS): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    count += 1;
    if (count > maxParameters) throw new BodyError(413, `The body has more than ${maxParameters} parameters.`);
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/**
 * Sends `body` as JSON. A fault that holds the body back (faults.ts) replaces `res.json` on the
 * response itself; the body then goes to it instead.
 */
export function sendJson(res: Response, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (Object.hasOwn(res, 'json')) {
    res.status(status).set(headers);
    res.json(body);
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** A redirect with no body, and any `headers` (such as Cache-Control). */
export function sendRedirect(res: Response, status: 302 | 303, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, Location: location, 'Content-Length': '0' });
  res.end();
}

/** Send an RFC 6749 section 5.2 error body. */
export function sendOAuthError(
  res: Response,
  status: number,
  error: string,
  description: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { error, error_description: description }, { 'Cache-Control': 'no-store', Pragma: 'no-cache', ...headers });
}

/** The HTTP status carried by a body-parser error, if any. */
export function errorStatus(err: unknown): number | undefined {
  if (typeof err === 'object' && err !== null) {
    const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number') return status;
  }
  return undefined;
}
