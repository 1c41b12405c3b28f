/**
 * The back-channel logout route of `ndIdFastify()`: `POST /backchannel-logout` translated to the
 * receiver of `createBackchannelLogout`. Fastify parses no form by default, so the route sits in a
 * context of its own that reads `application/x-www-form-urlencoded` as text (at most 32 KiB);
 * when the app registered a form parser first (`@fastify/formbody`), its parsed form is taken.
 */
import { DEFAULT_BACKCHANNEL_LOGOUT_PATH, type BackchannelLogout } from '../flow/backchannel-logout.js';
import { readBackchannelBody } from '../flow/backchannel-request.js';
import { header } from './fastify-guard.js';
import type { FastifyReplyLike, FastifyRequestLike } from './fastify-reply.js';

const FORM = 'application/x-www-form-urlencoded';

/** What the route uses of the Fastify instance the plugin is registered on. */
export interface FastifyRouteScopeLike {
  post(path: string, handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<unknown>): unknown;
  /** Fastify's `register`: here, a context of the route's own, so its form parser stays there. */
  register(plugin: (scope: FastifyRouteScopeLike) => Promise<void>): unknown;
  /** Fastify's `addHook`: here `onRequest`, so an answer Fastify sends itself (415, 413) is not stored either. */
  addHook(name: 'onRequest', hook: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<void>): unknown;
  hasContentTypeParser(contentType: string): boolean;
  addContentTypeParser(
    contentType: string,
    parser: (request: unknown, payload: AsyncIterable<Uint8Array>) => Promise<string>,
  ): unknown;
}

/** Registers `POST /backchannel-logout` on `instance`, answering what `receiver` says. */
export function registerBackchannelLogout(instance: FastifyRouteScopeLike, receiver: BackchannelLogout): void {
  instance.register(async (scope) => {
    scope.addHook('onRequest', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    if (!scope.hasContentTypeParser(FORM))
      scope.addContentTypeParser(FORM, (_request, payload) => readBackchannelBody(payload));
    scope.post(DEFAULT_BACKCHANNEL_LOGOUT_PATH, async (request, reply) => {
      const answer = await receiver.handle({ contentType: header(request, 'content-type'), body: request.body });
      reply.code(answer.status);
      for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
      return reply.send(answer.body);
    });
  });
}
