/** What the Fastify adapter uses of Fastify's request and reply (typed structurally: `fastify` is never loaded), and its failure page. */
import { IdError } from '../errors.js';
import { classifyFailure } from '../flow/failure.js';
import { FAILURE_PAGE_HEADERS, renderFailurePage, type FailurePage } from '../flow/failure-page.js';

/** The parts of a `FastifyRequest` the adapter reads. */
export interface FastifyRequestLike {
  /** The session of `@fastify/session` or `@fastify/secure-session`. */
  session?: unknown;
  query: unknown;
  /** The body as a content-type parser left it. */
  body?: unknown;
  headers: Record<string, string | string[] | undefined>;
  url: string;
  method: string;
  protocol: string;
  /** `@fastify/passport`'s person, when it is registered. */
  user?: unknown;
  isAuthenticated?: () => boolean;
}

/** The parts of a `FastifyReply` the adapter calls. */
export interface FastifyReplyLike {
  code(statusCode: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  redirect(url: string, code?: number): FastifyReplyLike;
  send(payload?: unknown): FastifyReplyLike;
}

/** How failure pages look: the login route for "try again", and whether to show the developer's diagnosis. */
export interface FastifyFailureOptions {
  retryHref?: string;
  showDiagnosis?: boolean;
}

/** Answers `err` with the failure page of its status (a server-side failure never says more than that). */
export function sendFastifyFailure(
  reply: FastifyReplyLike,
  err: unknown,
  options: FastifyFailureOptions = {},
): FastifyReplyLike {
  const failure = classifyFailure(err);
  const idError = err instanceof IdError ? err : undefined;
  const diagnosis = options.showDiagnosis === true ? idError?.diagnosis : undefined;
  return sendFastifyPage(reply, {
    status: failure.status,
    title: failure.serverSide ? 'Sign-in is unavailable' : 'Sign-in failed',
    message: failure.message,
    ...(options.retryHref === undefined ? {} : { retryHref: options.retryHref }),
    ...(idError?.reference === undefined ? {} : { reference: idError.reference }),
    ...(diagnosis === undefined
      ? {}
      : { developer: { code: diagnosis.code, cause: diagnosis.cause, fix: diagnosis.fix } }),
  });
}

/** Answers a failure page. */
export function sendFastifyPage(reply: FastifyReplyLike, page: FailurePage): FastifyReplyLike {
  return sendFastifyHtml(reply, page.status, renderFailurePage(page));
}

/** Answers an HTML page with the failure pages' headers (no-store among them). */
export function sendFastifyHtml(reply: FastifyReplyLike, status: number, html: string): FastifyReplyLike {
  reply.code(status);
  for (const [name, value] of Object.entries(FAILURE_PAGE_HEADERS)) reply.header(name, value);
  return reply.send(html);
}
