/**
 * The Fastify guards: `preHandler` hooks translating the core's access decision
 * (`src/flow/access-check.ts`) to Fastify replies. They work on either session plugin, with the
 * sign-in of `ndIdFastify()` or of `NdIdStrategy` under `@fastify/passport`.
 */
import { IdError } from '../errors.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import { checkAccessOptions, DEFAULT_LOGIN_PATH, refuseAccess, type AccessOptions } from '../flow/access.js';
import { decideAccess, type AccessDecision } from '../flow/access-check.js';
import { SESSION_CACHE_CONTROL } from '../flow/finish-sign-in.js';
import { defaultSessionPolicy, type SessionPolicy, type SignInRecord } from '../flow/session-policy.js';
import { fastifySignInSession } from './fastify-session.js';
import { sendFastifyFailure, type FastifyReplyLike, type FastifyRequestLike } from './fastify-reply.js';

/** A Fastify `preHandler` hook: answers the request itself (and resolves to the reply) when it may not pass. */
export type NdIdFastifyHook = (
  request: FastifyRequestLike,
  reply: FastifyReplyLike,
) => Promise<FastifyReplyLike | undefined>;

/** Who a guard let through: the person kept in the session, and the sign-in record. */
export interface NdIdFastifySignedIn {
  /** The person as kept at sign-in (`ndIdFastify`'s `toSessionUser`), or `request.user` under `@fastify/passport`. */
  user: unknown;
  /** The session's sign-in record. */
  signIn: SignInRecord;
}

/** Options of {@link ndIdFastifyGuards}. */
export interface NdIdFastifyGuardsOptions {
  /** The session rules; give the same one to `ndIdFastify` (or to `NdIdStrategy`). Default: the defaults. */
  sessions?: SessionPolicy;
  /** Path of the login route. Default `'/auth/login'`. */
  loginPath?: string;
  /** Session key of the person `ndIdFastify` keeps. Default `'nd-id.user'`. */
  userKey?: string;
}

/** The guards, and who they let through. */
export interface NdIdFastifyGuards {
  /** A `preHandler` for routes that need a signed-in person: else a redirect to the login route (pages) or 401 JSON (APIs). */
  requireSignIn(options?: AccessOptions): NdIdFastifyHook;
  /** As `requireSignIn`, and the person must have authenticated within `seconds`; else a step-up login (`max_age`) starts. */
  requireRecentSignIn(seconds: number, options?: AccessOptions): NdIdFastifyHook;
  /** Who a guard let through on this request, or undefined (no guard ran, or it refused). */
  signedIn(request: object): NdIdFastifySignedIn | undefined;
}

/** Session key of the person kept by `ndIdFastify()`. */
export const DEFAULT_FASTIFY_USER_KEY = 'nd-id.user';

/** The person of the request: the one kept at sign-in, else `@fastify/passport`'s. */
function personOf(request: FastifyRequestLike, stored: unknown): unknown {
  if (stored !== undefined) return stored;
  if (typeof request.isAuthenticated === 'function' && !request.isAuthenticated()) return undefined;
  return request.user ?? undefined;
}

/**
 * Guards for Fastify routes, over the session rules `sessions`.
 *
 * ```ts
 * const guards = ndIdFastifyGuards({ sessions });
 * app.get('/account', { preHandler: guards.requireSignIn() }, async (request) => guards.signedIn(request));
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function ndIdFastifyGuards(given: NdIdFastifyGuardsOptions = {}): NdIdFastifyGuards {
  checkOptionNames(given, 'ndIdFastifyGuards()');
  const options = ownOptions(given);
  const policy = options.sessions ?? defaultSessionPolicy();
  if (typeof policy !== 'object' || policy === null || typeof policy.check !== 'function')
    throw new TypeError('ndIdFastifyGuards: sessions must be createSessionPolicy({ ... }).');
  const userKey = options.userKey ?? DEFAULT_FASTIFY_USER_KEY;
  const loginPath = options.loginPath ?? DEFAULT_LOGIN_PATH;
  const passed = new WeakMap<object, NdIdFastifySignedIn>();

  function hook(seconds: number | undefined, given: AccessOptions | undefined, who: string): NdIdFastifyHook {
    checkOptionNames(given, 'auth.requireSignIn()');
    const access = ownOptions(given);
    const checked = checkAccessOptions({ loginPath, ...access }, who);
    return async function ndIdGuard(request, reply) {
      reply.header('cache-control', SESSION_CACHE_CONTROL);
      const session = fastifySignInSession(request);
      if (session === undefined) return sendFastifyFailure(reply, sessionMissing(who));
      const stored = session.get(userKey);
      let decision: AccessDecision;
      try {
        decision = await decideAccess(policy, session, {
          hasUser: personOf(request, stored) !== undefined,
          ...(seconds === undefined ? {} : { recentSeconds: seconds }),
        });
      } catch (err) {
        return sendFastifyFailure(reply, err);
      }
      if (decision.kind === 'pass') {
        passed.set(request, { user: personOf(request, stored), signIn: decision.record });
        return undefined;
      }
      const answer = refuseAccess(
        checked,
        { url: request.url, accept: header(request, 'accept') },
        decision.reason,
        seconds,
      );
      if (answer.kind === 'redirect') return reply.redirect(answer.location, 303);
      return reply.code(answer.status).header('www-authenticate', answer.wwwAuthenticate).send(answer.body);
    };
  }

  return {
    requireSignIn: (access) => hook(undefined, access, 'requireSignIn'),
    requireRecentSignIn(seconds, access) {
      if (!Number.isInteger(seconds) || seconds < 0 || seconds > 1e9)
        throw new TypeError('requireRecentSignIn: seconds must be a whole number of seconds, like 300 (5 minutes).');
      return hook(seconds, access, 'requireRecentSignIn');
    },
    signedIn: (request) => passed.get(request),
  };
}

/** The error for a route reached with no session plugin registered. */
export function sessionMissing(who: string): IdError {
  return new IdError(
    'session_missing',
    `${who} needs a session: register @fastify/cookie and @fastify/session (or @fastify/secure-session) before it.`,
  );
}

/** One request header as a string. */
export function header(request: FastifyRequestLike, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
