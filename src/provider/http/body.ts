/**
 * The provider's one body reader: at most {@link MAX_BODY_BYTES} and {@link MAX_FORM_PARAMETERS}
 * (413 beyond), UTF-8, never compressed. Behind an app's body parser the stream is spent, so a
 * non-empty public `req.body` is taken as the body (a string or Buffer parsed by media type, a
 * form's parameter count still checked); otherwise the stream is read unless it already ended
 * (`readable` false: the body is empty). No private field of Node, Express or a parser is read.
 */
import type { IncomingMessage } from 'node:http';
import { mediaTypeOf } from './media-type.js';

/** Largest accepted request body, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024;
/** Most parameters accepted in a form body. */
export const MAX_FORM_PARAMETERS = 32;

/** A form body: name → value, a repeated name becoming an array of its values. */
export type FormFields = Record<string, string | string[]>;

/** The body of a request, as endpoints see it. */
export type RequestBody =
  | { readonly kind: 'none' }
  | { readonly kind: 'form'; readonly fields: FormFields }
  | { readonly kind: 'json'; readonly value: unknown }
  /** Another media type: not read. */
  | { readonly kind: 'other'; readonly mediaType: string }
  /** Unreadable: too large (413) or malformed, compressed, not UTF-8 (400), with a sentence. */
  | { readonly kind: 'error'; readonly status: 400 | 413; readonly message: string };

/** No body. */
export const NO_BODY: RequestBody = Object.freeze({ kind: 'none' });

class BodyError extends Error {
  constructor(
    readonly status: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** Parses a form body, at most `maxParameters` (a {@link BodyError} 413 beyond). */
function parseForm(text: string, maxParameters: number): FormFields {
  const out = Object.create(null) as FormFields;
  let count = 0;
  for (const [name, value] of new URLSearchParams(text)) {
    count += 1;
    if (count > maxParameters) throw new BodyError(413, `The body has more than ${maxParameters} parameters.`);
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/** A form object another parser made, checked and copied into the same shape as ours. */
function formFromParsed(parsed: Record<string, unknown>, maxParameters: number): FormFields {
  const out = Object.create(null) as FormFields;
  let count = 0;
  for (const [name, value] of Object.entries(parsed)) {
    const values = Array.isArray(value) ? value : [value];
    count += values.length;
    if (count > maxParameters) throw new BodyError(413, `The body has more than ${maxParameters} parameters.`);
    if (!values.every((v): v is string => typeof v === 'string'))
      throw new BodyError(400, 'The form could not be read.');
    out[name] = Array.isArray(value) ? values : (value as string);
  }
  return out;
}

function parseText(type: string, text: string, maxParameters: number): RequestBody {
  if (type === 'application/json') {
    if (text.trim() === '') return NO_BODY;
    try {
      return { kind: 'json', value: JSON.parse(text) as unknown };
    } catch {
      throw new BodyError(400, 'The body is not valid JSON.');
    }
  }
  if (text === '') return NO_BODY;
  return { kind: 'form', fields: parseForm(text, maxParameters) };
}

/** What an app's parser left on `req.body`, when rule 1 of this file takes it. */
function alreadyParsed(req: IncomingMessage): unknown {
  const body = (req as IncomingMessage & { body?: unknown }).body;
  if (typeof body === 'string') return body === '' ? undefined : body;
  if (Buffer.isBuffer(body)) return body.length === 0 ? undefined : body;
  if (typeof body === 'object' && body !== null && Object.keys(body).length > 0) return body;
  return undefined;
}

function readStream(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return Promise.reject(new BodyError(413, `The body is larger than ${limit} bytes.`));
  if (!req.readable) return Promise.resolve('');
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

/** Limits of one route's body. */
export interface BodyLimits {
  /** Most bytes. Default {@link MAX_BODY_BYTES}. */
  maxBytes?: number;
  /** Most form parameters. Default {@link MAX_FORM_PARAMETERS}. */
  maxParameters?: number;
}

/** Reads a form or JSON body (other media types are left unread as `other`); never throws. */
export async function readBody(req: IncomingMessage, limits: BodyLimits = {}): Promise<RequestBody> {
  const limit = limits.maxBytes ?? MAX_BODY_BYTES;
  const maxParameters = limits.maxParameters ?? MAX_FORM_PARAMETERS;
  const type = mediaTypeOf(req.headers);
  try {
    const parsed = alreadyParsed(req);
    if (type !== 'application/json' && type !== 'application/x-www-form-urlencoded') {
      return type === '' && parsed === undefined ? NO_BODY : { kind: 'other', mediaType: type };
    }
    if (parsed !== undefined) {
      if (typeof parsed === 'string' || Buffer.isBuffer(parsed))
        return parseText(type, parsed.toString('utf8'), maxParameters);
      if (type === 'application/json') return { kind: 'json', value: parsed };
      return { kind: 'form', fields: formFromParsed(parsed as Record<string, unknown>, maxParameters) };
    }
    const encoding = req.headers['content-encoding'];
    if (encoding !== undefined && encoding.toLowerCase() !== 'identity') {
      throw new BodyError(400, 'A compressed body is not accepted: send it without Content-Encoding.');
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]{1,40})/i
      .exec((req.headers['content-type'] ?? '').slice(0, 256))?.[1]
      ?.toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
      throw new BodyError(400, 'The body must be UTF-8.');
    return parseText(type, await readStream(req, limit), maxParameters);
  } catch (err) {
    if (err instanceof BodyError) return { kind: 'error', status: err.status, message: err.message };
    return { kind: 'error', status: 400, message: 'The body could not be read.' };
  }
}

/** A string field of a form or JSON body; undefined when absent or not one string. */
export function bodyField(body: RequestBody, name: string): string | undefined {
  const source = body.kind === 'form' ? body.fields : body.kind === 'json' ? body.value : undefined;
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return undefined;
  const value = (source as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}
