import session from 'express-session';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import {
  createExampleApp,
  LOGIN_SESSION_MAX_AGE_MS,
  SESSION_MAX_AGE_MS,
  type ExampleAppConfig,
} from '../../example-app/app.js';
import { DEFAULT_SCOPE } from '../../example-app/config.js';
import { freePort } from '../helpers/ports.js';
import { testKeyPair } from '../helpers/keys.js';
import { startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

/** A memory store that can be switched off, as a session store outage. */
class SwitchableStore extends session.MemoryStore {
  down = false;
  /** Reads work, writes fail: the store goes away in the middle of a request. */
  failWrites = false;
  override get(sid: string, cb: (err: unknown, data?: session.SessionData | null) => void): void {
    if (this.down) cb(new Error('connection refused'));
    else super.get(sid, cb);
  }
  override set(sid: string, data: session.SessionData, cb?: (err?: unknown) => void): void {
    if (this.down || this.failWrites) cb?.(new Error('connection refused'));
    else super.set(sid, data, cb);
  }
}

function config(overrides: Partial<ExampleAppConfig> = {}, hostname = 'https://id.example'): ExampleAppConfig {
  return {
    provider: {
      hostname,
      clientId: 'rp',
      clientSecret: 'client-secret-value',
      privateKey: testKeyPair().privateKeyPem,
      redirectUri: 'http://localhost:3000/auth/callback',
      scope: DEFAULT_SCOPE,
    },
    sessionSecrets: ['x'.repeat(40)],
    log: () => undefined,
    ...overrides,
  };
}

describe('example app pages', () => {
  it('the home page shows a Log in button to a visitor', async () => {
    const { app } = createExampleApp(config());
    const res = await request(app).get('/');
    expect(res.status).toBe(200);
    expect(res.text).toContain('>Log in</a>');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('the profile page sends a visitor who is not signed in to log in first', async () => {
    const { app } = createExampleApp(config());
    const res = await request(app).get('/profile');
    expect(res.status).toBe(303);
    expect(res.headers.location).toBe('/auth/login?returnTo=%2Fprofile');
  });

  it('an unknown address shows a "Page not found" page', async () => {
    const { app } = createExampleApp(config());
    const res = await request(app).get('/nowhere');
    expect(res.status).toBe(404);
    expect(res.text).toContain('<h1>Page not found</h1>');
  });

  it('the session cookie is HttpOnly and SameSite=Lax, and not Secure over plain http', async () => {
    const { app } = createExampleApp(config());
    const res = await request(app).get('/auth/login');
    expect(res.status).toBe(302);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^example-app\.sid=/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Lax');
    expect(cookie).not.toContain('Secure');
  });

  it('the session cookie is Secure when the site is served over https through a trusted proxy', async () => {
    const https = config({ trustProxy: 1 });
    https.provider.redirectUri = 'https://rp.example/auth/callback';
    const { app } = createExampleApp(https);
    const res = await request(app).get('/auth/login').set('X-Forwarded-Proto', 'https');
    expect(res.status).toBe(302);
    expect(String(res.headers['set-cookie'])).toContain('Secure');
  });

  it('when the session store fails, a visitor sees a "Temporarily unavailable" 503 page', async () => {
    const store = new SwitchableStore();
    const { app } = createExampleApp(config({ store }));
    const agent = request.agent(app);
    expect((await agent.get('/auth/login')).status).toBe(302); // a session now exists

    store.down = true;
    const res = await agent.get('/profile');
    expect(res.status).toBe(503);
    expect(res.text).toContain('<h1>Temporarily unavailable</h1>');
    expect(res.text).not.toContain('connection refused');

    store.down = false;
    expect((await agent.get('/')).status).toBe(200);
  });

  it('a session store failing at the callback shows the 503 page and is logged in one line, with no stack trace', async () => {
    const started = await startTestProvider({ autoApprove: true });
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const store = new SwitchableStore();
      const appConfig = config({ store }, started.baseUrl);
      appConfig.provider.clientId = TEST_CLIENT.clientId;
      appConfig.provider.clientSecret = TEST_CLIENT.clientSecret;
      appConfig.provider.redirectUri = TEST_CLIENT.redirectUri;
      const { app } = createExampleApp(appConfig);
      app.set('env', 'production'); // Express prints unhandled errors outside NODE_ENV=test
      const browser = request.agent(app);
      const login = await browser.get('/auth/login');
      const authorize = await fetch(login.headers.location!, { redirect: 'manual' });
      const back = new URL(authorize.headers.get('location')!);

      store.failWrites = true; // the store goes away between the login and its callback
      const res = await browser.get(`${back.pathname}${back.search}`);
      expect(res.status).toBe(503);
      expect(res.text).toContain('<h1>Temporarily unavailable</h1>');
      await new Promise((resolve) => setTimeout(resolve, 50)); // express-session saves again after the answer
      const lines = printed.mock.calls.map((call) => call.map(String).join(' '));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^passport-nd-id error: .*"code":"session_store_unavailable"/);
      expect(lines[0]).not.toMatch(/\n\s+at /);
    } finally {
      printed.mockRestore();
      await started.close();
    }
  });

  it('when the identity service cannot be reached at the callback, a 502 "Sign-in is unavailable" page is shown', async () => {
    const closedPort = await freePort();
    const { app } = createExampleApp(config({}, `http://127.0.0.1:${closedPort}`));
    const agent = request.agent(app);
    const login = await agent.get('/auth/login');
    const state = new URL(login.headers.location as string).searchParams.get('state');
    expect(state).toBeTruthy();

    const res = await agent.get(`/auth/callback?code=some-code&state=${state}`);
    expect(res.status).toBe(502);
    expect(res.text).toContain('<h1>Sign-in is unavailable</h1>');
    expect(res.text).toContain('href="/"');
  });
});

describe('session cookie', () => {
  it('behind a TLS proxy the session cookie is __Host- prefixed, secure, path / and has no Domain; on plain http it is not prefixed', async () => {
    const httpsConfig = config({ trustProxy: 1 });
    httpsConfig.provider.redirectUri = 'https://app.example/auth/callback';
    const overHttps = await request(createExampleApp(httpsConfig).app)
      .get('/auth/login')
      .set('X-Forwarded-Proto', 'https');
    const cookie = ([] as string[]).concat(overHttps.headers['set-cookie'] ?? []).find((c) => c.startsWith('__Host-'));
    expect(cookie).toMatch(/^__Host-example-app\.sid=/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; Path=\/;/);
    expect(cookie).not.toMatch(/Domain=/i);

    const overHttp = await request(createExampleApp(config()).app).get('/auth/login');
    expect(([] as string[]).concat(overHttp.headers['set-cookie'] ?? []).join()).toMatch(/^example-app\.sid=/);
  });
});

describe('session lifetime', () => {
  /** Seconds from now until the Expires of the session cookie set by a response. */
  function cookieLifetimeS(res: request.Response): number {
    const header = ([] as string[])
      .concat(res.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith('example-app.sid='));
    const expires = header && /Expires=([^;]+)/.exec(header)?.[1];
    if (!expires) throw new Error('no session cookie with an expiry was set');
    return (Date.parse(expires) - Date.now()) / 1000;
  }

  it('a session made only to start a login expires with the login, and signing in gives it the full 8 hours', async () => {
    const started = await startTestProvider({ autoApprove: true });
    try {
      // The example app's callback path is where TEST_CLIENT's registered redirect URI points.
      const appConfig = config({}, started.baseUrl);
      appConfig.provider.clientId = TEST_CLIENT.clientId;
      appConfig.provider.clientSecret = TEST_CLIENT.clientSecret;
      appConfig.provider.redirectUri = TEST_CLIENT.redirectUri;
      const rp = createExampleApp(appConfig).app;
      const browser = request.agent(rp);

      const login = await browser.get('/auth/login');
      expect(login.status).toBe(302);
      const lifetime = cookieLifetimeS(login);
      expect(lifetime).toBeGreaterThan(LOGIN_SESSION_MAX_AGE_MS / 1000 - 60);
      expect(lifetime).toBeLessThanOrEqual(LOGIN_SESSION_MAX_AGE_MS / 1000 + 1);

      const authorize = await fetch(login.headers.location!, { redirect: 'manual' });
      const back = new URL(authorize.headers.get('location')!);
      const callback = await browser.get(`${back.pathname}${back.search}`);
      expect(callback.status).toBe(302);
      expect(callback.headers.location).toBe('/profile');
      expect(cookieLifetimeS(callback)).toBeGreaterThan(SESSION_MAX_AGE_MS / 1000 - 60);
    } finally {
      await started.close();
    }
  });
});

describe('example app in the FAPI 2.0 profile (ND_ID_PROFILE=fapi2)', () => {
  it('serves its public keys at /auth/jwks.json, pushes the login, and its default context message (ND_ID_CONTEXT_MESSAGE) reaches the phone page', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const { startProvider } = await import('../../src/provider/index.js');
    const keys = testKeyPair();
    const pem = (k: import('node:crypto').KeyObject): string => k.export({ format: 'pem', type: 'pkcs8' }).toString();
    const assertionKey = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
    const port = await freePort();
    const redirectUri = `http://127.0.0.1:${port}/auth/callback`;
    const appConfig = config({}, 'http://127.0.0.1:1');
    appConfig.provider = {
      hostname: 'http://127.0.0.1:1',
      clientId: 'fapi-example',
      privateKey: keys.privateKeyPem,
      redirectUri,
      scope: 'openid profile.name',
      profile: 'fapi2',
      clientAssertionKey: assertionKey,
      contextMessage: 'Sign in to the example app',
    };
    // The keys the app publishes are what the provider registers.
    const jwks = (await request(createExampleApp(appConfig).app).get('/auth/jwks.json')).body as {
      keys: { use: string; d?: string }[];
    };
    expect(jwks.keys.map((k) => k.use)).toEqual(['sig', 'enc']);
    expect(jwks.keys.some((k) => k.d !== undefined)).toBe(false);
    const provider = await startProvider({
      clients: [
        {
          clientId: 'fapi-example',
          redirectUris: [redirectUri],
          publicKey: keys.publicKeyPem,
          profile: 'fapi2',
          jwks,
          idTokenEncryptedResponseAlg: 'RSA-OAEP-256',
          idTokenEncryptedResponseEnc: 'A256GCM',
        },
      ],
    } as Parameters<typeof startProvider>[0]);
    try {
      appConfig.provider.hostname = provider.baseUrl;
      const { app } = createExampleApp(appConfig);
      const browser = request.agent(app);
      const login = await browser.get('/auth/login');
      expect(login.status).toBe(302);
      const authorize = new URL(login.headers.location as string);
      expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
      const page = await (await fetch(authorize)).text();
      const phoneUrl = (/data-qr-payload="([^"]+)"/.exec(page)?.[1] ?? '').replace(/&amp;/g, '&');
      expect(await (await fetch(phoneUrl)).text()).toContain('Sign in to the example app');
    } finally {
      await provider.close();
    }
  });
});
