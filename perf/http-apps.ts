/**
 * Child process of `perf/login-http.ts`: the relying-party app named by BENCH_APP (one process
 * per app, so each one's garbage collection is counted against it alone), on loopback, signing
 * people in against the bench stub with express-session's memory store (the fetch one with its
 * sealed cookie):
 * - `router`: `passport.session()` + `ndIdRouter()` + `NdIdStrategy`, set up as the README shows;
 * - `fapi`: the same router app with the client in the FAPI 2.0 profile (PAR, DPoP, private_key_jwt,
 *   encrypted ID token), against a stub answering as for a FAPI client;
 * - `bare`: minimal hand-written Express routes over `IdClient` (state, PKCE, nonce in the
 *   session; check state and the RFC 9207 iss, redeem, userinfo, regenerate);
 * - `fetch`: `createFetchLogin()` with the cookie session, served by node:http.
 * `GET /__cpu` answers this process's CPU time in µs. Prints one JSON line with the port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { createCookieSession } from '../src/adapters/cookie-session.js';
import { createFetchLogin } from '../src/adapters/fetch.js';
import { IdClient } from '../src/client/id-client.js';
import type {
  AuthorizationUrlParams,
  AuthorizationUrlResult,
  PushedAuthorizationParams,
  PushedAuthorizationResult,
} from '../src/client/types.js';
import { ndIdRouter } from '../src/passport/router.js';
import { NdIdStrategy } from '../src/passport/strategy.js';
import { generatePkcePair, generateState } from '../src/pkce.js';

const origin = required('BENCH_ORIGIN');
const privateKey = required('BENCH_RP_PRIVATE_KEY');
const CLIENT_ID = required('BENCH_CLIENT_ID');
const NONCE = required('BENCH_NONCE');
const SCOPE = 'openid profile.name profile.nric_number profile.passport_expiry_date';

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set`);
  return value;
}

/** The stub signs one fixed nonce; every app sends that one (no app logic depends on its value). */
class FixedNonceClient extends IdClient {
  override authorizationUrl(params: AuthorizationUrlParams): AuthorizationUrlResult {
    return super.authorizationUrl({ ...params, nonce: NONCE });
  }

  override pushAuthorizationRequest(params: PushedAuthorizationParams): Promise<PushedAuthorizationResult> {
    return super.pushAuthorizationRequest({ ...params, nonce: NONCE });
  }
}

function client(redirectUri: string): FixedNonceClient {
  return new FixedNonceClient({
    clientId: CLIENT_ID,
    clientSecret: 'bench-secret',
    privateKey,
    redirectUri,
    hostname: origin,
  });
}

/** The same client in the FAPI 2.0 profile: assertion and ID-token keys from the driver. */
function fapiClient(redirectUri: string): FixedNonceClient {
  return new FixedNonceClient({
    clientId: CLIENT_ID,
    privateKey,
    redirectUri,
    hostname: origin,
    profile: 'fapi2',
    clientAssertionKey: required('BENCH_ASSERTION_KEY'),
    idTokenDecryptionKey: required('BENCH_ID_TOKEN_PRIVATE_KEY'),
  });
}

function cpu(): string {
  const { user, system } = process.cpuUsage();
  return JSON.stringify({ us: user + system });
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function sessionMiddleware(): express.RequestHandler {
  return session({ secret: 'bench-session-secret', resave: false, saveUninitialized: false });
}

function routerApp(redirectUri: string, make = client): express.Express {
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  authenticator.use(new NdIdStrategy({ client: make(redirectUri), scope: SCOPE }));
  const app = express();
  app.get('/__cpu', (_req, res) => void res.type('json').send(cpu()));
  app.use(sessionMiddleware());
  app.use(authenticator.session());
  app.use('/auth', ndIdRouter({ passport: authenticator }));
  return app;
}

interface BareSession {
  login?: { state: string; codeVerifier: string; nonce: string };
  user?: { sub: string; data: Record<string, string> };
}

function bareApp(redirectUri: string): express.Express {
  const id = client(redirectUri);
  const app = express();
  app.get('/__cpu', (_req, res) => void res.type('json').send(cpu()));
  app.use(sessionMiddleware());
  app.get('/auth/login', (req, res) => {
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const state = generateState();
    const { url, nonce } = id.authorizationUrl({ state, scope: SCOPE, codeChallenge });
    (req.session as BareSession).login = { state, codeVerifier, nonce: nonce ?? NONCE };
    res.redirect(url);
  });
  app.get('/auth/callback', (req, res, next) => {
    const s = req.session as BareSession;
    const login = s.login;
    delete s.login;
    if (login === undefined || login.state !== req.query.state || typeof req.query.code !== 'string') {
      res.status(403).send('Sign-in failed');
      return;
    }
    const code = req.query.code;
    void (async () => {
      await id.checkAuthorizationResponse(req.query);
      const { sub, accessToken } = await id.callback({ code, nonce: login.nonce, codeVerifier: login.codeVerifier });
      const { data } = await id.userinfo({ sub, accessToken });
      req.session.regenerate((err) => {
        if (err) return next(err);
        (req.session as BareSession).user = { sub, data };
        res.redirect('/');
      });
    })().catch(next);
  });
  return app;
}

function fetchHandler(redirectUri: string): (req: IncomingMessage, res: ServerResponse) => void {
  const auth = createFetchLogin({
    client: client(redirectUri),
    scope: SCOPE,
    session: createCookieSession({ secret: 'bench-cookie-secret-0123456789-abcdef' }),
  });
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = `http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`;
    if (req.url === '/__cpu') {
      res.setHeader('content-type', 'application/json');
      res.end(cpu());
      return;
    }
    const request = new Request(url, { headers: req.headers as Record<string, string> });
    const path = new URL(url).pathname;
    const handler = path === '/auth/login' ? auth.login : path === '/auth/callback' ? auth.callback : undefined;
    if (handler === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    void handler(request).then((response) => {
      res.statusCode = response.status;
      for (const [name, value] of response.headers) if (name !== 'set-cookie') res.setHeader(name, value);
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) res.setHeader('set-cookie', cookies);
      void response.text().then((body) => res.end(body));
    });
  };
}

const APPS: Record<string, (redirectUri: string) => (req: IncomingMessage, res: ServerResponse) => void> = {
  router: (redirectUri) => routerApp(redirectUri),
  fapi: (redirectUri) => routerApp(redirectUri, fapiClient),
  bare: bareApp,
  fetch: fetchHandler,
};

async function main(): Promise<void> {
  const name = required('BENCH_APP');
  const make = APPS[name];
  if (make === undefined) throw new Error(`BENCH_APP must be one of ${Object.keys(APPS).join(', ')}`);
  // The callback URL needs the port: listen first (port 0), then attach the app.
  const server = createServer();
  const port = await listen(server);
  server.on('request', make(`http://127.0.0.1:${port}/auth/callback`));
  process.stdout.write(JSON.stringify({ port }) + '\n');
}

// Exit cleanly on the driver's SIGTERM, so a run under --cpu-prof writes each app's profile.
process.on('SIGTERM', () => process.exit(0));
void main();
