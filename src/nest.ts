/**
 * `passport-nd-id/nest`: the strategy, guard helpers, sign-in guard and back-channel logout route
 * for NestJS, plus `passport-nd-id/client`.
 */
export * from './client.js';
export * from './passport/strategy-entry.js';
export {
  NdIdLoginFailure,
  ndIdGuardResult,
  ndIdLogIn,
  type NdIdGuardResultOptions,
  type NdIdLogInRequest,
} from './adapters/nest.js';
export {
  ndIdSignInGuard,
  type NdIdSignInGuard,
  type NdIdSignInGuardOptions,
  type NdIdExecutionContext,
} from './adapters/nest-guard.js';
export { ndIdBackchannelLogout } from './adapters/nest-backchannel.js';
