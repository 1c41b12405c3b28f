/**
 * The provider's one table router. A route is a method, a path pattern and an endpoint. `HEAD`
 * matches `GET`; paths are compared case-sensitively and not percent-decoded (as published in
 * discovery); one trailing slash is ignored; `:name` matches one segment of up to 256 characters.
 */
import type { Answer } from './http/answer.js';
import type { BodyLimits } from './http/body.js';
import type { ProviderRequest } from './http/request.js';
import type { ProviderEndpoint } from './types.js';

/** How a failure of an endpoint is reported to its caller. */
export type FailureStyle = 'html' | 'json';

/** One route of the provider. */
export interface ProviderRoute {
  /** The endpoint's name, for logs and fault injection. */
  endpoint: ProviderEndpoint;
  method: 'GET' | 'POST' | 'DELETE';
  /** The path, with `:name` segments for parameters. */
  path: string;
  /** Whether a server failure answers an HTML page or a JSON error. */
  failure: FailureStyle;
  /** The route takes a body: it is read (with these limits) before `handle` runs. */
  body?: BodyLimits;
  /** Control routes can require the provider's control token (see `controlToken`). */
  control?: boolean;
  handle(req: ProviderRequest): Answer | Promise<Answer>;
}

/** A matched route and its path parameters. */
export interface RouteMatch {
  route: ProviderRoute;
  params: Record<string, string>;
}

const NO_PARAMS: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);
const MAX_PARAM_LENGTH = 256;

interface Pattern {
  route: ProviderRoute;
  segments: string[];
}

/** Routes by method and path. */
export class Router {
  readonly #fixed = new Map<string, ProviderRoute>();
  readonly #patterns: Pattern[] = [];

  constructor(routes: readonly ProviderRoute[]) {
    for (const route of routes) {
      if (route.path.includes('/:')) this.#patterns.push({ route, segments: route.path.split('/') });
      else this.#fixed.set(`${route.method} ${route.path}`, route);
    }
  }

  /** The route for `method` and `path` (path without query), or undefined. */
  match(method: string, path: string): RouteMatch | undefined {
    const wanted = method === 'HEAD' ? 'GET' : method;
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const fixed = this.#fixed.get(`${wanted} ${trimmed}`);
    if (fixed !== undefined) return { route: fixed, params: NO_PARAMS };
    if (this.#patterns.length === 0) return undefined;
    const segments = trimmed.split('/');
    for (const { route, segments: pattern } of this.#patterns) {
      if (route.method !== wanted || pattern.length !== segments.length) continue;
      const params: Record<string, string> = Object.create(null) as Record<string, string>;
      let ok = true;
      for (let i = 0; i < pattern.length && ok; i++) {
        const want = pattern[i]!;
        const got = segments[i]!;
        if (want.startsWith(':')) {
          if (got === '' || got.length > MAX_PARAM_LENGTH) ok = false;
          else params[want.slice(1)] = got;
        } else if (want !== got) ok = false;
      }
      if (ok) return { route, params };
    }
    return undefined;
  }
}
