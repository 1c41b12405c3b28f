/**
 * passport-nd-id: the Express and Passport layer (the strategy, the router, the guards and the
 * session middleware), with the session rules its guide configures them with. Re-exports only.
 * Its declarations name Express and Passport, so everything else lives in the entry of the
 * framework that needs it, and everything framework-neutral (`IdClient`, the login flow, the
 * stores, the errors) in `passport-nd-id/client`, which names neither.
 */
export {
  NdIdStrategy,
  ND_ID_STRATEGY_NAME,
  DEFAULT_SESSION_KEY,
  DEFAULT_STRATEGY_SCOPE,
  DEFAULT_MAX_PENDING_LOGINS,
  DEFAULT_LOGIN_TTL_MS,
  DEFAULT_VERIFY_TIMEOUT_MS,
  type NdIdStrategyOptions,
  type NdIdStrategyOptionsWithRequest,
  type NdIdStrategyBaseOptions,
  type NdIdStrategyClientFields,
  type NdIdStrategyReadyClient,
  type NdIdStrategyCallbackUrl,
  type NdIdClientLike,
  type NdIdUser,
  type NdIdDefaultUser,
  type NdIdVerify,
  type NdIdVerifyWithRequest,
  type NdIdVerifyAnswer,
  type NdIdVerifyDone,
  type NdIdInfo,
  type NdIdFailure,
  type NdIdSuccessInfo,
  type NdIdAuthenticateOptions,
  type NdIdRouteWiring,
} from './passport/strategy.js';
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
