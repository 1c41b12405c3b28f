/** `passport-nd-id/client`: the OpenID Connect client and the login flow; its declarations need neither Express nor Passport. */
// First: it checks, as it loads, that the runtime gives Node's built-in modules (a worker needs nodejs_compat).
export { missingNodeBuiltins } from './client/runtime-check.js';
export {
  IdError,
  isIdError,
  isProviderDown,
  PROVIDER_DOWN_CODES,
  type IdErrorCode,
  type IdErrorOptions,
} from './errors.js';
export { systemClock, type Clock } from './clock.js';
export {
  generateCodeVerifier,
  generateCodeChallenge,
  generatePkcePair,
  generateState,
  generateNonce,
  isPkceString,
  CODE_VERIFIER_MIN_LENGTH,
  CODE_VERIFIER_MAX_LENGTH,
} from './pkce.js';
export { convertPkcs1ToPkcs8, type RsaPrivateJwk } from './keys.js';
export type * from './client/types.js';
export {
  IdClient,
  DEFAULT_HOSTNAME,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_CLOCK_TOLERANCE_S,
  DEFAULT_JWKS_COOLDOWN_MS,
  DEFAULT_JWKS_CACHE_MAX_AGE_MS,
  DEFAULT_SCOPE,
} from './client/id-client.js';
export type { OAuthErrorBody } from './client/http.js';
export {
  MAX_CONTEXT_MESSAGE_LENGTH,
  type IdClientProfile,
  type PublicJwks,
  type RetiredPublicKey,
} from './client/fapi-config.js';
export type {
  AppKeyInput,
  AppPrivateJwk,
  AssertionAlgorithm,
  IdTokenDecryptionKey,
  IdTokenKeyAlgorithm,
  PublicJwk,
} from './client/fapi-keys.js';
export type {
  EphemeralPublicJwk,
  JweDecrypter,
  JwsSigner,
  ReferencePublicJwk,
} from './jose/key-reference.js';
export { derToJose } from './jose/ecdsa.js';
export { DPOP_ALGORITHM, type DpopKey, type StoredDpopKey } from './client/dpop.js';
export { CLIENT_ASSERTION_LIFETIME_S } from './client/client-assertion.js';
export { ID_TOKEN_JWE_ALGORITHMS, ID_TOKEN_JWE_ENCRYPTION } from './client/id-token-jwe.js';
export { DEFAULT_JWKS_PATH, type KeyPublisher } from './flow/publish-keys.js';
export { proxyAgentFromEnv, type ProxyAgentFromEnvOptions } from './client/proxy-agent.js';
export { safeReturnTo, MAX_RETURN_TO_LENGTH } from './flow/return-to.js';
export { recordSession, type FlowSession } from './flow/session.js';
export { classifyFailure, isServerSideFailure, type FailureClass } from './flow/failure.js';
export {
  createMemoryReplayStore,
  DEFAULT_REPLAY_STORE_MAX_KEYS,
  type ReplayStore,
  type MemoryReplayStoreOptions,
} from './flow/replay-store.js';
export {
  createRedisReplayStore,
  DEFAULT_REDIS_REPLAY_PREFIX,
  type RedisCommandClient,
  type RedisReplayStoreOptions,
} from './flow/redis-replay-store.js';
export {
  createLoginFlow,
  DEFAULT_FLOW_SCOPE,
  type LoginFlow,
  type LoginFlowClient,
  type LoginFlowOptions,
  type BeginOptions,
  type BeginResult,
  type CompleteResult,
  type LoginUser,
  type StateMismatchReason,
  type RestorePendingLogins,
} from './flow/login-flow.js';
export { LOG_EVENTS, redactEvent, newReference, type Logger, type LogEvent, type LogLevel } from './log.js';
export {
  DIAGNOSIS_CODES,
  diagnoseCallback,
  type Diagnosis,
  type DiagnosisCode,
  type CallbackEvidence,
  type RequestFacts,
  type SessionCookieSettings,
  type LedgerRecord,
} from './flow/diagnose.js';
export {
  createSessionPolicy,
  defaultSessionPolicy,
  signOutEverywhere,
  DEFAULT_MAX_SESSION_AGE_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_TOUCH_INTERVAL_MS,
  DEFAULT_SIGN_IN_KEY,
  STEP_UP_TOLERANCE_MS,
  type SessionPolicy,
  type SessionPolicyOptions,
  type SignInRecord,
  type SessionCheck,
  type SessionEndReason,
  type StepUpOutcome,
  type StoreKeyKind,
  type SignOutEverywhereOptions,
} from './flow/session-policy.js';
export {
  createMemorySignOutStore,
  DEFAULT_SIGN_OUT_STORE_MAX_ENTRIES,
  type SignOutStore,
  type MemorySignOutStoreOptions,
} from './flow/sign-out-store.js';
export {
  createBackchannelLogout,
  readBackchannelBody,
  DEFAULT_BACKCHANNEL_LOGOUT_PATH,
  DEFAULT_MAX_LOGOUT_TOKEN_AGE_S,
  type BackchannelLogout,
  type BackchannelLogoutOptions,
  type BackchannelLogoutRequest,
  type BackchannelLogoutAnswer,
  type LogoutTokenValidator,
  MAX_BACKCHANNEL_LOGOUT_BODY_BYTES,
} from './flow/backchannel-logout.js';
export {
  BACKCHANNEL_LOGOUT_EVENT,
  LOGOUT_TOKEN_TYPE,
  type LogoutTokenChecks,
  type LogoutTokenClaims,
} from './client/logout-token.js';
export type { IdTokenDecryptionOptions } from './client/id-token-jwe.js';
export {
  createRedisSignOutStore,
  DEFAULT_REDIS_SIGN_OUT_PREFIX,
  type RedisSignOutStoreOptions,
} from './flow/redis-sign-out-store.js';
export {
  DEFAULT_LOGIN_PATH,
  wantsJson,
  type AccessOptions,
  type AccessAnswer,
  type AccessRefusalReason,
} from './flow/access.js';
