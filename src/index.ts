/**
 * passport-nd-id: the Express and Passport layer (the strategy, the router, the guards and the
 * session middleware), with the session rules its guide configures them with. Re-exports only.
 * Its declarations name Express and Passport, so everything else lives in the entry of the
 * framework that needs it, and everything framework-neutral (`IdClient`, the login flow, the
 * stores, the errors) in `passport-nd-id/client`, which names neither.
 */
export * from './passport/strategy-entry.js';
export type { NdIdRouteWiring } from './passport/strategy.js';
export type { StepUpRefusalCode } from './passport/sign-in.js';
export {
  ndIdRouter,
  type NdIdRouterOptions,
  type NdIdRoutes,
  type NdIdAfterCallbackResult,
  type NdIdFailureView,
} from './passport/router.js';
export { requireSignIn, requireRecentSignIn, type RequireSignInOptions } from './passport/require-sign-in.js';
export { ndIdSession, type NdIdSessionOptions } from './passport/signed-in-session.js';
export { createSessionPolicy, type SessionPolicy, type SessionPolicyOptions } from './flow/session-policy.js';
