/**
 * passport-nd-id: sign people in with the national digital identity service.
 * This module only re-exports; each concept lives in its own file. The root is the Express and
 * Passport entry, and it carries everything of the framework entries too (`/client`, `/fetch`,
 * `/nest`), so today's imports keep working.
 */
// First: it checks, as it loads, that the runtime gives Node's built-in modules (a worker needs nodejs_compat).
export { missingNodeBuiltins } from './client/runtime-check.js';
export * from './client.js';
export * from './fetch.js';
export * from './nest.js';
export type { NdIdRouteWiring } from './passport/strategy.js';
export type { StepUpRefusalCode } from './passport/sign-in.js';
export { ndIdRouter, type NdIdRouterOptions, type NdIdRoutes, type NdIdAfterCallbackResult, type NdIdFailureView } from './passport/router.js';
export { requireSignIn, requireRecentSignIn, type RequireSignInOptions } from './passport/require-sign-in.js';
export { ndIdSession, type NdIdSessionOptions } from './passport/signed-in-session.js';
