/**
 * A relying party in the FAPI 2.0 profile (NdIdStrategy + ndIdRouter, or createFetchLogin on
 * Hono) and a real provider with a FAPI client registered from the app's own keys, over loopback.
 * The app serves its public keys at /auth/jwks.json and the provider is registered with that URL
 * (`jwksUri`), or with the same set inline. Not a test file itself.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import passport from 'passport';
import request from 'supertest';
import type { DpopKey } from '../../src/client/dpop.js';
import { IdClient } from '../../src/client/id-client.js';
import { generatePkcePair } from '../../src/pkce.js';
import type { IdClientOptions } from '../../src/client/types.js';
import {
  startProvider,
  type ProviderClient,
  type StartedProvider,
  type StartProviderOptions,
} from '../helpers/provider.js';
import { ndIdRouter, type NdIdRouterOptions } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { expect } from 'vitest';
import { testKeyPair } from '../helpers/keys.js';
import { Browser } from '../helpers/harness.js';

export const FAPI_CLIENT_ID = 'fapi-rp-under-test';

/** The app's keys: the userinfo RSA key, the assertion key, the ID-token key. */
export interface AppKeys {
  rsa: ReturnType<typeof testKeyPair>;
  assertion: KeyObject;
  idToken: KeyObject | undefined;
}

/** Fresh keys: an EC assertion key, and an EC ID-token key unless `rsaIdToken` (then privateKey is used). */
export function appKeys(rsaIdToken = false): AppKeys {
  return {
    rsa: testKeyPair('rp'),
    assertion: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    idToken: rsaIdToken ? undefined : generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
  };
}

/** Options of {@link startFapiRp}. */
export interface FapiRpOptions {
  keys?: AppKeys;
  /** Register by URL (the app's /auth/jwks.json) instead of inline. Default false. */
  jwksByUrl?: boolean;
  /** Provider options beyond the client and autoApprove. */
  provider?: Partial<StartProviderOptions>;
  /** Interactive (QR page and phone) instead of autoApprove. */
  interactive?: boolean;
  /** Router options. */
  router?: NdIdRouterOptions;
  /** IdClient options the strategy is built with, beyond the keys (e.g. another assertion key than the registered one). */
  client?: Partial<IdClientOptions>;
  /** The client registration, given the app's callback URL, instead of the one made from `keys` (keys held elsewhere). */
  register?: (callbackURL: string) => ProviderClient;
}

/** A running FAPI relying party and its provider. */
export interface FapiRp {
  baseUrl: string;
  provider: StartedProvider;
  strategy: NdIdStrategy;
  browser(): ReturnType<typeof request.agent>;
  close(): Promise<void>;
}

/** The public key set the app registers, as its own IdClient publishes it. */
export function registeredJwks(keys: AppKeys): { keys: Record<string, unknown>[] } {
  return fapiIdClient(keys, 'http://127.0.0.1:1', 'http://127.0.0.1:1/cb').publicJwks() as unknown as {
    keys: Record<string, unknown>[];
  };
}

/** The FAPI client registration of the app for the provider: its keys inline, or by `jwksUri`. */
export function fapiRegistration(keys: AppKeys, redirectUri: string, jwksUri?: string): ProviderClient {
  return {
    clientId: FAPI_CLIENT_ID,
    redirectUris: [redirectUri],
    publicKey: keys.rsa.publicKeyPem,
    profile: 'fapi2',
    ...(jwksUri === undefined ? { jwks: registeredJwks(keys) } : { jwksUri }),
    idTokenEncryptedResponseAlg: keys.idToken === undefined ? 'RSA-OAEP-256' : 'ECDH-ES+A256KW',
    idTokenEncryptedResponseEnc: 'A256GCM',
  } as ProviderClient;
}

/** The app's client options in the profile, against `hostname`, returning to `redirectUri`. */
export function fapiClientOptions(
  keys: AppKeys,
  hostname: string,
  redirectUri: string,
): IdClientOptions & { profile: 'fapi2' } {
  return {
    clientId: FAPI_CLIENT_ID,
    privateKey: keys.rsa.privateKeyPem,
    hostname,
    redirectUri,
    profile: 'fapi2',
    clientAssertionKey: keys.assertion,
    ...(keys.idToken === undefined ? {} : { idTokenDecryptionKey: keys.idToken }),
  };
}

