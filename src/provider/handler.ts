/**
 * The provider as a plain Node request handler, the one path every request takes: the path inside
 * the provider (`basePath` removed if a framework has not; undecodable escapes get 400), the table
 * router (no route: `next()` under a framework, else JSON 404), the control token, the one body
 * reader, the endpoint through the fault transformer, a 500 without internals on failure, the one
 * writer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ProviderContext } from './context.js';
import type { ControlToken } from './control-token.js';
import type { FaultController } from './faults/controller.js';
import { json, oauthError, type Answer } from './http/answer.js';
import { NO_BODY, readBody } from './http/body.js';
import type { ProviderRequest } from './http/request.js';
import { writeAnswer } from './http/write.js';
import type { ProviderHandler } from './provider.js';
import type { FailureStyle, RouteMatch, Router } from './router.js';
import { sourceAddress } from './user-agent.js';
import { renderErrorPage } from './views/error-page.js';
import { htmlAnswer } from './views/html.js';

/** A path whose percent escapes do not decode (`/mobile-app/%E0%A4%A`): refused before routing. */
function malformedPath(path: string): boolean {
  if (!path.includes('%')) return false;
  try {
    decodeURIComponent(path);
    return false;
  } catch {
    return true;
  }
}

const BAD_PATH = htmlAnswer(400, renderErrorPage('invalid_request', 'The request could not be read.'));

const NOT_FOUND = json(
  404,
  { error: 'not_found', error_description: 'No such endpoint.' },
  { 'Cache-Control': 'no-store' },
);

/** The answer of an endpoint that failed: no stack, no internals. */
function serverFailure(style: FailureStyle): Answer {
  return style === 'html'
    ? htmlAnswer(500, renderErrorPage('server_error', 'The service failed to handle this request. Try again later.'))
    : oauthError(500, 'server_error', 'The service failed to handle this request.');
}

/** What the handler is made of. */
export interface HandlerParts {
  ctx: ProviderContext;
  router: Router;
  faults: FaultController;
  /** Required by control routes, when set. */
  controlToken: ControlToken | undefined;
}

async function serve(
  parts: HandlerParts,
  match: RouteMatch,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  rawQuery: string,
): Promise<void> {
  const { route, params } = match;
  const method = req.method ?? 'GET';
  const head = method === 'HEAD';
  let answer: Answer;
  try {
    const refusal = route.control === true ? parts.controlToken?.refusal(req.headers) : undefined;
    if (refusal !== undefined) {
      answer = refusal;
    } else {
      const request: ProviderRequest = {
        method,
        path,
        rawQuery,
        query: new URLSearchParams(rawQuery),
        params,
        headers: req.headers,
        address: sourceAddress(req.socket?.remoteAddress),
        body: route.body === undefined ? NO_BODY : await readBody(req, route.body),
      };
      answer = await parts.faults.transform(
        route.endpoint,
        route.failure,
        () => route.handle(request),
        (listener) => {
          res.on('close', listener);
          return () => res.off('close', listener);
        },
      );
    }
  } catch (err) {
    parts.ctx.log(route.endpoint, `server failure (${err instanceof Error ? err.name : 'unknown error'})`);
    answer = serverFailure(route.failure);
  }
  writeAnswer(res, answer, head);
}

/** The provider's request handler over its parts. */
export function createHandler(parts: HandlerParts): ProviderHandler {
  const basePath = parts.ctx.config.basePath;
  return (req, res, next) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (basePath !== '' && (path === basePath || path.startsWith(`${basePath}/`)))
      path = path.slice(basePath.length) || '/';
    if (malformedPath(path)) {
      writeAnswer(res, BAD_PATH, req.method === 'HEAD');
      return;
    }
    const match = parts.router.match(req.method ?? 'GET', path);
    if (match === undefined) {
      if (next) next();
      else writeAnswer(res, NOT_FOUND, req.method === 'HEAD');
      return;
    }
    void serve(parts, match, req, res, path, q === -1 ? '' : url.slice(q + 1));
  };
}
