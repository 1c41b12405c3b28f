/**
 * The Fastify app of the adapter conformance suite: `ndIdFastify()` registered under `/auth` on
 * `@fastify/session` or `@fastify/secure-session` (optionally beside `@fastify/passport`), with
 * the same routes as the Express and fetch apps of test/sessions/harness.ts. Not a test file itself.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fastifyCookie from '@fastify/cookie';
import fastifyFormbody from '@fastify/formbody';
import { Authenticator } from '@fastify/passport';
import fastifySecureSession from '@fastify/secure-session';
import fastifySession from '@fastify/session';
import Fastify, { type FastifyInstance } from 'fastify';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { IdClient } from '../../src/client/id-client.js';
import { createBackchannelLogout } from '../../src/flow/backchannel-logout.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { ndIdFastify, type NdIdFastify } from '../../src/fastify.js';
import type { Logger } from '../../src/log.js';
import { testKeyPair } from '../helpers/keys.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  CountingStore,
  startTestProvider,
  type TestApp,
  type TestAppOptions,
} from '../sessions/harness.js';

/** Which session plugin, and whether `@fastify/passport` is registered too. */
export interface FastifyAppOptions extends TestAppOptions {
  /** `'without-regenerate'`: a session plugin of the test's own, whose sessions have no `regenerate()`. */
  plugin?: 'session' | 'secure-session' | 'without-regenerate';
  withPassport?: boolean;
  /** Register @fastify/formbody on the app before the plugin (its parsed form reaches the back-channel route). */
  formbody?: boolean;
  /** The plugin's logger (its failures, with their codes). */
  logger?: Logger;
}

/** A session store (Fastify's store interface, over express-session's MemoryStore) that counts writes and can fail. */
class FastifyStore {
  readonly inner = new CountingStore();
  failing = false;
  set(sid: string, session: unknown, cb: (err?: unknown) => void): void {
    if (this.failing) return cb(new Error('store down'));
    this.inner.set(sid, JSON.parse(JSON.stringify(session)), cb);
  }
  get(sid: string, cb: (err: unknown, session?: unknown) => void): void {
    if (this.failing) return cb(new Error('store down'));
    this.inner.get(sid, (err, data) => cb(err, data ?? null));
  }
  destroy(sid: string, cb: (err?: unknown) => void): void {
    if (this.failing) return cb(new Error('store down'));
    this.inner.destroy(sid, cb);
  }
}

/** Starts the Fastify app: `/auth` (the plugin, with back-channel logout), `/account`, `/api/me`, `/transfer` (300 s), `/me` (unguarded). */
export async function startFastifyApp(
  options: FastifyAppOptions = {},
): Promise<TestApp & { auth: NdIdFastify; fastifyStore: FastifyStore }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = options.provider ?? (await startTestProvider([`${baseUrl}/auth/callback`], options.signingKey));
  const clock = provider.provider.clock;
  const sessions = createSessionPolicy({ ...options.policy, clock });
  const client = new IdClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: testKeyPair('sessions').privateKeyPem,
    hostname: provider.baseUrl,
    redirectUri: `${baseUrl}/auth/callback`,
    clock,
  });
  const replayStore = options.replayStore ?? createMemoryReplayStore();
  const auth = ndIdFastify({
    client,
    clock,
    sessions,
    loginPath: '/auth/login',
    logoutRedirect: '/signed-out',
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    backchannelLogout: createBackchannelLogout({ client, sessions, replayStore }),
  });
  const app = Fastify({
    serverFactory: (handler) => {
      server.on('request', handler);
      return server;
    },
  });
  const fastifyStore = await registerSession(app, options);
  if (options.formbody === true) await app.register(fastifyFormbody);
  await app.register(auth.plugin as never, { prefix: '/auth' });
  const signedIn = (request: object) => auth.signedIn(request);
  app.get('/account', { preHandler: auth.requireSignIn() as never }, async (request) => signedIn(request));
  app.get('/api/me', { preHandler: auth.requireSignIn({ api: true }) as never }, async (request) => ({
    user: signedIn(request)?.user,
  }));
  app.get('/transfer', { preHandler: auth.requireRecentSignIn(300) as never }, async () => 'transfer form');
  app.get('/me', async (request) => ({ user: (await auth.user(request as never)) ?? null }));
  await app.ready();
  return {
    baseUrl,
    provider,
    sessions,
    auth,
    fastifyStore,
    close: async () => {
      server.closeAllConnections();
      await app.close();
      if (options.provider === undefined) await provider.close();
    },
  };
}

/** Registers the cookie and session plugins (and @fastify/passport when asked); the store of @fastify/session. */
async function registerSession(app: FastifyInstance, options: FastifyAppOptions): Promise<FastifyStore> {
  const fastifyStore = new FastifyStore();
  await app.register(fastifyCookie);
  if (options.plugin === 'without-regenerate') {
    registerSessionWithoutRegenerate(app);
  } else if (options.plugin === 'secure-session') {
    await app.register(fastifySecureSession, { key: randomBytes(32), cookie: { path: '/', httpOnly: true } });
  } else {
    await app.register(fastifySession, {
      secret: 'fastify-session-secret-0123456789-abcdef',
      cookie: { secure: false },
      saveUninitialized: false,
      store: fastifyStore as never,
    });
  }
  if (options.withPassport === true) {
    const passport = new Authenticator();
    passport.registerUserSerializer(async (user: unknown) => user);
    passport.registerUserDeserializer(async (user: unknown) => user);
    await app.register(passport.initialize());
    await app.register(passport.secureSession());
  }
  return fastifyStore;
}

/** A session plugin of the test's own: sessions kept in memory under a cookie, with no `regenerate()`. */
function registerSessionWithoutRegenerate(app: FastifyInstance): void {
  const kept = new Map<string, Map<string, unknown>>();
  app.decorateRequest('session', null as never);
  app.addHook('onRequest', async (request, reply) => {
    const id = /plain-sid=([\w-]+)/.exec(request.headers.cookie ?? '')?.[1] ?? randomUUID();
    const data = kept.get(id) ?? new Map<string, unknown>();
    kept.set(id, data);
    reply.header('set-cookie', `plain-sid=${id}; Path=/; HttpOnly`);
    (request as { session: unknown }).session = {
      get: (key: string) => data.get(key),
      set: (key: string, value: unknown) => (value === undefined ? data.delete(key) : data.set(key, value)),
      save: async () => undefined,
      destroy: async () => kept.delete(id),
    };
  });
}
