/**
 * The service itself (`passport-nd-id/provider`): a strict, runnable implementation of every
 * endpoint of the spec, with the QR page and a simulated mobile app, as an Express app.
 *
 * Every route is registered through {@link mountRoute}: the one place where a request enters
 * an endpoint handler and where its failures become an HTML or JSON 500 without a stack. A
 * layer that needs to act on every response of an endpoint (for example fault injection)
 * hooks in there.
 */
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizeRoutes } from './authorize.js';
import { resolveConfig } from './config.js';
import type { ProviderContext, ProviderRoute } from './context.js';
import { pairwiseSubject, SigningKeys } from './crypto.js';
import { FaultController, faultControlRouter } from './faults.js';
import { sendOAuthError } from './http.js';
import { mobileAppRoutes } from './mobile-app.js';
import { createStores } from './store.js';
import { tokenRoutes } from './token.js';
import type { Provider, ProviderOptions } from './types.js';
import { userinfoRoutes } from './userinfo.js';
import { renderErrorPage } from './views/error-page.js';
import { sendHtml } from './views/html.js';
import { wellKnownRoutes } from './well-known.js';
import { Audit, AUDIT_MESSAGES } from './testing/audit.js';
import { Conformance } from './testing/conformance.js';
import { conformanceRouter } from './testing/conformance-route.js';
import { auditRouter } from './testing/audit-route.js';
import { ScriptedLogins } from './testing/approve-next.js';
import { setClientKeys } from './testing/client-keys.js';
import { createTestProviderWith, type TestProvider, type TestProviderOptions } from './testing/create-test-provider.js';
import { PersonaDirectory } from './testing/persona-directory.js';

export type {
  Persona,
  Provider,
  ProviderClient,
  ProviderEndpoint,
  ProviderOptions,
  ProviderTtl,
} from './types.js';
export type {
  ActiveFault,
  Fault,
  FaultControl,
  FaultEndpoint,
  FaultHandle,
  FaultKind,
  FaultOptions,
  IdTokenFault,
  LatencyFault,
  NonJsonFault,
  ResetFault,
  StatusFault,
  SubMismatchFault,
  TruncatedFault,
} from './faults.js';
export { FAULT_ENDPOINTS } from './faults.js';
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
export { signIn } from './testing/sign-in.js';
export type { StoredCookie } from './testing/cookie-jar.js';
export { CookieJar } from './testing/cookie-jar.js';
export type { PersonaDirectory } from './testing/persona-directory.js';
export type { ClientPublicKey } from './testing/client-keys.js';
export type { TestProvider, TestProviderOptions, TestClient } from './testing/create-test-provider.js';

function sendServerFailure(res: Response, style: 'html' | 'json'): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (style === 'html') {
    sendHtml(res, 500, renderErrorPage('server_error', 'The service failed to handle this request. Try again later.'));
  } else {
    sendOAuthError(res, 500, 'server_error', 'The service failed to handle this request.');
  }
}

/**
 * Register one route on the app. All routes pass through here, so this is the single seam where
 * per-endpoint behaviour (logging, fault injection) wraps every handler.
 */
/** Runs one route for one request: faults first, and a 500 without internals if it throws. */
async function serveRoute(route: ProviderRoute, req: Request, res: Response, ctx: ProviderContext, faults: FaultController): Promise<void> {
  try {
    await faults.handle(route, req, res);
  } catch (err) {
    ctx.log(route.endpoint, `server failure (${err instanceof Error ? err.name : 'unknown error'})`);
    sendServerFailure(res, route.failure);
  }
}

/** The endpoints every login calls; their handlers use Node's request and response only. */
const LOGIN_ENDPOINTS: ReadonlySet<string> = new Set(['authorize', 'token', 'userinfo']);

/**
 * Lets the login endpoints answer before Express sets up the request: Express gives every
 * request and response a new prototype, and on the three requests of a login that cost about a
 * tenth of the provider's CPU. Only an exact path and method are taken, and only while no fault
 * is injected (faults bend answers through Express's response); anything else, including a
 * trailing slash or another letter case, goes through Express as before.
 */
