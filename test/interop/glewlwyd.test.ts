/**
 * Against a second provider nobody here wrote: Glewlwyd 2.7 (Debian's `glewlwyd`, in C), started
 * for this file with an SQLite database, a person and one client per case. The app points at it
 * by `issuer` alone, in the base profile (client_secret_post, the code flow with PKCE), and a
 * person signs in through NdIdStrategy and ndIdRouter in an Express app over real HTTP with real
 * cookies: ID tokens signed PS256, ES256 and EdDSA, an ID token encrypted to the app's RSA key
 * (RSA-OAEP-256, A256GCM), and Glewlwyd's standard (JSON) userinfo. Where Glewlwyd does what
 * the specifications do not, the test says so and holds the client to its refusal.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import express, { type RequestHandler } from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { IdError } from '../../src/errors.js';
import type { IdClientOptions } from '../../src/client/types.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy, type NdIdUser } from '../../src/passport/strategy.js';
import { generatePkcePair } from '../../src/pkce.js';
import {
  GLEWLWYD_PERSON,
  type GlewlwydClient,
  type GlewlwydSigningAlg,
  type StartedGlewlwyd,
  startGlewlwyd,
} from '../helpers/glewlwyd.js';
import { Browser, closeServer, listenOnLoopback, recordingLogger } from '../helpers/harness.js';
import { testKeyPair } from '../helpers/keys.js';

const SECRET = 'a-client-secret-for-glewlwyd-0123456789';
/** The app's RSA key: its public half is registered at Glewlwyd for ID-token encryption. */
const APP_KEY = testKeyPair('glewlwyd-app');

/** The clients registered at Glewlwyd, by the algorithm their ID tokens are signed with. */
const CLIENTS: Record<string, { signingAlg: GlewlwydSigningAlg; encrypted?: true }> = {
  'ps256-app': { signingAlg: 'PS256' },
  'es256-app': { signingAlg: 'ES256' },
  'eddsa-app': { signingAlg: 'EdDSA' },
  'encrypted-app': { signingAlg: 'PS256', encrypted: true },
};

/** An app's login at `/<mount>`: the Glewlwyd client it signs in with and its own options. */
interface Mount {
  clientId: keyof typeof CLIENTS;
  options?: Partial<IdClientOptions> & { scope?: string };
}

const MOUNTS: Record<string, Mount> = {
  ps256: { clientId: 'ps256-app' },
  es256: { clientId: 'es256-app' },
  eddsa: { clientId: 'eddsa-app', options: { idTokenSigningAlgorithms: ['EdDSA'] } },
  encrypted: { clientId: 'encrypted-app', options: { privateKey: APP_KEY.privateKeyPem } },
  'id-token-only': { clientId: 'ps256-app', options: { scope: 'openid' } },
  twice: { clientId: 'ps256-app' },
  'es256-only': { clientId: 'ps256-app', options: { idTokenSigningAlgorithms: ['ES256'] } },
  'wrong-secret': { clientId: 'ps256-app', options: { clientSecret: 'not-the-registered-secret-0123456789' } },
};

/** An Express app with one strategy and router per mount, added once Glewlwyd is up. */
class App {
  readonly #routes = new Map<string, RequestHandler>();
  readonly #authenticator = new passport.Passport();
  readonly #server: Server;
  baseUrl = '';

