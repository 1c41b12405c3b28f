/** The request value every endpoint receives: nothing of Node's objects, so an endpoint cannot write to a response. */
import type { IncomingHttpHeaders } from 'node:http';
import type { RequestBody } from './body.js';

/** One request, as an endpoint sees it. */
export interface ProviderRequest {
  /** The method in upper case (`HEAD` is routed as `GET`, and answered without a body). */
  readonly method: string;
  /** The path inside the provider (any mount prefix removed), not percent-decoded. */
  readonly path: string;
  /** The raw query string, without `?` ('' when none). */
  readonly rawQuery: string;
  /** The query, parsed without any conversion (duplicates kept). */
  readonly query: URLSearchParams;
  /** Path parameters of the matched route (`:pollId` → `params.pollId`), not decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Request headers, names in lower case (as Node gives them). */
  readonly headers: IncomingHttpHeaders;
  /** The TCP peer's address, an IPv4-mapped IPv6 address shown as IPv4. */
  readonly address: string;
  /** The body, read by the one body reader for routes that take one; `{ kind: 'none' }` otherwise. */
  readonly body: RequestBody;
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
