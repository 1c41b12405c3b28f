/**
 * Two relying-party apps over the same IdClient settings, for tests that must hold for every
 * adapter: an Express app (express-session, Passport, ndIdRouter at /auth) and a fetch-handler
 * app (createFetchLogin with the sealed-cookie session at /auth) behind a plain node:http bridge
 * that hands the request's own headers (Host included) to the handlers. Not a test file itself.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import { createFetchLogin, type FetchLogin } from '../../src/adapters/fetch.js';
import { IdClient } from '../../src/client/id-client.js';
import type { ReplayStore } from '../../src/flow/replay-store.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { testKeyPair } from './keys.js';

/** The two adapters that share the login flow. */
export const ADAPTERS = ['router', 'fetch'] as const;
/** One of {@link ADAPTERS}. */
export type AdapterName = (typeof ADAPTERS)[number];

/** Settings of an app under test. */
export interface RpAppSettings {
  /**
   * The service's origin (any loopback origin when the test never redeems a code), or a function
   * that starts a provider registered for the app's callback URL and gives its origin.
   */
  hostname: string | ((callbackUrl: string) => Promise<string>);
  clientId: string;
  clientSecret: string;
  /** Replay store of the flow. Default: the process's own. */
  replayStore?: ReplayStore;
}

/** A running app. */
export interface RpApp {
  readonly adapter: AdapterName;
  readonly baseUrl: string;
  /** The registered callback URL: `${baseUrl}/auth/callback`. */
  readonly callbackUrl: string;
  /** The fetch handlers (fetch adapter only). */
  readonly fetchLogin?: FetchLogin;
  close(): Promise<void>;
}

/** The private key the apps sign with; register its public half with the provider. */
export const RP_APP_KEYS = testKeyPair('rp');

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Creates the server first (the callback URL needs its port), then the client. */
async function listenThen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; baseUrl: string }> {
  const server = createServer(handler);
  return { server, baseUrl: await listen(server) };
}

function origin(settings: RpAppSettings, callbackUrl: string): Promise<string> {
  return typeof settings.hostname === 'string' ? Promise.resolve(settings.hostname) : settings.hostname(callbackUrl);
}

function client(settings: RpAppSettings & { hostname: string }, callbackUrl: string): IdClient {
  return new IdClient({
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    privateKey: RP_APP_KEYS.privateKeyPem,
    hostname: settings.hostname,
    redirectUri: callbackUrl,
  });
}

async function startRouterApp(settings: RpAppSettings): Promise<RpApp> {
  const app = express();
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  app.use(session({ secret: 'rp-apps-session-secret', resave: false, saveUninitialized: false }));
  app.use(authenticator.session());
  app.use('/auth', ndIdRouter({ passport: authenticator }));
  app.get('/me', (req, res) => {
    res.json({ user: req.user ?? null });
  });
  const { server, baseUrl } = await listenThen(app);
  const callbackUrl = `${baseUrl}/auth/callback`;
  const hostname = await origin(settings, callbackUrl);
  authenticator.use(
    new NdIdStrategy({
      clientId: settings.clientId,
      clientSecret: settings.clientSecret,
      privateKey: RP_APP_KEYS.privateKeyPem,
      hostname,
      callbackURL: callbackUrl,
      ...(settings.replayStore === undefined ? {} : { replayStore: settings.replayStore }),
    }),
  );
  return { adapter: 'router', baseUrl, callbackUrl, close: () => close(server) };
}

/** Hands a Node request to fetch handlers as a `Request` carrying the same headers, and writes the `Response` back. */
export function fetchBridge(
  route: (request: Request, path: string) => Promise<Response> | undefined,
  baseUrl: () => string,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const headers = new Headers();
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
    const url = new URL(req.url ?? '/', baseUrl());
    const request = new Request(url, { method: req.method ?? 'GET', headers });
    const answer = route(request, url.pathname);
    if (answer === undefined) {
      res.writeHead(404).end();
      return;
    }
    answer.then(
      async (response) => {
        const out: [string, string][] = [];
        response.headers.forEach((value, name) => {
          if (name !== 'set-cookie') out.push([name, value]);
        });
        for (const cookie of response.headers.getSetCookie()) out.push(['set-cookie', cookie]);
        res.writeHead(response.status, out.flat());
        res.end(Buffer.from(await response.arrayBuffer()));
      },
      () => res.writeHead(500).end(),
    );
  };
}

async function startFetchApp(settings: RpAppSettings): Promise<RpApp> {
  let auth: FetchLogin | undefined;
  let base = '';
  const route = (request: Request, path: string): Promise<Response> | undefined => {
    const a = auth as FetchLogin;
    if (path === '/auth/login') return a.login(request);
    if (path === '/auth/callback') return a.callback(request);
    if (path === '/auth/logout') return a.logout(request);
    if (path === '/me') return a.user(request).then((user) => Response.json({ user: user ?? null }));
    return undefined;
  };
  const { server, baseUrl } = await listenThen(fetchBridge(route, () => base));
  base = baseUrl;
  const callbackUrl = `${baseUrl}/auth/callback`;
  const hostname = await origin(settings, callbackUrl);
  auth = createFetchLogin({
    client: client({ ...settings, hostname }, callbackUrl),
    session: createCookieSession({ secret: 'rp-apps-cookie-secret-0123456789abcdef' }),
    loginPath: '/auth/login',
    ...(settings.replayStore === undefined ? {} : { replayStore: settings.replayStore }),
  });
  return { adapter: 'fetch', baseUrl, callbackUrl, fetchLogin: auth, close: () => close(server) };
}

/** Starts the app of `adapter`. */
export function startRpApp(adapter: AdapterName, settings: RpAppSettings): Promise<RpApp> {
  return adapter === 'router' ? startRouterApp(settings) : startFetchApp(settings);
}
