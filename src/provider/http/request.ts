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
  return checkedParam(name, params.getAll(name), maxLength);
}

/**
 * {@link singleParam} for a function that reads many parameters of one query: the query is indexed
 * in one pass, where each `getAll` walks every pair again (fourteen reads of an authorization
 * request cost five times the pass). The reader sees the query as it was when made.
 */
export function paramReader(params: URLSearchParams): (name: string, maxLength: number) => ParamResult {
  const index = new Map<string, string[]>();
  for (const [name, value] of params) {
    const values = index.get(name);
    if (values === undefined) index.set(name, [value]);
    else values.push(value);
  }
  return (name, maxLength) => checkedParam(name, index.get(name) ?? NONE, maxLength);
}

const NONE: readonly string[] = [];

function checkedParam(name: string, all: readonly string[], maxLength: number): ParamResult {
  if (all.length > 1) return { ok: false, reason: `The ${name} parameter was sent more than once.` };
  const value = all[0];
  if (value !== undefined && value.length > maxLength) {
    return { ok: false, reason: `The ${name} parameter is longer than ${maxLength} characters.` };
  }
  return { ok: true, value: value === '' ? undefined : value };
}
