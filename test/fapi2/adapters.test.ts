/**
 * The FAPI 2.0 login through the other adapters, over real HTTP against the provider: the fetch
 * handlers (createFetchLogin) in a Hono app with the sealed cookie session, which then carries the
 * login's DPoP private key (sealed) between the login and the callback; Fastify with
 * @fastify/passport driving NdIdStrategy over @fastify/secure-session; and IdClient alone
 * answering a stale-nonce challenge at userinfo.
 */
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { randomBytes } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import { Authenticator } from '@fastify/passport';
import fastifySecureSession from '@fastify/secure-session';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import { createFetchLogin } from '../../src/adapters/fetch.js';
import { generatePkcePair } from '../../src/pkce.js';
import { startProvider, type StartedProvider } from '../helpers/provider.js';
import { closeServer, listenOnLoopback } from '../helpers/harness.js';
import {
  appKeys,
  FAPI_CLIENT_ID,
  fapiIdClient,
  fapiRegistration,
  registeredJwks,
  walkFapiLogin,
  fapiClientOptions,
  idClientFapiLogin,
} from './harness.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('createFetchLogin (Hono, sealed cookie session) in the FAPI 2.0 profile', () => {
  it('signs in: pushed request, DPoP key kept sealed in the cookie between login and callback, attributes read', async () => {
    const keys = appKeys();
    const app = new Hono();
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
    const baseUrl = await listenOnLoopback(server);
    const provider: StartedProvider = await startProvider({
      autoApprove: true,
      clients: [fapiRegistration(keys, `${baseUrl}/auth/callback`, `${baseUrl}/auth/jwks.json`)],
    } as Parameters<typeof startProvider>[0]);
    cleanup = async () => {
      await provider.close();
      await closeServer(server);
    };
    const client = fapiIdClient(keys, provider.baseUrl, `${baseUrl}/auth/callback`);
    const auth = createFetchLogin({
      client,
      session: createCookieSession({ secret: 'a-cookie-secret-of-at-least-32-characters!' }),
      scope: 'openid profile.name',
    });
    app.get('/auth/login', (c) => auth.login(c.req.raw, { authenticationContextMessage: 'Sign in to the Hono test' }));
    app.get('/auth/callback', (c) => auth.callback(c.req.raw));
    app.get('/auth/jwks.json', () => auth.jwks());
    app.get('/me', async (c) => c.json((await auth.user(c.req.raw)) ?? null));
    expect((await (await fetch(`${baseUrl}/auth/jwks.json`)).json()) as unknown).toEqual(registeredJwks(keys));

    const { loginCookies, me } = await walkFapiLogin(baseUrl);
    // The sealed cookie holds the pending login, DPoP key included: no key material is readable in it.
    expect(loginCookies).not.toMatch(/"d"|crv|P-256/);
    expect((me as { data: Record<string, string> }).data['profile.name']).toBe(
      provider.provider.personas[0]!['profile.name'],
    );
  });
});

describe('IdClient against the provider: a stale DPoP nonce at userinfo', () => {
  it("answers the resource server's 401 WWW-Authenticate use_dpop_nonce challenge with one retry and reads the attributes", async () => {
    const keys = appKeys();
    let offset = 0;
    const callback = 'http://127.0.0.1:3999/auth/callback';
    const provider = await startProvider({
      autoApprove: true,
      dpopNonce: true,
      clock: () => Date.now() + offset,
      clients: [fapiRegistration(keys, callback)],
    } as Parameters<typeof startProvider>[0]);
    cleanup = () => provider.close();
    const challenges: string[] = [];
    provider.server.on('request', (req, res) => {
      res.on('finish', () => {
        if (res.statusCode === 401) challenges.push(String(req.url));
      });
    });
    const client = fapiIdClient(keys, provider.baseUrl, callback, { clock: () => Date.now() + offset });
    const { tokens, dpopKey } = await idClientFapiLogin(client, 'state-1');
    expect(tokens.tokenType?.toLowerCase()).toBe('dpop');
    // Another client of the app (its own nonce memory) pushes logins a minute apart: the provider
    // rotates its nonce twice, so the one this client remembers is no longer accepted.
    const other = fapiIdClient(keys, provider.baseUrl, callback, { clock: () => Date.now() + offset });
    for (let i = 0; i < 2; i++) {
      offset += 61_000;
      await other.pushAuthorizationRequest({
        codeChallenge: generatePkcePair().codeChallenge,
        state: `other-${i}`,
        dpopKey: (await other.dpopKeyForLogin()).key,
      });
    }
    other.close();
    const info = await client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken, dpopKey });
    expect(info.data['profile.name']).toBe(provider.provider.personas[0]!['profile.name']);
    expect(challenges).toEqual(['/v2/oauth/userinfo']);
    client.close();
  });
});

describe('Fastify with @fastify/passport and @fastify/secure-session in the FAPI 2.0 profile', () => {
  it('signs in through NdIdStrategy: pushed request, DPoP key in the sealed session, attributes read', async () => {
    const keys = appKeys();
    const app = Fastify();
    await app.register(fastifyCookie);
    await app.register(fastifySecureSession, {
      key: randomBytes(32),
      cookie: { path: '/', httpOnly: true, sameSite: 'lax' },
    });
    const passport = new Authenticator({ clearSessionIgnoreFields: [`nd-id:${FAPI_CLIENT_ID}`] });
    passport.registerUserSerializer(async (user: { sub: string; data: Record<string, string> }) => ({
      sub: user.sub,
      data: user.data,
    }));
    passport.registerUserDeserializer(async (user: unknown) => user);
    await app.register(passport.initialize());
    await app.register(passport.secureSession());
    app.get('/auth/login', async (request, reply) => {
      await passport
        .authenticate('nd-id', { authenticationContextMessage: 'Sign in to the Fastify test' } as object)
        .call(app, request, reply);
    });
    app.get('/auth/callback', async (request, reply) => {
      await passport
        .authenticate('nd-id', async (req, res, err, user) => {
          if (err !== null || !user) return res.code(err !== null ? 500 : 401).send({ failed: true });
          await req.logIn(user);
          return res.redirect('/me');
        })
        .call(app, request, reply);
    });
    app.get('/me', async (request) => ({ user: request.user ?? null }));
    const baseUrl = await app.listen({ host: '127.0.0.1', port: 0 });
    const provider = await startProvider({
      autoApprove: true,
      clients: [fapiRegistration(keys, `${baseUrl}/auth/callback`)],
    } as Parameters<typeof startProvider>[0]);
    cleanup = async () => {
      await provider.close();
      await app.close();
    };
    passport.use(
      'nd-id',
      new NdIdStrategy({
        ...fapiClientOptions(keys, provider.baseUrl, `${baseUrl}/auth/callback`),
        callbackURL: `${baseUrl}/auth/callback`,
      }) as never,
    );
    const { me } = await walkFapiLogin(baseUrl);
    expect((me as { user: { data: Record<string, string> } | null }).user?.data['profile.name']).toBe(
      provider.provider.personas[0]!['profile.name'],
    );
  });
});
