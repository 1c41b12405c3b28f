/** passport-nd-id: sign people in with the national digital identity service. Re-exports only. */
// First: it checks, as it loads, that the runtime gives Node's built-in modules (a worker needs nodejs_compat).
export { missingNodeBuiltins } from './client/runtime-check.js';
// The framework entries, each with all of `passport-nd-id/client`: the root is their union plus Express.
export * from './fetch.js';
export * from './nest.js';
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
