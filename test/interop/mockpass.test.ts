/**
 * Against the service's most used local mock, which nobody here wrote: MockPass 4.3.4's sgID v2
 * mock (`@opengovsg/mockpass`, its own Express routes, started in-process on 127.0.0.1). Its
 * discovery document names endpoints with a doubled slash (`/v2//oauth/token`, which it does not
 * serve), so a client configured by `hostname` must call the spec's paths, as the official
 * `@opengovsg/sgid-client` builds them, and read discovery only for what it advertises. A person
 * signs in over real HTTP with real cookies: with the README's app (NdIdStrategy + ndIdRouter,
 * `hostname`), with IdClient, and with the official client beside them; each ends with the
 * attributes decrypted with the app's own key.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SgidClient, generatePkcePair as sgidPkce } from '@opengovsg/sgid-client';
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { generatePkcePair } from '../../src/pkce.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { ndIdSession } from '../../src/passport/signed-in-session.js';
import { NdIdStrategy, type NdIdUser } from '../../src/passport/strategy.js';
import { Browser } from '../helpers/harness.js';

// MockPass is CommonJS without types; the suite runs from the repository's root.
const require = createRequire(`${process.cwd()}/`);
const CLIENT_ID = 'mockpass-app';
const CLIENT_SECRET = 'a-client-secret-mockpass-does-not-check';
const SCOPE = 'openid myinfo.name';

type ConfigSgid = (app: express.Express, options: Record<string, unknown>) => void;
interface MockPassAssertions {
  oidc: { singPass: { nric: string }[] };
  myinfo: { v3: { personas: Record<string, { name?: { value?: string } }> } };
}

/** The app's RSA key pair: MockPass encrypts the attributes' block key to the public half. */
const appKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_KEY = appKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

let mockpass: Server;
let hostname: string;
/** The person MockPass signs in without a login page, and the name it holds for them. */
let person: { nric: string; name: string };
const silenced: { mockRestore(): void }[] = [];
/** The paths MockPass was asked for, in order. */
const seen: string[] = [];

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  // MockPass prints every request body (the client secret and verifier among them): not in the test output.
  for (const method of ['log', 'info', 'error'] as const)
    silenced.push(vi.spyOn(console, method).mockImplementation(() => undefined));
  const assertions = require('@opengovsg/mockpass/lib/assertions') as MockPassAssertions;
  const { configSGID } = require('@opengovsg/mockpass/lib/express') as { configSGID: ConfigSgid };
  // Its default person has no Myinfo persona, so asking for an attribute fails there: pick one that has.
  const nric = assertions.oidc.singPass.find((p) => assertions.myinfo.v3.personas[p.nric] !== undefined)!.nric;
  person = { nric, name: assertions.myinfo.v3.personas[nric]!.name!.value! };
  const saved = process.env.MOCKPASS_NRIC;
  process.env.MOCKPASS_NRIC = nric;
  const app = express();
  app.use((req, _res, next) => {
    seen.push(req.path);
    next();
  });
  try {
    configSGID(app, {
      serviceProvider: { pubKey: appKeys.publicKey.export({ type: 'spki', format: 'pem' }) },
      showLoginPage: () => false,
      isStateless: false,
    });
  } finally {
    if (saved === undefined) delete process.env.MOCKPASS_NRIC;
    else process.env.MOCKPASS_NRIC = saved;
  }
  mockpass = createServer(app);
  hostname = await listen(mockpass);
});

afterAll(async () => {
  await close(mockpass);
  for (const spy of silenced) spy.mockRestore();
});

/** What the browser is sent to after MockPass signs the person in: the app's callback with code and state. */
async function signInAtMockPass(authorizationUrl: string): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(res.status, `MockPass answered ${res.status} at ${new URL(authorizationUrl).pathname}`).toBe(302);
  return new URL(res.headers.get('location') ?? '');
}

/** The paths MockPass is asked for while `run` runs. */
async function pathsDuring(run: () => Promise<void>): Promise<string[]> {
  const from = seen.length;
  await run();
  return seen.slice(from);
}

