/**
 * The answer value every endpoint returns (status, headers, one body, or a connection reset). Only
 * `write.ts` writes it, so the fault transformer sees every endpoint's answer alike.
 */

/** What an answer carries. */
export type AnswerBody =
  | { readonly type: 'json'; readonly value: unknown }
  | { readonly type: 'html'; readonly html: string }
  | { readonly type: 'bytes'; readonly contentType: string; readonly bytes: string | Buffer }
  | { readonly type: 'empty' };

/** One answer to one request. */
export interface Answer {
  readonly status: number;
  /** Response headers (the writer adds `Content-Type` and `Content-Length` from the body). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: AnswerBody;
  /** Close the connection abruptly (TCP reset) instead of answering. */
  readonly reset?: true;
  /** Called once the whole answer reached the connection (`finish`), never on reset: e.g. ending the run after `/finish`. */
  readonly afterWrite?: () => void;
  /** FAPI 2.0: the signed ID token inside the encrypted one, so the ID-token faults can change it and seal it again. */
  readonly sealedIdToken?: { readonly jws: string; encrypt(jws: string): Promise<string> };
}

/** Headers that forbid caching of an OAuth answer (RFC 6749 5.1). */
export const NO_STORE: Readonly<Record<string, string>> = Object.freeze({
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
});

/** A JSON answer. */
export function json(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): Answer {
  return { status, headers, body: { type: 'json', value } };
}

/** The characters RFC 6749 section 5.2 allows in `error_description`: `%x20-21 / %x23-5B / %x5D-7E`. */
export const ERROR_DESCRIPTION_CHARS = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * `description` within {@link ERROR_DESCRIPTION_CHARS}: the sentences are written so already, and
 * what a sentence quotes from outside (a redirect URI, a fault's text) is mended here: a double
 * quote becomes a single one, a backslash a slash, an ellipsis three dots, anything else a `?`.
 */
export function errorDescription(description: string): string {
  if (ERROR_DESCRIPTION_CHARS.test(description)) return description;
  return description
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/\u2026/g, '...')
    .replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/** An RFC 6749 section 5.2 error body, not cached; the one place an `error_description` is written. */
export function oauthError(
  status: number,
  error: string,
  description: string,
  headers: Readonly<Record<string, string>> = {},
): Answer {
  return json(status, { error, error_description: errorDescription(description) }, { ...NO_STORE, ...headers });
}

/** A redirect with no body. */
export function redirect(status: 302 | 303, location: string, headers: Readonly<Record<string, string>> = {}): Answer {
  return { status, headers: { ...headers, Location: location }, body: { type: 'empty' } };
}

/** An answer with no body. */
export function empty(status: number, headers: Readonly<Record<string, string>> = {}): Answer {
  return { status, headers, body: { type: 'empty' } };
}

/** Bytes of a given media type (an SVG image, a truncated JSON text). */
export function bytes(
  status: number,
  contentType: string,
  body: string | Buffer,
  headers: Readonly<Record<string, string>> = {},
): Answer {
  return { status, headers, body: { type: 'bytes', contentType, bytes: body } };
}

/** A connection reset without an answer. */
export const RESET: Answer = Object.freeze({
  status: 0,
  headers: {},
  body: { type: 'empty' as const },
  reset: true as const,
});
