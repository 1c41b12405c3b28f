/**
 * `passport-nd-id/fastify`: login, callback and sign-out routes as a Fastify plugin and the
 * guards, on `@fastify/session` or `@fastify/secure-session`, plus `passport-nd-id/client`.
 * Names neither Express nor Passport.
 */
export * from './client.js';
export {
  ndIdFastify,
  type NdIdFastify,
  type NdIdFastifyOptions,
  type FastifyInstanceLike,
} from './adapters/fastify.js';
export {
  ndIdFastifyGuards,
  DEFAULT_FASTIFY_USER_KEY,
  type NdIdFastifyGuards,
  type NdIdFastifyGuardsOptions,
  type NdIdFastifyHook,
  type NdIdFastifySignedIn,
} from './adapters/fastify-guard.js';
export type { FastifyReplyLike, FastifyRequestLike } from './adapters/fastify-reply.js';
export type { FastifyRouteScopeLike } from './adapters/fastify-backchannel.js';
