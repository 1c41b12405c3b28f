/**
 * A Fastify request's session as the sign-in core speaks to it: `@fastify/session` (kept in a
 * store, replaced at `regenerate`, saved and destroyed there) or `@fastify/secure-session` (the
 * whole session sealed in its cookie: regenerating empties it, destroying clears the cookie).
 */
import { IdError } from '../errors.js';
import type { SignInSession } from '../flow/sign-in-session.js';

/** What the adapter reads of either session plugin's `request.session`. */
interface FastifySessionLike {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  regenerate?: (ignoreFields?: string[]) => unknown;
  save?: () => unknown;
  destroy?: () => unknown;
  delete?: () => unknown;
}

/** The request as far as its session goes. */
export interface FastifySessionRequest {
  session?: unknown;
}

function isSession(value: unknown): value is FastifySessionLike {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Partial<FastifySessionLike>;
  return typeof s.get === 'function' && typeof s.set === 'function';
}

/** The request's session plugin session, or undefined when none is registered. */
export function fastifySessionOf(request: FastifySessionRequest): FastifySessionLike | undefined {
  return isSession(request.session) ? request.session : undefined;
}

/** `@fastify/session` keeps the session in a store (it has save and destroy); the sealed cookie does not. */
function isStored(session: FastifySessionLike): boolean {
  return typeof session.save === 'function' && typeof session.destroy === 'function';
}

/** The error for a session plugin whose sessions cannot be regenerated at sign-in. */
function noRegenerate(): IdError {
  return new IdError(
    'session_missing',
    'request.session has no regenerate(), so signing in cannot give the person a new session: ' +
      'register @fastify/session or @fastify/secure-session (whose sessions have it) instead of this session plugin.',
  );
}

/**
 * The request's session (looked up afresh on each call: `@fastify/session` replaces it when it
 * regenerates), or undefined when no session plugin is registered.
 */
export function fastifySignInSession(request: FastifySessionRequest): SignInSession | undefined {
  if (fastifySessionOf(request) === undefined) return undefined;
  const current = (): FastifySessionLike => {
    const session = fastifySessionOf(request);
    if (session === undefined) throw new Error('The session was destroyed during this request.');
    return session;
  };
  return {
    get: (key) => fastifySessionOf(request)?.get(key),
    set: (key, value) => current().set(key, value),
    delete: (key) => current().set(key, undefined),
    regenerate: async () => {
      const session = current();
      // @fastify/session: a new id in the store; @fastify/secure-session: every field cleared.
      // A session that cannot be replaced would keep the id an attacker may have planted: refused.
      if (typeof session.regenerate !== 'function') throw noRegenerate();
      await session.regenerate();
    },
    save: async () => {
      const session = current();
      if (isStored(session)) await session.save?.();
    },
    destroy: async () => {
      const session = fastifySessionOf(request);
      if (session === undefined) return;
      if (isStored(session)) await session.destroy?.();
      else session.delete?.();
    },
  };
}
