/**
 * The answer to a request a guard refuses, shared by every adapter: pages are redirected to the
 * login with a safe `returnTo`; API requests get 401 JSON with `WWW-Authenticate`, never a redirect.
 */
import { renderFailurePage } from './failure-page.js';
import { safeReturnTo } from './return-to.js';
import type { SessionEndReason, StepUpOutcome } from './session-policy.js';

/** Default path of the login route the guards send people to. */
export const DEFAULT_LOGIN_PATH = '/auth/login';

/** Options shared by `requireSignIn` and `requireRecentSignIn` in every adapter. */
export interface AccessOptions {
  /** Path of the login route (`ndIdRouter`'s login route where it is mounted). Default `'/auth/login'`. */
  loginPath?: string;
  /**
   * `true`: always answer 401 JSON (an API route). `false`: always redirect (a page). Default:
   * 401 JSON when the request's `Accept` asks for JSON and not for HTML, else a redirect.
   */
  api?: boolean;
}

/** Why the request may not pass. */
export type AccessRefusalReason = 'sign_in_required' | 'session_ended' | 'recent_sign_in_required';

/** What the guard answers instead of the route. */
export type AccessAnswer =
  | { kind: 'redirect'; location: string }
  | { kind: 'json'; status: 401; body: Record<string, string | number>; wwwAuthenticate: string };

/** True when `accept` asks for JSON and not for HTML (an API call, `fetch()` from a page). */
export function wantsJson(accept: string | undefined | null): boolean {
  if (typeof accept !== 'string' || accept.length > 1024) return false;
  const value = accept.toLowerCase();
  return (value.includes('application/json') || value.includes('+json')) && !value.includes('text/html');
}

/** Checks a guard's options once, when the guard is built. */
export function checkAccessOptions(
  options: AccessOptions | undefined,
  who: string,
): Required<Pick<AccessOptions, 'loginPath'>> & AccessOptions {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw new TypeError(`${who}: options must be an object (or left out).`);
  const loginPath = options?.loginPath ?? DEFAULT_LOGIN_PATH;
  if (safeReturnTo(loginPath) === undefined || loginPath.includes('?')) {
    throw new TypeError(`${who}: loginPath must be the same-site path of the login route, like "/auth/login".`);
  }
  if (options?.api !== undefined && typeof options.api !== 'boolean')
    throw new TypeError(`${who}: api must be true (401 JSON), false (redirect), or left out (by Accept).`);
  return { ...options, loginPath };
}

/** `loginPath?returnTo=<current URL>[&maxAge=N]`; the return path is dropped when it is not a safe same-site path. */
function loginUrlFor(loginPath: string, currentUrl: string, maxAge?: number): string {
  const returnTo = safeReturnTo(currentUrl);
  const query = [
    ...(returnTo === undefined ? [] : [`returnTo=${encodeURIComponent(returnTo)}`]),
    ...(maxAge === undefined ? [] : [`maxAge=${maxAge}`]),
  ];
  return query.length === 0 ? loginPath : `${loginPath}?${query.join('&')}`;
}

const MESSAGES: Record<AccessRefusalReason, string> = {
  sign_in_required: 'Sign in to continue.',
  session_ended: 'Your session has ended. Sign in again to continue.',
  recent_sign_in_required: 'Confirm it is you: sign in again to continue.',
};

/**
 * The answer for a request that may not pass. `maxAge` (seconds) asks for a recent authentication
 * (step-up), in the login URL and, for APIs, in the challenge (RFC 9470).
 */
export function refuseAccess(
  options: { loginPath: string; api?: boolean },
  request: { url: string; accept?: string | null },
  reason: AccessRefusalReason,
  maxAge?: number,
): AccessAnswer {
  const location = loginUrlFor(options.loginPath, request.url, maxAge);
  const api = options.api ?? wantsJson(request.accept);
  if (!api) return { kind: 'redirect', location };
  const error = reason === 'recent_sign_in_required' ? 'insufficient_user_authentication' : reason;
  // The Cookie scheme of draft-broyer-http-cookie-auth: "sign in with a form at form-action".
  const challenge = `Cookie realm="nd-id", form-action="${options.loginPath}", error="${error}"${maxAge === undefined ? '' : `, max_age=${maxAge}`}`;
  return {
    kind: 'json',
    status: 401,
    body: { error, message: MESSAGES[reason], login: location, ...(maxAge === undefined ? {} : { max_age: maxAge }) },
    wwwAuthenticate: challenge,
  };
}

/** The reason a refused request is given, from the session check. */
export function refusalReason(ended: SessionEndReason | undefined): AccessRefusalReason {
  return ended === undefined ? 'sign_in_required' : 'session_ended';
}

/** The page for a step-up login that cannot be accepted (403), with what to do next. */
export function stepUpRefusedPage(outcome: Exclude<StepUpOutcome, 'ok'>, retryHref: string): string {
  return outcome === 'not_recent'
    ? renderFailurePage({
        status: 403,
        title: 'Please confirm it is you',
        message:
          'This action needs a fresh confirmation in the app, and the sign-in that came back was an earlier one. Nothing was changed. Try again and approve the request on your phone.',
        retryHref,
      })
    : renderFailurePage({
        status: 403,
        title: 'You have been signed out',
        message:
          'A different person confirmed the sign-in than the one signed in here, so this session was ended for safety. Sign in again to continue.',
        retryHref,
      });
}

/** `?maxAge=` of a step-up login (the guards send it): whole seconds, else `undefined` (ignored). */
export function stepUpMaxAge(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,9}$/.test(value)) return undefined;
  return Number(value);
}