  constructor() {
    const app = express();
    app.use(session({ secret: 'glewlwyd-interop-session', resave: false, saveUninitialized: false }));
    this.#authenticator.serializeUser((user, done) => done(null, user));
    this.#authenticator.deserializeUser((user: Express.User, done) => done(null, user));
    app.use(this.#authenticator.session());
    app.get('/me', (req, res) => {
      res.status(req.user ? 200 : 401).json({ user: req.user ?? null });
    });
    app.use('/:mount', (req, res, next) => {
      const routes = this.#routes.get(req.params.mount ?? '');
      if (routes === undefined) next();
      else routes(req, res, next);
    });
    this.#server = createServer(app);
  }

  async listen(): Promise<void> {
    this.baseUrl = await listenOnLoopback(this.#server);
  }

  callbackUrl(mount: string): string {
    return `${this.baseUrl}/${mount}/callback`;
  }

  /** Mounts the router of `strategy` at `/<mount>`. */
  install(mount: string, strategy: NdIdStrategy): void {
    this.#authenticator.use(mount, strategy);
    this.#routes.set(
      mount,
      ndIdRouter({
        passport: this.#authenticator,
        strategyName: mount,
        successRedirect: '/me',
        renderFailure: (failure, _req, res) => {
          res.status(failure.status).json({ code: failure.code, diagnosis: failure.diagnosis?.code ?? null });
        },
      }),
    );
  }

  close(): Promise<void> {
    return closeServer(this.#server);
  }
}

/** What the verify callback keeps: the ID token's and the userinfo's claims. */
function keep(user: NdIdUser) {
  return {
    sub: user.sub,
    iss: user.claims.iss,
    aud: user.claims.aud,
    idTokenName: user.claims.name ?? null,
    name: user.userinfo?.name ?? null,
    email: user.userinfo?.email ?? null,
  };
}

let app: App;
let glewlwyd: StartedGlewlwyd;
/** Every strategy's log. */
const log = recordingLogger();

function registered(): GlewlwydClient[] {
  return Object.entries(CLIENTS).map(([clientId, c]) => ({
    clientId,
    clientSecret: SECRET,
    redirectUris: Object.entries(MOUNTS)
      .filter(([, m]) => m.clientId === clientId)
      .map(([mount]) => app.callbackUrl(mount)),
    signingAlg: c.signingAlg,
    ...(c.encrypted ? { idTokenEncryptionKey: APP_KEY.publicKeyPem } : {}),
  }));
}

beforeAll(async () => {
  const problem = inject('glewlwydProblem');
  if (problem) throw new Error(problem);
  app = new App();
  await app.listen();
  glewlwyd = await startGlewlwyd(registered());
  for (const [mount, { clientId, options = {} }] of Object.entries(MOUNTS)) {
    const strategy = new NdIdStrategy(
      {
        clientId,
        clientSecret: SECRET,
        issuer: glewlwyd.issuer,
        callbackURL: app.callbackUrl(mount),
        scope: 'openid profile',
        sessionKey: `glewlwyd:${mount}`,
        logger: log.logger,
        idTokenSigningAlgorithms: [CLIENTS[clientId]!.signingAlg],
        ...options,
      },
      async (user) => keep(user),
    );
    app.install(mount, strategy);
  }
}, 20_000);

afterAll(async () => {
  await app?.close();
  await glewlwyd?.close();
});

/** Follows `/<mount>/login` through Glewlwyd to the app's callback; the browser keeps the app's cookies. */
async function toCallback(browser: Browser, mount: string): Promise<URL> {
  const login = await browser.get(`/${mount}/login`);
  expect(login.status, login.text).toBe(302);
  const callback = await glewlwyd.signIn(login.location ?? '');
  expect(callback.origin + callback.pathname).toBe(app.callbackUrl(mount));
  return callback;
}

/** Signs the person in at `/<mount>`; the refusal `{ code, diagnosis }`, or what /me then shows. */
async function signIn(mount: string, browser = new Browser(app.baseUrl)): Promise<Record<string, unknown>> {
  const callback = await toCallback(browser, mount);
  const done = await browser.get(callback.pathname + callback.search);
  if (done.status !== 302) return JSON.parse(done.text) as Record<string, unknown>;
  expect(done.location).toBe('/me');
  return JSON.parse((await browser.get('/me')).text) as Record<string, unknown>;
}

/** The requests Glewlwyd received at its OpenID endpoints while `run` ran, by endpoint. */
async function counted(run: () => Promise<void>): Promise<Record<string, number>> {
  const before = new Map(glewlwyd.requests);
  await run();
  const delta: Record<string, number> = {};
  for (const [path, n] of glewlwyd.requests) {
    const name = path.replace('/api/oidc/', '');
    if (path.startsWith('/api/oidc/') && n > (before.get(path) ?? 0)) delta[name] = n - (before.get(path) ?? 0);
  }
  return delta;
}

/** The subject Glewlwyd gives the person (public subject type: the same for every client). */
let subject: string | undefined;
function expectSignedIn(body: Record<string, unknown>, clientId: string, withUserinfo = true): void {
  const user = body.user as Record<string, unknown> | undefined;
  expect(user, JSON.stringify(body)).toBeDefined();
  subject ??= String(user?.sub);
  expect(user).toEqual({
    sub: subject,
    iss: glewlwyd.issuer,
    aud: clientId,
    idTokenName: GLEWLWYD_PERSON.name,
    name: withUserinfo ? GLEWLWYD_PERSON.name : null,
    email: withUserinfo ? GLEWLWYD_PERSON.email : null,
  });
  expect(subject).toMatch(/^[\w-]{16,}$/);
}

describe('the base profile against Glewlwyd: its discovery document alone, through the router', () => {
  it.for([
    ['PS256', 'ps256'],
    ['ES256', 'es256'],
  ] as const)('a person signs in with an ID token signed %s and standard JSON userinfo', async ([, mount]) => {
    expectSignedIn(await signIn(mount), MOUNTS[mount]!.clientId);
  });

  it('a person signs in with an ID token encrypted to the app key (RSA-OAEP-256, A256GCM), though its kid is not the RFC 7638 thumbprint', async () => {
    expectSignedIn(await signIn('encrypted'), 'encrypted-app');
  });

  it('two logins at one app: discovery and the key set are read once, the token and userinfo endpoints once per login', async () => {
    const first = await counted(async () => expectSignedIn(await signIn('twice'), 'ps256-app'));
    expect(first).toEqual({ '.well-known/openid-configuration': 1, jwks: 1, auth: 1, token: 1, userinfo: 1 });
    const second = await counted(async () => expectSignedIn(await signIn('twice'), 'ps256-app'));
    expect(second).toEqual({ auth: 1, token: 1, userinfo: 1 });
  });

  it("with scope 'openid' alone the sign-in completes from the ID token, without a userinfo call", async () => {
    const calls = await counted(async () => expectSignedIn(await signIn('id-token-only'), 'ps256-app', false));
    expect(calls).toEqual({ '.well-known/openid-configuration': 1, jwks: 1, auth: 1, token: 1 });
  });

  it("an app that accepts only ES256 refuses Glewlwyd's PS256 ID token", async () => {
    expect(await signIn('es256-only')).toEqual({ code: 'id_token_alg_not_allowed', diagnosis: 'id_token_alg_refused' });
  });

  it('a callback whose iss was changed is refused before the code is redeemed, and the login is used up', async () => {
    const browser = new Browser(app.baseUrl);
    const callback = await toCallback(browser, 'ps256');
    const genuine = callback.search;
    callback.searchParams.set('iss', 'http://127.0.0.1:1/api/oidc');
    const refused = await browser.get(callback.pathname + callback.search);
    expect(JSON.parse(refused.text)).toMatchObject({ code: 'authorization_response_iss_mismatch' });
    const again = await browser.get(callback.pathname + genuine);
    expect(JSON.parse(again.text)).toMatchObject({ code: 'state_mismatch' });
  });

  it('client credentials Glewlwyd refuses (403 unauthorized_client, not 401 invalid_client) fail the login naming the secret', async () => {
    const result = await signIn('wrong-secret');
    expect(result).toEqual({ code: 'token_request_failed', diagnosis: 'client_secret_refused' });
    expect(JSON.stringify(result)).not.toContain('not-the-registered-secret');
    expect(log.text()).toMatch(/client_secret_refused/);
  });
});

describe("where Glewlwyd departs from the specifications (Glewlwyd's own failures)", () => {
  it('EdDSA: its at_hash is SHA-256 where Ed25519 takes SHA-512, so the verified ID token is refused with at_hash_mismatch', async () => {
    // at_hash is checked last: the signature (its Ed25519 key from its key set) and every claim held.
    expect(await signIn('eddsa')).toEqual({ code: 'at_hash_mismatch', diagnosis: null });
    // The cause, from its own token response: the signature verifies with its Ed25519 key, and
    // at_hash is the left half of SHA-256 of the access token, not of SHA-512.
    const { idToken, accessToken } = await rawTokens('eddsa-app', app.callbackUrl('eddsa'));
    const [header, payload, signature] = idToken.split('.') as [string, string, string];
    const jwks = (await (await fetch(`${glewlwyd.issuer}/jwks`)).json()) as { keys: { kid: string }[] };
    const key = createPublicKey({ key: jwks.keys.find((k) => k.kid === 'EdDSA')!, format: 'jwk' } as never);
    expect(verify(null, Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true);
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { at_hash: string };
    const half = (alg: string) =>
      createHash(alg)
        .update(accessToken)
        .digest()
        .subarray(0, alg === 'sha256' ? 16 : 32);
    expect(claims.at_hash).toBe(half('sha256').toString('base64url'));
    expect(claims.at_hash).not.toBe(half('sha512').toString('base64url'));
  });
  it("auth_time: it sends 0 (it reads the session from the token request, which carries no person's cookie), so a step-up is refused", async () => {
    const browser = new Browser(app.baseUrl);
    expectSignedIn(await signIn('ps256', browser), 'ps256-app');
    const login = await browser.get('/ps256/login?maxAge=600');
    expect(login.status, login.text).toBe(302);
    const callback = await glewlwyd.signIn(login.location ?? '');
    const stepUp = await browser.get(callback.pathname + callback.search);
    expect(stepUp.status).toBe(403);
    // The router's own step-up page (step_up_not_recent): the sign-in that came back looks like an old one.
    expect(stepUp.text).toContain('Please confirm it is you');
    const { idToken } = await rawTokens('ps256-app', app.callbackUrl('ps256'));
    expect(JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString())).toMatchObject({ auth_time: 0 });
  });
  it('a code redeemed twice: it answers 403 invalid_code (RFC 6749: 400 invalid_grant), and the client fails the second with token_request_failed', async () => {
    const client = new IdClient({
      clientId: 'ps256-app',
      clientSecret: SECRET,
      issuer: glewlwyd.issuer,
      redirectUri: app.callbackUrl('ps256'),
      idTokenSigningAlgorithms: ['PS256'],
      logger: log.logger,
    });
    try {
      await client.discover();
      const pkce = generatePkcePair();
      const { url, nonce } = client.authorizationUrl({ codeChallenge: pkce.codeChallenge, state: 'state-0123456789' });
      const query = Object.fromEntries((await glewlwyd.signIn(url)).searchParams);
      await client.checkAuthorizationResponse(query);
      const redeem = () =>
        client.callback({ code: query.code!, codeVerifier: pkce.codeVerifier, nonce: nonce ?? null, iss: query.iss! });
      expect((await redeem()).claims).toMatchObject({ iss: glewlwyd.issuer, aud: 'ps256-app' });
      const second = (await redeem().catch((err: unknown) => err)) as IdError;
      expect(second).toBeInstanceOf(IdError);
      expect(second).toMatchObject({ code: 'token_request_failed', status: 403 });
      // Not an RFC 6749 code, so it is not echoed: the message says it was not recognised.
      expect(second.message).toBe('The token endpoint refused the request with HTTP 403 (unrecognised error code).');
    } finally {
      client.close();
    }
  });
});

describe('what the app writes down', () => {
  it("the app's log of every login above names no secret, token, code or personal attribute", () => {
    const text = log.text();
    for (const secret of [
      SECRET,
      'not-the-registered-secret',
      GLEWLWYD_PERSON.name,
      GLEWLWYD_PERSON.email,
      'PRIVATE KEY',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toMatch(/eyJ[\w-]{10,}/);
    expect(text).not.toMatch(/code=[\w-]{8,}/);
  });
});

/** A login at Glewlwyd by hand, and its token response as it came (for what the client refuses). */
async function rawTokens(clientId: string, redirectUri: string): Promise<{ idToken: string; accessToken: string }> {
  const pkce = generatePkcePair();
  const client = new IdClient({ clientId, clientSecret: SECRET, issuer: glewlwyd.issuer, redirectUri });
  try {
    await client.discover();
    const { url, nonce } = client.authorizationUrl({
      codeChallenge: pkce.codeChallenge,
      state: 'state-0123456789',
      scope: 'openid',
    });
    expect(nonce).toBeDefined();
    const callback = await glewlwyd.signIn(url);
    const res = await fetch(`${glewlwyd.issuer}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') ?? '',
        redirect_uri: redirectUri,
        code_verifier: pkce.codeVerifier,
        client_id: clientId,
        client_secret: SECRET,
      }),
    });
    const body = (await res.json()) as { id_token: string; access_token: string };
    return { idToken: body.id_token, accessToken: body.access_token };
  } finally {
    client.close();
  }
}
