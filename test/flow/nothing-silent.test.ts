/**
 * Nothing fails silently on the first run: over real HTTP on 127.0.0.1,
 * - in development, a login to a provider that does not answer ends on the failure page (502)
 *   whose developer box names the URL tried and the likely cause, and logs one line saying the
 *   same; once the provider answers, the next login goes to it;
 * - a provider that stops before the callback: the failure is logged with the token endpoint's
 *   URL (no query, no secret);
 * - an unknown client id is named, escaped, on the provider's page and in its log.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCookieSession, createFetchLogin, IdClient } from '../../src/fetch.js';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { authorizeQuery, pkce, startTestProvider } from '../helpers/provider-fixtures.js';
import { freePort } from '../helpers/ports.js';
import { approve, Browser, closeServer, recordingLogger } from '../helpers/harness.js';
import { testKeyPair } from '../helpers/keys.js';

const keys = testKeyPair('nothing-silent');
const clientSecret = 'nothing-silent-secret-value-0123456789';
const savedEnv = process.env.NODE_ENV;

beforeAll(() => {
  // What `npx tsx app.ts` runs with: NODE_ENV unset (the test runner sets it to "test").
  delete process.env.NODE_ENV;
});
afterAll(() => {
  process.env.NODE_ENV = savedEnv;
});

/** An app on the fetch handlers, served by node:http, logging into `log`. */
async function startApp(
  providerPort: number,
  appPort: number,
  logger: ReturnType<typeof recordingLogger>['logger'],
): Promise<{ server: Server; origin: string }> {
  const auth = createFetchLogin({
    client: new IdClient({
      hostname: `http://127.0.0.1:${providerPort}`,
      clientId: 'silent-app',
      clientSecret,
      privateKey: keys.privateKeyPem,
      redirectUri: `http://127.0.0.1:${appPort}/auth/callback`,
      logger,
    }),
    session: createCookieSession({ secret: 'a session secret of at least thirty-two characters' }),
    loginPath: '/auth/login',
    logger,
  });
  const server = createServer(async (req, res) => {
    const request = new Request(`http://127.0.0.1:${appPort}${req.url}`, {
      headers: req.headers as Record<string, string>,
    });
    const path = new URL(request.url).pathname;
    const answer =
      path === '/auth/login'
        ? await auth.login(request)
        : path === '/auth/callback'
          ? await auth.callback(request)
          : Response.json({ user: (await auth.user(request)) ?? null });
    const headers: Record<string, string | string[]> = Object.fromEntries(
      [...answer.headers].filter(([name]) => name !== 'set-cookie'),
    );
    const setCookies = answer.headers.getSetCookie();
    if (setCookies.length > 0) headers['set-cookie'] = setCookies;
    res.writeHead(answer.status, headers);
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(appPort, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${appPort}` };
}

describe('a provider that does not answer, in development', () => {
  let app: { server: Server; origin: string } | undefined;
  let provider: StartedProvider | undefined;
  afterAll(async () => {
    if (app) await closeServer(app.server);
    await provider?.close();
  });

  it('the first login shows the URL tried and the likely cause, and logs one line; after the provider starts, logins go to it', async () => {
    const providerPort = await freePort();
    const appPort = await freePort();
    const log = recordingLogger();
    app = await startApp(providerPort, appPort, log.logger);
    const authorizeUrl = `http://127.0.0.1:${providerPort}/v2/oauth/authorize`;
    const tried = `http://127.0.0.1:${providerPort}/.well-known/openid-configuration`;

    const page = await new Browser(app.origin).get('/auth/login');
    expect(page.status).toBe(502);
    expect(page.text).toContain('<code>provider_not_answering</code>');
    expect(page.text).toContain(
      `The identity service did not answer at http://127.0.0.1:${providerPort} (tried ${tried}: ECONNREFUSED)`,
    );
    expect(page.text).toContain(
      'it is not started, or ND_ID_HOSTNAME (the hostname or issuer option) names another host or port',
    );
    expect(page.text).not.toMatch(/state=|code_challenge|nonce=/);
    const lines = log
      .text()
      .split('\n')
      .filter((line) => line.includes(tried));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error .*it is not started, or ND_ID_HOSTNAME/);
    expect(log.text()).not.toContain(clientSecret);

    // The provider starts on that port: the next login is sent to it.
    provider = await startProvider({
      port: providerPort,
      clients: [
        {
          clientId: 'silent-app',
          clientSecret,
          redirectUris: [`${app.origin}/auth/callback`],
          publicKey: keys.publicKeyPem,
        },
      ],
      autoApprove: DEFAULT_PERSONAS[0]!.id,
    });
    const next = await new Browser(app.origin).get('/auth/login');
    expect(next.status).toBe(302);
    expect(next.location).toMatch(new RegExp(`^${authorizeUrl}\\?`));
  });

  it('is not checked in production: the login redirects as before', async () => {
    process.env.NODE_ENV = 'production';
    try {
      const appPort = await freePort();
      const quiet = await startApp(await freePort(), appPort, recordingLogger().logger);
      try {
        expect((await new Browser(quiet.origin).get('/auth/login')).status).toBe(302);
      } finally {
        await closeServer(quiet.server);
      }
    } finally {
      delete process.env.NODE_ENV;
    }
  });
});

describe('a provider that stops before the callback', () => {
  it('the log names the token endpoint it tried, without query values or secrets', async () => {
    const appPort = await freePort();
    const providerPort = await freePort();
    const log = recordingLogger();
    const app = await startApp(providerPort, appPort, log.logger);
    const provider = await startProvider({
      port: providerPort,
      clients: [
        {
          clientId: 'silent-app',
          clientSecret,
          redirectUris: [`${app.origin}/auth/callback`],
          publicKey: keys.publicKeyPem,
        },
      ],
      autoApprove: DEFAULT_PERSONAS[0]!.id,
    });
    try {
      const browser = new Browser(app.origin);
      const login = await browser.get('/auth/login');
      const callbackUrl = await approve(new URL(login.location as string));
      await provider.close();
      const page = await browser.get(callbackUrl.href);
      expect(page.status).toBe(502);
      const tokenUrl = `http://127.0.0.1:${providerPort}/v2/oauth/token`;
      // Refused on a new connection, reset on one the app kept alive from before the provider stopped.
      expect(log.text()).toContain(`The token endpoint (${tokenUrl}) could not be reached (ECONN`);
      expect(log.text()).toMatch(/could not be reached \(ECONN(REFUSED|RESET)\)\./);
      expect(log.text()).not.toContain(callbackUrl.searchParams.get('code')!);
      expect(log.text()).not.toContain(clientSecret);
    } finally {
      await closeServer(app.server);
    }
  });
});

describe('an unknown client id', () => {
  let started: StartedProvider;
  const lines: string[] = [];
  beforeAll(async () => {
    started = await startTestProvider({ autoApprove: true, log: (line) => lines.push(line) });
  });
  afterAll(() => started.close());

  it("is named, escaped, on the provider's page and in its log", async () => {
    const sent = 'my-app"><script>alert(1)</script>';
    const res = await fetch(
      `${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge, { client_id: sent })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain(
      'The client_id &quot;my-app\\&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&quot; is not registered with this service',
    );
    expect(html).not.toContain('<script>alert(1)');
    expect(lines.join('\n')).toContain(
      `authorize: refused: invalid_client: client_id ${JSON.stringify(sent)} is not registered`,
    );
  });
});