describe('MockPass 4.3.4 (sgID v2), configured by hostname', () => {
  it('its discovery document names token and userinfo endpoints it does not serve (the doubled slash)', async () => {
    const doc = (await (await fetch(`${hostname}/v2/.well-known/openid-configuration`)).json()) as Record<
      string,
      string
    >;
    expect(doc.issuer).toBe(`${hostname}/v2`);
    expect(doc.token_endpoint).toBe(`${hostname}/v2//oauth/token`);
    expect((await fetch(doc.token_endpoint!, { method: 'POST' })).status).toBe(404);
  });

  it("the README's app (NdIdStrategy with hostname, ndIdRouter) signs a person in with real cookies, ending with the decrypted name", async () => {
    const authenticator = new passport.Passport();
    const app = express();
    const server = createServer(app);
    const baseUrl = await listen(server);
    authenticator.use(
      new NdIdStrategy(
        {
          hostname,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          privateKey: PRIVATE_KEY,
          callbackURL: `${baseUrl}/auth/callback`,
          scope: SCOPE,
        },
        async (user: NdIdUser) => ({ sub: user.sub, name: user.data['myinfo.name'] }),
      ),
    );
    authenticator.serializeUser((user, done) => done(null, user));
    authenticator.deserializeUser((user: Express.User, done) => done(null, user));
    app.use(
      session({
        name: 'sid',
        secret: 'mockpass-session-secret',
        resave: false,
        saveUninitialized: false,
        cookie: { httpOnly: true, sameSite: 'lax', secure: false, path: '/' },
      }),
    );
    app.use(ndIdSession({ passport: authenticator }));
    app.use(
      '/auth',
      ndIdRouter({
        passport: authenticator,
        sessionCookieName: 'sid',
        renderFailure: (failure, _req, res) => {
          res.status(failure.status).json({ code: failure.code });
        },
      }),
    );
    app.get('/', (req, res) => {
      res.json({ user: req.user ?? null });
    });
    try {
      const browser = new Browser(baseUrl);
      const paths = await pathsDuring(async () => {
        const login = await browser.get('/auth/login');
        expect(login.status).toBe(302);
        const callback = await signInAtMockPass(login.location ?? '');
        expect(callback.href.startsWith(`${baseUrl}/auth/callback?`)).toBe(true);
        const done = await browser.get(callback.href);
        expect(done.text).toBe('');
        expect(done.status).toBe(302);
        expect(done.location).toBe('/');
      });
      expect(browser.jar.has('sid')).toBe(true);
      const home = JSON.parse((await browser.get('/')).text) as { user: { sub: string; name: string } | null };
      expect(home.user?.name).toBe(person.name);
      expect(home.user?.sub).toMatch(/^u=[0-9a-f-]{36}$/);
      // One source: every endpoint called is the spec's path, none the document's doubled-slash one.
      expect(paths.filter((p) => p !== '/v2/.well-known/openid-configuration')).toEqual([
        '/v2/oauth/authorize',
        '/v2/oauth/token',
        '/v2/.well-known/jwks.json',
        '/v2/oauth/userinfo',
      ]);
    } finally {
      await close(server);
    }
  });

  it('IdClient signs the person in: spec paths for every call, discovery read once, attributes decrypted', async () => {
    const redirectUri = 'http://127.0.0.1:9/auth/callback';
    const client = new IdClient({
      hostname,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: PRIVATE_KEY,
      redirectUri,
    });
    try {
      // As the spec's client library is used: the URL at once, the code redeemed at the callback.
      const pkce = generatePkcePair();
      const { url, nonce } = client.authorizationUrl({
        codeChallenge: pkce.codeChallenge,
        state: 'state-1',
        scope: SCOPE,
      });
      expect(url.startsWith(`${hostname}/v2/oauth/authorize?`)).toBe(true);
      const back = await signInAtMockPass(url);
      expect(back.searchParams.get('state')).toBe('state-1');
      const signedIn = await client.callback({
        code: back.searchParams.get('code') ?? '',
        codeVerifier: pkce.codeVerifier,
        nonce,
      });
      expect(signedIn.claims.iss).toBe(`${hostname}/v2`);
      const info = await client.userinfo({ sub: signedIn.sub, accessToken: signedIn.accessToken });
      expect(info.data['myinfo.name']).toBe(person.name);
      expect(info.data['myinfo.nric_number']).toBe(person.nric);
      expect(client.discoveryFetchCount).toBe(1);
      // Once the document is read, the next login's URL is still the spec's path.
      const next = client.authorizationUrl({ codeChallenge: pkce.codeChallenge }).url;
      expect(next.startsWith(`${hostname}/v2/oauth/authorize?`)).toBe(true);
    } finally {
      client.close();
    }
  });

  it('the official @opengovsg/sgid-client signs the same person in against the same MockPass', async () => {
    const redirectUri = 'http://127.0.0.1:9/auth/callback';
    const sgid = new SgidClient({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: PRIVATE_KEY,
      redirectUri,
      hostname,
    });
    const pkce = sgidPkce();
    const { url, nonce } = sgid.authorizationUrl({ state: 'state-2', scope: SCOPE, codeChallenge: pkce.codeChallenge });
    expect(url.startsWith(`${hostname}/v2/oauth/authorize?`)).toBe(true);
    const back = await signInAtMockPass(url);
    const { sub, accessToken } = await sgid.callback({
      code: back.searchParams.get('code') ?? '',
      nonce,
      codeVerifier: pkce.codeVerifier,
    });
    const info = await sgid.userinfo({ sub, accessToken });
    expect(info.data['myinfo.name']).toBe(person.name);
  });
});
