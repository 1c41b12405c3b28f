/**
 * Every failed callback is explained: the log line carries a diagnosis code, cause and fix and
 * the reference shown on the page; outside production the page has a box for the developer.
 * Each case is produced for real, with real cookies over loopback HTTP.
 */
import session from 'express-session';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import {
  approve,
  CLIENT_SECRET,
  expectSafePage,
  followCallback,
  startLogin,
  startRp,
  type Rp,
  type RpOptions,
} from './harness.js';

interface Captured {
  level: string;
  event: Record<string, unknown>;
  message: string;
}

function capturingLogger(): {
  logger: Record<'debug' | 'info' | 'warn' | 'error', (o: unknown, m: unknown) => void>;
  lines: Captured[];
} {
  const lines: Captured[] = [];
  const at = (level: string) => (event: unknown, message: unknown) => {
    lines.push({ level, event: event as Record<string, unknown>, message: String(message) });
  };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

let rp: Rp | undefined;
afterEach(async () => {
  await rp?.close();
  rp = undefined;
});

async function rpWithLog(options: RpOptions = {}): Promise<{ rp: Rp; lines: Captured[] }> {
  const { logger, lines } = capturingLogger();
  rp = await startRp({ ...options, strategy: { ...options.strategy, logger } });
  return { rp, lines };
}

function diagnosed(lines: Captured[]): Captured {
  const line = lines.find((l) => typeof l.event.diagnosis === 'string');
  expect(line, `a diagnosed log line in ${JSON.stringify(lines)}`).toBeDefined();
  return line as Captured;
}

/** The page shows the same reference as the log line, and the developer box with the diagnosis code. */
function expectExplained(
  res: { status: number; text: string; headers: Record<string, string> },
  line: Captured,
  code: string,
): void {
  expect(line.event.diagnosis).toBe(code);
  expect(typeof line.event.reference).toBe('string');
  expect(res.text).toContain(`<code>${String(line.event.reference)}</code>`);
  expect(res.text).toContain('For the developer');
  expect(res.text).toContain(`<code>${code}</code>`);
}

describe('diagnosis of failed callbacks, over real HTTP and cookies', () => {
  it('cookie_not_sent: the callback comes back in a browser that has no session cookie', async () => {
    const { rp, lines } = await rpWithLog();
    const back = await approve(await startLogin(rp.browser()));
    const res = await followCallback(rp.browser(), back);
    expectSafePage(res, 403);
    expectExplained(res, diagnosed(lines), 'cookie_not_sent');
    expect(diagnosed(lines).level).toBe('warn');
    expect(rp.tokenCalls()).toBe(0);
  });

  it('host_mismatch: the login started on localhost, the callback arrives on 127.0.0.1', async () => {
    const { rp, lines } = await rpWithLog();
    const port = new URL(rp.baseUrl).port;
    const started = await request(rp.baseUrl).get('/auth/login').set('Host', `localhost:${port}`);
    const back = await approve(new URL(started.headers.location as string));
    const res = await followCallback(rp.browser(), back);
    expectExplained(res, diagnosed(lines), 'host_mismatch');
    expect(String(diagnosed(lines).event.cause)).toContain(`localhost:${port}`);
  });

  it('host_mismatch never repeats a Host header that is not a host (text planted by a requester)', async () => {
    const { rp, lines } = await rpWithLog();
    const planted = 'app.example. URGENT: call +1 555 0100 or go to https://evil.example/restore';
    const started = await request(rp.baseUrl).get('/auth/login').set('Host', planted);
    const state = new URL(started.headers.location as string).searchParams.get('state');
    const res = await rp.browser().get(`/auth/callback?code=anything&state=${state}`);
    expect(res.status).toBe(403);
    expect(res.text).not.toContain('URGENT');
    expect(JSON.stringify(lines)).not.toContain('URGENT');
    expect(String(diagnosed(lines).event.cause)).toContain('an unrecognised host');
  });

  it('cookie_samesite_strict: a SameSite=Strict session cookie does not come back from the service', async () => {
    const { rp, lines } = await rpWithLog({ sessionCookie: { sameSite: 'strict' } });
    const back = await approve(await startLogin(rp.browser()));
    // The browser withholds a Strict cookie on the cross-site redirect: a request without it.
    const res = await request(rp.baseUrl).get(back.pathname + back.search);
    expectExplained(res, diagnosed(lines), 'cookie_samesite_strict');
  });

  it('cookie_secure_over_http: a secure cookie is never stored over plain http', async () => {
    const { rp, lines } = await rpWithLog({ sessionCookie: { secure: true } });
    const browser = rp.browser();
    const started = await browser.get('/auth/login');
    expect(started.headers['set-cookie']).toBeUndefined(); // express-session drops it silently
    const res = await followCallback(browser, await approve(new URL(started.headers.location as string)));
    expectExplained(res, diagnosed(lines), 'cookie_secure_over_http');
  });

  it('cookie_secure_behind_proxy: X-Forwarded-Proto https without trust proxy', async () => {
    const { rp, lines } = await rpWithLog({ sessionCookie: { secure: true } });
    const browser = rp.browser();
    const started = await browser.get('/auth/login').set('X-Forwarded-Proto', 'https');
    const back = await approve(new URL(started.headers.location as string));
    const res = await browser.get(back.pathname + back.search).set('X-Forwarded-Proto', 'https');
    expectExplained(res, diagnosed(lines), 'cookie_secure_behind_proxy');
  });

  it('session_not_in_store: the cookie comes back but the store lost the session', async () => {
    const store = new session.MemoryStore();
    const { rp, lines } = await rpWithLog({ sessionStore: store });
    const browser = rp.browser();
    const back = await approve(await startLogin(browser));
    await new Promise<void>((resolve) => store.clear(() => resolve()));
    const res = await followCallback(browser, back);
    expectExplained(res, diagnosed(lines), 'session_not_in_store');
  });

  it('state_already_used: a replayed callback after a completed sign-in, in a session that is not signed in', async () => {
    // Without passport.session() the request carries no user, so the replay is refused and explained.
    const { rp, lines } = await rpWithLog({ passportSession: false });
    const browser = rp.browser();
    const back = await approve(await startLogin(browser));
    expect((await followCallback(browser, back)).status).toBe(302);
    const res = await followCallback(browser, back);
    expectExplained(res, diagnosed(lines), 'state_already_used');
    expect(rp.tokenCalls()).toBe(1);
  });

  it('a person still signed in who replays the callback (back button) is sent on to their returnTo, not shown a failure', async () => {
    const { rp, lines } = await rpWithLog();
    const browser = rp.browser();
    const back = await approve(await startLogin(browser, '/auth/login?returnTo=%2Faccount'));
    expect((await followCallback(browser, back)).headers.location).toBe('/account');
    const replay = await followCallback(browser, back);
    expect(replay.status).toBe(302);
    expect(replay.headers.location).toBe('/account');
    expect(replay.headers['cache-control']).toBe('no-store');
    expect(rp.tokenCalls()).toBe(1);
    expect((await browser.get('/me')).status).toBe(200);
    // Still explained in the log, for whoever wonders why the service was not called.
    expect(diagnosed(lines).event.diagnosis).toBe('state_already_used');
    // Without a returnTo, the router's successRedirect.
    const other = await approve(await startLogin(browser));
    expect((await followCallback(browser, other)).headers.location).toBe('/');
    expect((await followCallback(browser, other)).headers.location).toBe('/');
  });

  it('a signed-in person given someone else’s callback is sent on, and stays who they were', async () => {
    const { rp } = await rpWithLog();
    const victim = rp.browser();
    await followCallback(victim, await approve(await startLogin(victim)));
    const before = (await victim.get('/me')).body as { user: { sub: string } };
    const attacker = rp.browser();
    const planted = await approve(await startLogin(attacker));
    const res = await followCallback(victim, planted);
    expect(res.status).toBe(302);
    expect(((await victim.get('/me')).body as { user: { sub: string } }).user.sub).toBe(before.user.sub);
    expect(rp.tokenCalls()).toBe(1);
  });

  it('pending_login_other_state: the session has a login in progress, but for another state', async () => {
    const { rp, lines } = await rpWithLog();
    const browser = rp.browser();
    await startLogin(browser);
    const res = await browser.get('/auth/callback?code=c&state=made-up-state-from-an-old-tab-000000');
    expectExplained(res, diagnosed(lines), 'pending_login_other_state');
  });

  it('state_evicted: more tabs than maxPendingLogins dropped the oldest', async () => {
    const { rp, lines } = await rpWithLog({ strategy: { maxPendingLogins: 2 } });
    const browser = rp.browser();
    const first = await startLogin(browser);
    await startLogin(browser);
    await startLogin(browser);
    const res = await followCallback(browser, await approve(first));
    expectExplained(res, diagnosed(lines), 'state_evicted');
  });

  it('login_expired: says how long the login took against loginTtl', async () => {
    let now = Date.now();
    const { rp, lines } = await rpWithLog({ clock: () => now, strategy: { loginTtl: 60_000 } });
    const browser = rp.browser();
    const back = await approve(await startLogin(browser));
    now += 5 * 60_000;
    const res = await followCallback(browser, back);
    expectExplained(res, diagnosed(lines), 'login_expired');
    expect(String(diagnosed(lines).event.cause)).toBe('The login took 5 min, longer than loginTtl (60 s).');
  });

  it('clock_skew: an ID token refused for its time states the difference to the service Date header', async () => {
    const { rp, lines } = await rpWithLog({ clock: () => Date.now() + 20 * 60_000 });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expect(res.status).toBe(401);
    const line = diagnosed(lines);
    expectExplained(res, line, 'clock_skew');
    expect(String(line.event.cause)).toMatch(/about 1[12]\d\d s ahead of the identity service's/);
    expect(String(line.event.fix)).toContain('clockTolerance (60 s)');
  });

  it('id_token_expired, not clock_skew: a token that expired a minute ago while the clocks agree', async () => {
    const { rp, lines } = await rpWithLog();
    const browser = rp.browser();
    rp.provider.provider.approveNext({ claims: { exp: -60 } });
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expect(res.status).toBe(401);
    const line = diagnosed(lines);
    expectExplained(res, line, 'id_token_expired');
    expect(String(line.event.cause)).not.toMatch(/ahead|behind|beyond clockTolerance \(60 s\)\./);
    expect(String(line.event.fix)).not.toMatch(/raise clockTolerance/);
  });

  it('callback_without_state: a callback link without state', async () => {
    const { rp, lines } = await rpWithLog();
    const res = await rp.browser().get('/auth/callback?code=abc');
    expectExplained(res, diagnosed(lines), 'callback_without_state');
  });

  it('in production the page keeps the reference but drops the developer box', async () => {
    const { rp, lines } = await rpWithLog();
    const before = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      const res = await rp.browser().get('/auth/callback?code=abc&state=unknown-state-000000000000000');
      expectSafePage(res, 403);
      expect(res.text).not.toContain('For the developer');
      expect(res.text).toContain(`<code>${String(diagnosed(lines).event.reference)}</code>`);
    } finally {
      process.env.NODE_ENV = before;
    }
  });
});

describe('server-side failures are logged at error with the reference on the page, never silent', () => {
  it('a wrong client secret: 500 page with a reference; the log says invalid_client and never the secret', async () => {
    const { rp, lines } = await rpWithLog({ clientSecret: 'a-wrong-secret-value-123456' });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 500);
    const line = lines.find((l) => l.level === 'error');
    expect(line?.event).toMatchObject({
      event: 'login_error',
      code: 'token_request_failed',
      oauthError: 'invalid_client',
    });
    expect(res.text).toContain(`<code>${String(line?.event.reference)}</code>`);
    // Outside production the developer box names the option to check, and so does the log.
    expect(res.text).toContain('For the developer');
    expect(res.text).toContain('<code>client_secret_refused</code>');
    expect(res.text).toContain('clientSecret');
    expect(line?.event).toMatchObject({ diagnosis: 'client_secret_refused' });
    expect(String(line?.event.fix)).toContain('clientSecret');
    const all = JSON.stringify(lines);
    expect(all).not.toContain('a-wrong-secret-value-123456');
    expect(all).not.toContain(CLIENT_SECRET);
  });

  it('a private key that does not match the registered one: 500 page whose developer box names privateKey, as the log does', async () => {
    const { testKeyPair } = await import('../helpers/keys.js');
    const { rp, lines } = await rpWithLog({ privateKey: testKeyPair('not-registered').privateKeyPem });
    const browser = rp.browser();
    const res = await followCallback(browser, await approve(await startLogin(browser)));
    expectSafePage(res, 500);
    const line = lines.find((l) => l.level === 'error' && l.event.event === 'login_error');
    expect(line?.event).toMatchObject({ code: 'userinfo_key_decrypt_failed', diagnosis: 'private_key_mismatch' });
    expect(String(line?.event.fix)).toContain('privateKey');
    expect(res.text).toContain('For the developer');
    expect(res.text).toContain('<code>private_key_mismatch</code>');
    expect(res.text).toContain('privateKey');
  });

  it('with no logger, a server-side failure reaches console.error once per cause per minute', async () => {
    const { vi } = await import('vitest');
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      rp = await startRp({ clientSecret: 'another-wrong-secret-98765' });
      for (let i = 0; i < 3; i++) {
        const browser = rp.browser();
        expect((await followCallback(browser, await approve(await startLogin(browser)))).status).toBe(500);
      }
      const lines = printed.mock.calls
        .map((c) => c.map(String).join(' '))
        .filter((l) => l.startsWith('passport-nd-id'));
      // One line per cause: the client's failed call (warn) and the login's error.
      expect(lines).toHaveLength(2);
      expect(lines.find((l) => l.includes('provider_call_failed'))).toContain('"oauthError":"invalid_client"');
      expect(lines.find((l) => l.includes('login_error'))).toContain('"code":"token_request_failed"');
      expect(lines.join('\n')).not.toContain('another-wrong-secret-98765');
    } finally {
      printed.mockRestore();
    }
  });
});

