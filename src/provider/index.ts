/**
 * `passport-nd-id/provider`: a strict, runnable implementation of the spec's service, with the QR
 * page and a simulated mobile app, as a plain Node request handler (no Express needed at run time).
 */
import { checkOptionNames, ownOptions } from '../options-check.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizeRoutes } from './authorize.js';
import { ClientJwks } from './fapi/client-jwks.js';
import { DpopNonces } from './fapi/dpop-nonces.js';
import { idTokenAlgOf } from './fapi/registration.js';
import { signOutAtProvider } from './backchannel-logout.js';
import { ProviderSessions } from './provider-sessions.js';
import { servesUserinfo } from './variant.js';
import { parRoutes } from './par.js';
import { resolveConfig } from './config.js';
import type { ProviderContext } from './context.js';
import { ControlToken } from './control-token.js';
import { pairwiseSubject, SigningKeys } from './crypto.js';
import { FaultController } from './faults/controller.js';
import { faultControlRoutes } from './faults/control-routes.js';
import { createHandler } from './handler.js';
import { mobileAppRoutes } from './mobile-app.js';
import type { Provider } from './provider.js';
import { Router } from './router.js';
import { createStores } from './store.js';
import { tokenRoutes } from './token.js';
import type { ProviderOptions } from './types.js';
import { userinfoRoutes } from './userinfo.js';
import { wellKnownRoutes } from './well-known.js';
import { Audit, AUDIT_MESSAGES } from './testing/audit.js';
import { Conformance } from './testing/conformance.js';
import { conformanceRoutes } from './testing/conformance-route.js';
import { auditRoutes } from './testing/audit-route.js';
import { ScriptedLogins } from './testing/approve-next.js';
import { setClientKeys } from './testing/client-keys.js';
import { createTestProviderWith, type TestProvider, type TestProviderOptions } from './testing/create-test-provider.js';
import { PersonaDirectory } from './testing/persona-directory.js';

export type { Persona, ProviderClient, ProviderEndpoint, ProviderOptions, ProviderTtl } from './types.js';
export type { Provider, ProviderHandler } from './provider.js';
export type { BackchannelDelivery, ProviderSignOut } from './backchannel-logout.js';
export type { ProviderRequest } from './http/request.js';
export type { Answer, AnswerBody } from './http/answer.js';
export type { RequestBody, FormFields } from './http/body.js';
export type {
  ActiveFault,
  Fault,
  FaultControl,
  FaultEndpoint,
  FaultHandle,
  FaultKind,
  FaultOptions,
  IdTokenFault,
  IssuerMismatchFault,
  LatencyFault,
  NonJsonFault,
  ResetFault,
  StatusFault,
  SubMismatchFault,
  TruncatedFault,
} from './faults/kinds.js';
export { FAULT_ENDPOINTS } from './faults/kinds.js';
export { DEFAULT_PERSONAS, isValidNric, nricCheckLetter } from './personas.js';
export { DEFAULT_TTL } from './config.js';
export { SCOPE_LABELS } from './views/mobile-page.js';
export { SUPPORTED_SCOPES } from './scopes.js';
export type { AuditCode, AuditFinding } from './testing/audit.js';
export { AUDIT_MESSAGES, formatAuditTable } from './testing/audit.js';
export type {
  ConformanceCaseResult,
  ConformancePlan,
  ConformanceResults,
  ConformanceStatus,
} from './testing/conformance.js';
export { formatConformanceTable } from './testing/conformance.js';
export type { Verdict } from './testing/verdict.js';
export { verdictOf } from './testing/verdict.js';
export type { ConformanceCase, ConformanceCaseId } from './testing/conformance-cases.js';
export { CONFORMANCE_CASES } from './testing/conformance-cases.js';
export type { ApproveNextOptions } from './testing/approve-next.js';
export type { SignInOptions, SignInProvider, SignInResult } from './testing/sign-in.js';
export { SignInError, signIn } from './testing/sign-in.js';
export type { StoredCookie } from './testing/cookie-jar.js';
export { CookieJar } from './testing/cookie-jar.js';
export type { PersonaDirectory } from './testing/persona-directory.js';
export type { ClientPublicKey } from './types.js';
export type { TestProvider, TestProviderOptions, TestClient, TestFapiKeys } from './testing/create-test-provider.js';
export { fapiTestKeys } from './testing/create-test-provider.js';

/**
 * Builds a provider: validates the options (one TypeError listing every mistake) and returns its
 * request handler and controls. Nothing listens until you do ({@link startProvider}, or
 * `http.createServer(provider.handler)`).
 */