function answerLoginsFirst(app: Express, routes: ProviderRoute[], ctx: ProviderContext, faults: FaultController): void {
  const byKey = new Map<string, ProviderRoute>();
  for (const route of routes) {
    if (LOGIN_ENDPOINTS.has(route.endpoint)) byKey.set(`${route.method.toUpperCase()} ${route.path}`, route);
  }
  const target = app as unknown as { handle(req: Request, res: Response, next?: NextFunction): void };
  const expressHandle = target.handle.bind(app);
  target.handle = (req, res, next) => {
    if (faults.idle) {
      const url = req.url;
      const q = url.indexOf('?');
      const route = byKey.get(`${req.method === 'HEAD' ? 'GET' : req.method} ${q === -1 ? url : url.slice(0, q)}`);
      if (route !== undefined) {
        void serveRoute(route, req, res, ctx, faults);
        return;
      }
    }
    expressHandle(req, res, next);
  };
}

function mountRoute(app: Express, route: ProviderRoute, ctx: ProviderContext, faults: FaultController): void {
  app[route.method](route.path, (req: Request, res: Response) => serveRoute(route, req, res, ctx, faults));
}

/**
 * Build a provider: validate the options (throwing one TypeError that lists every mistake),
 * then return its Express app and controls. Nothing listens until you do (see {@link startProvider}).
 */
export function createProvider(options: ProviderOptions): Provider {
  const config = resolveConfig(options);
  const stores = createStores(config.clock, config);
  const keys = new SigningKeys(config.clock, config.ttl.signingKeyGrace * 1000, config.signingKey);
  const personas = PersonaDirectory.create(config.personas);
  const scripted = new ScriptedLogins(personas);
  const audit = new Audit(config.clock, (id) => config.clients.has(id));
  const conformance = new Conformance(keys, audit, () => [...config.clients.keys()]);
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
  };
  audit.listen((clientId, code, count) => config.log?.(`audit: finding ${code} for client ${clientId} (${count}): ${AUDIT_MESSAGES[code]}`));

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  const routes = [
    ...authorizeRoutes(ctx),
    ...mobileAppRoutes(ctx),
    ...tokenRoutes(ctx),
    ...userinfoRoutes(ctx),
    ...wellKnownRoutes(ctx),
  ];
  const faults = new FaultController(ctx);
  for (const route of routes) mountRoute(app, route, ctx, faults);
  answerLoginsFirst(app, routes, ctx, faults);
  if (config.faultControl) app.use(faultControlRouter(faults));
  if (config.auditEndpoint) app.use(auditRouter(ctx.audit));
  if (config.conformance) app.use(conformanceRouter(conformance, { findings: () => ctx.audit.findings(), auditStrict: config.auditStrict }));

  app.use((req: Request, res: Response) => {
    res.status(404).set('Cache-Control', 'no-store').json({ error: 'not_found', error_description: 'No such endpoint.' });
  });
  // Errors raised before a handler runs (for example a malformed path escape): no stack, ever.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : 500;
    const clientError = status >= 400 && status < 500;
    if (res.headersSent) {
      res.end();
    } else if (req.path.startsWith('/v2/oauth/token') || req.path.startsWith('/v2/oauth/userinfo')) {
      if (clientError) sendOAuthError(res, status, 'invalid_request', 'The request could not be read.');
      else sendServerFailure(res, 'json');
    } else if (clientError) {
      sendHtml(res, status, renderErrorPage('invalid_request', 'The request could not be read.'));
    } else {
      sendServerFailure(res, 'html');
    }
  });

  return {
    app,
    issuer: config.issuer,
    baseUrl: config.baseUrl,
    personas,
    clock: config.clock,
    advanceClock: (ms) => config.movableClock.advance(ms),
    approveNext: (approval) => scripted.enqueue(approval),
    setClientKeys: (clientId, publicKeys) => setClientKeys(config, clientId, publicKeys),
    rotateSigningKey: () => keys.rotate(),
    subjectFor: ctx.subjectFor,
    faults,
    audit: (clientId) => ctx.audit.findings(clientId),
    conformance,
    close: () => {
      faults.close();
      scripted.clear();
      stores.pendingByMobileId.clear();
      stores.pendingByPollId.clear();
      stores.pendingQuota.clear();
      stores.codes.clear();
      stores.accessTokens.clear();
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

/**
 * Create a provider and listen. When `baseUrl` is not given it is derived from the bound
 * address, so port 0 works.
 */
export async function startProvider(options: StartProviderOptions): Promise<StartedProvider> {
  const { port = 0, host = '127.0.0.1', baseUrl: givenBaseUrl, ...rest } = options;
  // Validate before binding, so bad config fails without opening a port.
  if (givenBaseUrl !== undefined) resolveConfig({ ...rest, baseUrl: givenBaseUrl });
  let provider: Provider | undefined;
  const server = createServer((req, res) => {
    if (provider) provider.app(req, res);
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
