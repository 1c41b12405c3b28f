/**
 * `passport-nd-id/fetch`: login, callback, sign-out and guards as `Request` → `Response` handlers
 * with the sealed cookie session, plus `passport-nd-id/client`. Names neither Express nor Passport.
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
export type { SignedInHandler, SignedInRequest } from './adapters/fetch-guard.js';