describe('wiring mistakes are caught', () => {
  it('a router mounted where callbackURL does not point refuses to start logins and logs both paths', async () => {
    const { rp, lines } = await rpWithLog({ mount: '/login', callbackPath: '/auth/callback' });
    const res = await rp.browser().get('/login/login');
    expectSafePage(res, 500);
    const line = lines.find((l) => l.event.code === 'callback_route_mismatch');
    expect(line?.level).toBe('error');
    expect(line?.event).toMatchObject({ route: '/login/callback', callbackPath: '/auth/callback' });
    expect(res.text).toContain('callback_route_mismatch');
  });

  it('without passport.session(), signing in and coming back to log in again is logged with the fix', async () => {
    const { rp, lines } = await rpWithLog({ passportSession: false });
    const browser = rp.browser();
    expect((await followCallback(browser, await approve(await startLogin(browser)))).status).toBe(302);
    expect((await browser.get('/me')).status).toBe(401); // the silent loop
    await browser.get('/auth/login');
    const line = lines.find((l) => l.event.code === 'session_not_restored');
    expect(line?.level).toBe('error');
    expect(line?.message).toContain('passport.session()');
  });
});

describe('options that cannot work together fail at construction', () => {
  it('renderFailure with failureRedirect or errorPage is a TypeError naming both', async () => {
    const { ndIdRouter } = await import('../../src/passport/router.js');
    const render = (): void => undefined;
    expect(() => ndIdRouter({ renderFailure: render, failureRedirect: '/x' })).toThrow(
      /renderFailure and failureRedirect/,
    );
    expect(() => ndIdRouter({ renderFailure: render, errorPage: false })).toThrow(/renderFailure and errorPage/);
  });

  it('two strategies sharing a sessionKey with different callbacks: logged once, from the session itself, naming both callbacks', async () => {
    const passport = (await import('passport')).default;
    const express = (await import('express')).default;
    const { NdIdStrategy } = await import('../../src/passport/strategy.js');
    const { ndIdRouter } = await import('../../src/passport/router.js');
    const { testKeyPair } = await import('../helpers/keys.js');
    const { logger, lines } = capturingLogger();
    const authenticator = new passport.Passport();
    const common = {
      clientId: 'c',
      clientSecret: 's',
      privateKey: testKeyPair('rp').privateKeyPem,
      hostname: 'http://127.0.0.1:9',
      sessionKey: 'shared',
      logger,
    };
    authenticator.use('nd-id', new NdIdStrategy({ ...common, callbackURL: 'http://127.0.0.1:3000/a/callback' }));
    authenticator.use('nd-id-b', new NdIdStrategy({ ...common, callbackURL: 'http://127.0.0.1:3000/b/callback' }));
    const app = express();
    app.use(session({ secret: 'clash-secret-0123456789', resave: false, saveUninitialized: false }));
    app.use('/a', ndIdRouter({ passport: authenticator }));
    app.use('/b', ndIdRouter({ passport: authenticator, strategyName: 'nd-id-b' }));
    // Two browsers, one strategy each: nothing is shared, nothing is logged.
    expect((await request(app).get('/a/login')).status).toBe(302);
    expect((await request(app).get('/b/login')).status).toBe(302);
    expect(lines.filter((l) => l.event.code === 'session_key_shared')).toEqual([]);
    // One browser using both: the second strategy finds the first one's login under its key.
    const browser = request.agent(app);
    expect((await browser.get('/a/login')).status).toBe(302);
    expect((await browser.get('/b/login')).status).toBe(302);
    expect((await browser.get('/b/login')).status).toBe(302);
    const shared = lines.filter((l) => l.event.code === 'session_key_shared');
    expect(shared).toHaveLength(1);
    expect(shared[0]!.level).toBe('warn');
    expect(shared[0]!.message).toContain('http://127.0.0.1:3000/a/callback');
    expect(shared[0]!.message).toContain('http://127.0.0.1:3000/b/callback');
    expect(shared[0]!.message).toContain('sessionKey "shared"');
  });

  it('renderFailure receives what to show and brands the page', async () => {
    const seen: Array<Record<string, unknown>> = [];
    rp = await startRp({
      router: {
        renderFailure: (failure, _req, res) => {
          seen.push({ ...failure });
          res
            .status(failure.status)
            .type('html')
            .send(`<main><h1>Acme: ${failure.title}</h1><p>ref ${failure.reference ?? ''}</p></main>`);
        },
      },
    });
    const res = await rp.browser().get('/auth/callback?code=abc&state=zzz-not-a-state-00000000000000');
    expect(res.status).toBe(403);
    expect(res.text).toContain('Acme: Sign-in failed');
    expect(seen[0]).toMatchObject({ status: 403, serverSide: false, code: 'state_mismatch', retryHref: '/auth/login' });
    expect(res.text).toContain(String(seen[0]?.reference));
  });
});

describe('a service echoing a secret as its OAuth error code', () => {
  it('never gets it into the log or the page: only registered OAuth error codes are repeated', async () => {
    const echoed = 'token-like-secret-0123456789';
    const { createServer } = await import('node:http');
    const stub = createServer((_req, res) => {
      res
        .writeHead(401, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ error: echoed, error_description: echoed }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    try {
      const { rp, lines } = await rpWithLog({
        hostname: `http://127.0.0.1:${(stub.address() as { port: number }).port}`,
      });
      const browser = rp.browser();
      const authorize = await startLogin(browser);
      const iss = encodeURIComponent(`${authorize.origin}/v2`);
      const res = await browser.get(
        `/auth/callback?code=some-code&state=${authorize.searchParams.get('state')}&iss=${iss}`,
      );
      expect(res.status).toBe(401);
      expect(lines.length).toBeGreaterThan(0);
      expect(JSON.stringify(lines)).not.toContain(echoed);
      expect(res.text).not.toContain(echoed);
    } finally {
      stub.close();
    }
  });
});
