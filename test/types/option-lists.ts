/**
 * The option lists of src/options-check.ts name exactly the keys of each options type: a key
 * added to a type and not to its list (it would be refused), or listed and not in the type,
 * fails `tsc --noEmit`.
 */
import type { OPTIONS_OF, SameKeys } from '../../src/options-check.js';
import type {
  NdIdRouterOptions,
  NdIdStrategyOptions,
  NdIdStrategyOptionsWithRequest,
  RequireSignInOptions,
  SessionPolicyOptions,
} from '../../src/index.js';
import type {
  AccessOptions,
  BackchannelLogoutOptions,
  IdClientOptions,
  LoginFlowOptions,
  MemoryReplayStoreOptions,
  MemorySignOutStoreOptions,
  RedisReplayStoreOptions,
  RedisSignOutStoreOptions,
} from '../../src/client.js';
import type { CookieSessionOptions, FetchLoginOptions } from '../../src/fetch.js';
import type { NdIdGuardResultOptions, NdIdSignInGuardOptions } from '../../src/nest.js';
import type { NdIdFastifyGuardsOptions, NdIdFastifyOptions } from '../../src/fastify.js';
import type { ProviderOptions, StartProviderOptions, TestProviderOptions } from '../../src/provider/index.js';

type Listed<O extends keyof typeof OPTIONS_OF> = (typeof OPTIONS_OF)[O];

export const optionListsMatchTheirTypes: [
  SameKeys<SessionPolicyOptions, Listed<'createSessionPolicy()'>>,
  SameKeys<NdIdRouterOptions, Listed<'ndIdRouter()'>>,
  SameKeys<NdIdStrategyOptions | NdIdStrategyOptionsWithRequest, Listed<'new NdIdStrategy()'>>,
  SameKeys<IdClientOptions, Listed<'new IdClient()'>>,
  SameKeys<LoginFlowOptions, Listed<'createLoginFlow()'>>,
  SameKeys<FetchLoginOptions, Listed<'createFetchLogin()'>>,
  SameKeys<NdIdFastifyOptions, Listed<'ndIdFastify()'>>,
  SameKeys<NdIdFastifyGuardsOptions, Listed<'ndIdFastifyGuards()'>>,
  SameKeys<CookieSessionOptions, Listed<'createCookieSession()'>>,
  SameKeys<RequireSignInOptions, Listed<'requireSignIn()'>>,
  SameKeys<NdIdSignInGuardOptions, Listed<'ndIdSignInGuard()'>>,
  SameKeys<AccessOptions, Listed<'auth.requireSignIn()'>>,
  SameKeys<NdIdGuardResultOptions, Listed<'ndIdGuardResult()'>>,
  SameKeys<MemoryReplayStoreOptions, Listed<'createMemoryReplayStore()'>>,
  SameKeys<RedisReplayStoreOptions, Listed<'createRedisReplayStore()'>>,
  SameKeys<MemorySignOutStoreOptions, Listed<'createMemorySignOutStore()'>>,
  SameKeys<RedisSignOutStoreOptions, Listed<'createRedisSignOutStore()'>>,
  SameKeys<ProviderOptions, Listed<'createProvider()'>>,
  SameKeys<StartProviderOptions, Listed<'startProvider()'>>,
  SameKeys<TestProviderOptions, Listed<'createTestProvider()'>>,
  SameKeys<BackchannelLogoutOptions, Listed<'createBackchannelLogout()'>>,
] = [
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
  true,
];