export function createProvider(options: ProviderOptions): Provider {
  const config = resolveConfig(options);
  const stores = createStores(config.clock, config);
  const algs = [...config.clients.values()].map(idTokenAlgOf);
  const keys = new SigningKeys(config.clock, config.ttl.signingKeyGrace * 1000, config.signingKeys, algs);
  const personas = PersonaDirectory.create(config.personas);
  const scripted = new ScriptedLogins(personas);
  const audit = new Audit(config.clock, (id) => config.clients.has(id));
  const conformance = new Conformance(
    keys,
    audit,
    () => [...config.clients.keys()],
    (id) => config.clients.get(id)?.profile === 'fapi2',
    {
      userinfo: (id) => {
        const client = config.clients.get(id);
        return client !== undefined && servesUserinfo(config, client);
      },
      iss: config.authorizationResponseIss,
    },
  );
  if (config.conformance) conformance.start();
  const ctx: ProviderContext = {
    config,
    keys,
    stores,
    personas,
    scripted,
    audit,
    conformance,
    log: (endpoint, message) => config.log?.(`${endpoint}: ${message}`),
    persona: (id) => personas.get(id),
    subjectFor: (clientId, personaId) => pairwiseSubject(config.subjectSecret, clientId, personaId),
    clientJwks: new ClientJwks(config.clock),
    dpopNonces: config.dpopNonce ? new DpopNonces(config.clock) : undefined,
    sessions: new ProviderSessions(),
  };
  audit.listen((clientId, code, count) =>
    config.log?.(`audit: finding ${code} for client ${clientId} (${count}): ${AUDIT_MESSAGES[code]}`),
  );

  const faults = new FaultController(ctx);
  const router = new Router([
    ...authorizeRoutes(ctx),
    ...mobileAppRoutes(ctx),
    ...parRoutes(ctx),
    ...tokenRoutes(ctx),
    ...userinfoRoutes(ctx),
    ...wellKnownRoutes(ctx),
    ...(config.faultControl ? faultControlRoutes(faults) : []),
    ...(config.auditEndpoint ? auditRoutes(audit) : []),
    ...(config.conformance
      ? conformanceRoutes(conformance, { findings: () => audit.findings(), auditStrict: config.auditStrict })
      : []),
  ]);
  const handler = createHandler({
    ctx,
    router,
    faults,
    controlToken: config.controlToken === undefined ? undefined : new ControlToken(config.controlToken),
  });

  return {
    handler,
    issuer: config.issuer,
    baseUrl: config.baseUrl,
    personas,
    clock: config.clock,
    advanceClock: (ms) => config.movableClock.advance(ms),
    approveNext: (approval) => scripted.enqueue(approval),
    setClientKeys: (clientId, publicKeys) => setClientKeys(config, clientId, publicKeys),
    rotateSigningKey: () => keys.rotate(),
    signOut: (signOut) => signOutAtProvider(ctx, ctx.sessions, signOut),
    subjectFor: ctx.subjectFor,
    faults,
    audit: (clientId) => ctx.audit.findings(clientId),
    conformance,
    close: () => {
      faults.close();
      scripted.clear();
      stores.pendingByMobileId.clear();
      stores.pendingByPollId.clear();
      stores.answeredByMobileId.clear();
      stores.answeredByPollId.clear();
      stores.pendingQuota.clear();
      stores.codes.clear();
      stores.accessTokens.clear();
      stores.pushed.clear();
      stores.usedJtis.clear();
      ctx.sessions.clear();
    },
  };
}

/** Options of {@link startProvider}: those of createProvider, plus where to listen. */
export type StartProviderOptions = Omit<ProviderOptions, 'baseUrl'> & {
  /** Port to listen on. Default 0 (any free port). */
  port?: number;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** The public origin. Default: `http://<host>:<bound port>`. */
  baseUrl?: string;
};

/** A listening provider. */
export interface StartedProvider {
  provider: Provider;
  /** The origin it answers on. */
  baseUrl: string;
  /** The HTTP server. */
  server: Server;
  /** Stop listening, drop open connections and forget all state. */
  close(): Promise<void>;
}

/** Creates a provider and listens; without `baseUrl` it is derived from the bound address, so port 0 works. */
export async function startProvider(options: StartProviderOptions): Promise<StartedProvider> {
  checkOptionNames(options, 'startProvider()');
  options = ownOptions(options);
  const { port = 0, host = '127.0.0.1', baseUrl: givenBaseUrl, ...rest } = options;
  // Validate before binding, so bad config fails without opening a port.
  if (givenBaseUrl !== undefined) resolveConfig({ ...rest, baseUrl: givenBaseUrl });
  let provider: Provider | undefined;
  const server = createServer((req, res) => {
    if (provider) provider.handler(req, res);
    else res.writeHead(503).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  // A wildcard bind is reachable on loopback; a URL cannot name the wildcard address itself.
  const boundHost = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
  const hostForUrl = address.family === 'IPv6' ? `[${boundHost}]` : boundHost;
  const baseUrl = givenBaseUrl ?? `http://${hostForUrl}:${address.port}`;
  try {
    provider = createProvider({ ...rest, baseUrl });
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  }
  const started = provider;
  return {
    provider: started,
    baseUrl: started.baseUrl,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        started.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Starts a provider on a free loopback port with one registered client and its key pair (one
 * pair per process unless `freshKeys`), for tests:
 *
 * ```ts
 * const { provider, baseUrl, client, close } = await createTestProvider({ redirectUri: 'http://127.0.0.1:3000/auth/callback' });
 * const idClient = new IdClient({ ...client, hostname: baseUrl });
 * provider.approveNext({ persona: 'ben' });
 * ```
 */
export function createTestProvider(options: TestProviderOptions = {}): Promise<TestProvider> {
  return createTestProviderWith(startProvider, options);
}