/** The app's IdClient in the profile, against `hostname`. */
export function fapiIdClient(
  keys: AppKeys,
  hostname: string,
  redirectUri: string,
  extra: Partial<IdClientOptions> = {},
): IdClient {
  return new IdClient({ ...fapiClientOptions(keys, hostname, redirectUri), ...extra });
}

/**
 * One login of `client` through the provider's auto-approval, up to the tokens: the key pushed,
 * the browser's redirect followed, the response checked, the kept key restored for the callback.
 * `afterPush` runs between the push and the redirect (so another login can start meanwhile).
 */
export async function idClientFapiLogin(
  client: IdClient,
  state: string,
  afterPush: () => Promise<void> = async () => undefined,
): Promise<{ tokens: Awaited<ReturnType<IdClient['callback']>>; dpopKey: DpopKey }> {
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const { key, stored } = await client.dpopKeyForLogin();
  const { url, nonce } = await client.pushAuthorizationRequest({
    codeChallenge,
    state,
    scope: 'openid profile.name',
    dpopKey: key,
  });
  await afterPush();
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
  await client.checkAuthorizationResponse(Object.fromEntries(back.searchParams));
  const dpopKey = await client.restoreDpopKey(stored);
  const tokens = await client.callback({
    code: back.searchParams.get('code')!,
    codeVerifier,
    nonce: nonce!,
    iss: back.searchParams.get('iss')!,
    dpopKey,
  });
  return { tokens, dpopKey };
}

/**
 * Walks a browser through a FAPI login of the app at `baseUrl` (autoApprove provider): the login
 * redirect carries only client_id and request_uri, the callback redirects; returns the `Set-Cookie`
 * of the login and the JSON of `mePath` afterwards.
 */
export async function walkFapiLogin(baseUrl: string, mePath = '/me'): Promise<{ loginCookies: string; me: unknown }> {
  const browser = new Browser(baseUrl);
  const started = await browser.get('/auth/login');
  expect(started.status, started.text).toBe(302);
  const authorize = new URL(started.location ?? '');
  expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  const back = await fetch(authorize, { redirect: 'manual' });
  const done = await browser.get(back.headers.get('location') ?? '');
  expect(done.status, done.text).toBe(302);
  return { loginCookies: started.setCookies.join(';'), me: JSON.parse((await browser.get(mePath)).text) as unknown };
}

export async function startFapiRp(options: FapiRpOptions = {}): Promise<FapiRp> {
  const keys = options.keys ?? appKeys();
  const app = express();
  let routes: RequestHandler | undefined;
  app.use(session({ secret: 'fapi-test-session-secret', resave: false, saveUninitialized: false }));
  const authenticator = new passport.Passport();
  authenticator.serializeUser((user, done) => done(null, user));
  authenticator.deserializeUser((user: Express.User, done) => done(null, user));
  app.use(authenticator.session());
  app.use('/auth', (req, res, next) => (routes === undefined ? next() : routes(req, res, next)));
  app.get('/me', (req, res) => {
    res.status(req.user ? 200 : 401).json({ user: req.user ?? null });
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const callbackURL = `${baseUrl}/auth/callback`;

  const provider = await startProvider({
    autoApprove: options.interactive !== true,
    clients: [
      options.register?.(callbackURL) ??
        fapiRegistration(keys, callbackURL, options.jwksByUrl === true ? `${baseUrl}/auth/jwks.json` : undefined),
    ],
    ...options.provider,
  } as StartProviderOptions);

  const strategy = new NdIdStrategy({
    clientId: FAPI_CLIENT_ID,
    privateKey: keys.rsa.privateKeyPem,
    hostname: provider.baseUrl,
    callbackURL,
    scope: 'openid profile.name profile.nric_number',
    profile: 'fapi2',
    clientAssertionKey: keys.assertion,
    ...(keys.idToken === undefined ? {} : { idTokenDecryptionKey: keys.idToken }),
    ...options.client,
  } as ConstructorParameters<typeof NdIdStrategy>[0]);
  authenticator.use(strategy);
  routes = ndIdRouter({
    passport: authenticator,
    publishKeys: strategy,
    successRedirect: '/me',
    renderFailure: (failure, _req, res) => {
      res.status(failure.status).json({ code: failure.code, diagnosis: failure.diagnosis?.code ?? null });
    },
    ...options.router,
  });

  return {
    baseUrl,
    provider,
    strategy,
    browser: () => request.agent(baseUrl),
    close: async () => {
      await provider.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
