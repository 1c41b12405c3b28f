/** `passport-nd-id/nest`: the strategy, guard helpers and sign-in guard for NestJS, plus `passport-nd-id/client`. */
export * from './client.js';
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
} from './passport/strategy.js';
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
