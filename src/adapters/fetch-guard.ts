/**
 * The fetch-standard guards, translating the core's access decision (`access-check.ts`) to
 * `Response`s; the session is reached through `createFetchLogin`'s hooks so cookie and
 * app-supplied sessions work alike.
 */
import type { IdError } from '../errors.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import { checkAccessOptions, refuseAccess, type AccessOptions, type AccessRefusalReason } from '../flow/access.js';
import { decideAccess, type AccessDecision } from '../flow/access-check.js';
import type { SessionPolicy, SignInRecord } from '../flow/session-policy.js';
import type { FlowSession } from '../flow/session.js';
import type { SignInSession } from '../flow/sign-in-session.js';

/** What a guarded handler receives. */
export interface SignedInRequest {
  /** The request. */
  request: Request;
  /** The signed-in person as kept in the session (`toSessionUser`; default `{ sub, data, authTime, signedInAt }`). */
  user: unknown;
  /** The session's sign-in record. */
  signIn: SignInRecord;
}

/** A handler behind a guard. */
export type SignedInHandler = (signedIn: SignedInRequest) => Response | Promise<Response>;

/** What the guards need from `createFetchLogin`. */
export interface FetchGuardHooks {
  /** The session rules. */
  policy: SessionPolicy;
  /** Session key of the signed-in person. */
  userKey: string;
  /** Path of the login route. */
  loginPath: string;
  /** The request's session. */
  sessionOf(request: Request): Promise<FlowSession>;
  /** Adds the session's Set-Cookie (when it changed) to `headers`. */
  commit(session: FlowSession, request: Request, headers: Headers): Promise<void>;
  /** The session as the sign-in core speaks to it (destroy: a cookie session is cleared, an app-supplied one loses the person). */
  signInSession(session: FlowSession): SignInSession;
  /** Reports `err` (logged with a reference) and answers its failure page. */
  failurePage(err: IdError): Response;
}

/**
 * `response` with the cookies added and `Cache-Control: no-store` (a signed-in page may carry the
 * refreshed session cookie: no shared cache may keep it); the handler's own `Cache-Control` stays
 * only when no cookie goes out.
 */
function privateAnswer(response: Response, headers: Headers): Response {
  const cookies = headers.getSetCookie();
  const keepOwn = cookies.length === 0 && response.headers.has('cache-control');
  if (keepOwn) return response;
  try {
    response.headers.set('cache-control', 'no-store');
    for (const cookie of cookies) response.headers.append('set-cookie', cookie);
    return response;
  } catch {
    const copy = new Response(response.body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    copy.headers.set('cache-control', 'no-store');
    for (const cookie of cookies) copy.headers.append('set-cookie', cookie);
    return copy;
  }
}

/** The guards over `hooks`. */
export function createFetchGuards(hooks: FetchGuardHooks) {
  const { policy } = hooks;

  function answer(
    request: Request,
    access: AccessOptions & { loginPath: string },
    reason: AccessRefusalReason,
    headers: Headers,
    maxAge?: number,
  ): Response {
    const refusal = refuseAccess(
      access,
      { url: pathAndQuery(request), accept: request.headers.get('accept') },
      reason,
      maxAge,
    );
    headers.set('cache-control', 'no-store');
    if (refusal.kind === 'redirect') {
      headers.set('location', refusal.location);
      return new Response(null, { status: 303, headers });
    }
    headers.set('www-authenticate', refusal.wwwAuthenticate);
    headers.set('content-type', 'application/json');
    return new Response(JSON.stringify(refusal.body), { status: refusal.status, headers });
  }

  async function guard(
    request: Request,
    seconds: number | undefined,
    handler: SignedInHandler,
    options: AccessOptions | undefined,
    who: string,
  ): Promise<Response> {
    if (typeof handler !== 'function')
      throw new TypeError(`${who}: handler must be a function ({ user, signIn }) => Response.`);
    checkOptionNames(options, 'auth.requireSignIn()');
    options = ownOptions(options);
    const access = checkAccessOptions({ loginPath: hooks.loginPath, ...options }, who);
    const session = await hooks.sessionOf(request);
    const headers = new Headers();
    let decision: AccessDecision;
    try {
      decision = await decideAccess(policy, hooks.signInSession(session), {
        hasUser: session.get(hooks.userKey) !== undefined,
        ...(seconds === undefined ? {} : { recentSeconds: seconds }),
      });
    } catch (err) {
      return hooks.failurePage(err as IdError);
    }
    if (decision.kind === 'refuse') {
      if (decision.ended) await hooks.commit(session, request, headers);
      return answer(request, access, decision.reason, headers, seconds);
    }
    if (decision.touched) await hooks.commit(session, request, headers);
    return privateAnswer(
      await handler({ request, user: session.get(hooks.userKey), signIn: decision.record }),
      headers,
    );
  }

  return {
    /**
     * Runs `handler` for a signed-in person; otherwise answers a redirect to the login route
     * (pages) or 401 JSON (APIs, by `Accept` or `api: true`). Ends sessions past their lifetime.
     */
    requireSignIn(request: Request, handler: SignedInHandler, options?: AccessOptions): Promise<Response> {
      return guard(request, undefined, handler, options, 'requireSignIn');
    },
    /** As `requireSignIn`, and the person must have authenticated within `seconds`; else a step-up login starts. */
    requireRecentSignIn(
      request: Request,
      seconds: number,
      handler: SignedInHandler,
      options?: AccessOptions,
    ): Promise<Response> {
      if (!Number.isInteger(seconds) || seconds < 0 || seconds > 1e9) {
        throw new TypeError('requireRecentSignIn: seconds must be a whole number of seconds, like 300 (5 minutes).');
      }
      return guard(request, seconds, handler, options, 'requireRecentSignIn');
    },
  };
}

/** The path and query of `request`, as the return path after sign-in. */
function pathAndQuery(request: Request): string {
  const url = new URL(request.url);
  return `${url.pathname}${url.search}`;
}
