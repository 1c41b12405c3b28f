/**
 * `passport-nd-id/fetch`: login, callback, sign-out and guards as handlers from a standard
 * `Request` to a `Response`, for Hono, Next.js route handlers and workers, with the sealed
 * cookie session; and everything of `passport-nd-id/client`. Its declarations name neither
 * Express nor Passport.
 */
export * from './client.js';
export {
  createCookieSession,
  DEFAULT_COOKIE_SESSION_NAME,
  DEFAULT_COOKIE_SESSION_MAX_AGE_MS,
  MAX_COOKIE_SESSION_BYTES,
  MIN_COOKIE_SESSION_SECRET_LENGTH,
  type CookieSessionOptions,
  type CookieSessionStore,
  type CookieFlowSession,
} from './adapters/cookie-session.js';
export {
  createFetchLogin,
  type FetchLogin,
  type FetchLoginOptions,
  type FetchLoginStartOptions,
  type FetchSessionProvider,
  type FetchSessionUser,
} from './adapters/fetch.js';
export { DEFAULT_LOGIN_PATH, wantsJson, type AccessOptions, type AccessAnswer, type AccessRefusalReason } from './flow/access.js';
export type { SignedInHandler, SignedInRequest } from './adapters/fetch-guard.js';
