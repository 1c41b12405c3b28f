/**
 * The fetch handlers of the adapter conformance suite in a real Hono app on Node, with the sealed
 * cookie session and the routes of test/sessions/harness.ts. Not a test file itself.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import { createFetchLogin, type FetchLogin } from '../../src/adapters/fetch.js';
import { IdClient } from '../../src/client/id-client.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { testKeyPair } from '../helpers/keys.js';
import { CLIENT_ID, CLIENT_SECRET, startTestProvider, type TestApp, type TestAppOptions } from '../sessions/harness.js';

/** Starts the Hono app: `/auth/login`, `/auth/callback`, `POST /auth/logout`, `/account`, `/api/me`, `/transfer` (300 s), `/me`. */
export async function startHonoApp(options: TestAppOptions = {}): Promise<TestApp & { auth: FetchLogin }> {
  let handle: (request: Request) => Response | Promise<Response> = () => new Response('starting', { status: 503 });
  const server = createAdaptorServer({ fetch: (request: Request) => handle(request) }) as Server;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = options.provider ?? (await startTestProvider([`${baseUrl}/auth/callback`]));
  const clock = provider.provider.clock;
  const sessions = createSessionPolicy({ ...options.policy, clock });
  const auth = createFetchLogin({
    client: new IdClient({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: testKeyPair('sessions').privateKeyPem,
      hostname: provider.baseUrl,
      redirectUri: `${baseUrl}/auth/callback`,
      clock,
    }),
    clock,
    session: createCookieSession({ secret: 'sessions-test-cookie-secret-0123456789abcdef', clock }),
    loginPath: '/auth/login',
    sessions,
  });
  const app = new Hono();
  app.get('/auth/login', (c) => auth.login(c.req.raw));
  app.get('/auth/callback', (c) => auth.callback(c.req.raw));
  app.post('/auth/logout', (c) => auth.logout(c.req.raw, '/signed-out'));
  app.get('/account', (c) => auth.requireSignIn(c.req.raw, ({ user, signIn }) => Response.json({ user, signIn })));
  app.get('/api/me', (c) => auth.requireSignIn(c.req.raw, ({ user }) => Response.json({ user }), { api: true }));
  app.get('/transfer', (c) => auth.requireRecentSignIn(c.req.raw, 300, () => new Response('transfer form')));
  app.get('/me', async (c) => Response.json({ user: (await auth.user(c.req.raw)) ?? null }));
  handle = app.fetch;
  return {
    baseUrl,
    provider,
    sessions,
    auth,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (options.provider === undefined) await provider.close();
    },
  };
}
