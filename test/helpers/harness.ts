/**
 * Shared pieces of the framework integration tests: a provider (autoApprove) registered for an
 * app's callback URL, a browser with a cookie jar over real HTTP, and a logger that records
 * every line so tests can prove nothing secret reaches it. Not a test file itself.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from './provider.js';
import type { Logger } from '../../src/log.js';
import { testKeyPair } from './keys.js';

export const CLIENT_ID = 'rp-integration';
export const CLIENT_SECRET = 'rp-integration-secret-never-shown-91c2';
export const PERSONA = DEFAULT_PERSONAS[0];
export const RP_KEYS = testKeyPair('rp');

/** A provider whose only client is registered for `callbackUrl`, with a count of token calls. */
export async function startIntegrationProvider(
  callbackUrl: string,
): Promise<{ provider: StartedProvider; tokenCalls: () => number }> {
  const provider = await startProvider({
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: [callbackUrl],
        publicKey: RP_KEYS.publicKeyPem,
      },
    ],
    autoApprove: true,
  });
  let calls = 0;
  provider.server.on('request', (req) => {
    if (req.url?.startsWith('/v2/oauth/token')) calls++;
  });
  return { provider, tokenCalls: () => calls };
}

/** Listens on 127.0.0.1, port 0; resolves the base URL. */
export function listenOnLoopback(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

/** Closes a server and its keep-alive sockets. */
export function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A response as the browser saw it. */
export interface Page {
  status: number;
  location: string | null;
  contentType: string | null;
  cacheControl: string | null;
  text: string;
  setCookies: string[];
}

/** A browser: a cookie jar (name → value) over fetch, following no redirects by itself. */
export class Browser {
  readonly jar = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  /** GET `path` (relative to the app, or an absolute URL of the app) with the jar's cookies. */
  get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.send('GET', path, headers);
  }

  /** Sends a bodiless `method` request to `path` with the jar's cookies, and keeps the cookies it sets. */
  async send(method: string, path: string, headers: Record<string, string> = {}): Promise<Page> {
    const url = new URL(path, this.baseUrl);
    const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      method,
      redirect: 'manual',
      headers: cookie === '' ? headers : { ...headers, cookie },
    });
    const setCookies = res.headers.getSetCookie();
    for (const line of setCookies) {
      const [pair = '', ...attrs] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return {
      status: res.status,
      location: res.headers.get('location'),
      contentType: res.headers.get('content-type'),
      cacheControl: res.headers.get('cache-control'),
      text: await res.text(),
      setCookies,
    };
  }

  /** A copy of the jar, to replay later. */
  snapshot(): Map<string, string> {
    return new Map(this.jar);
  }

  /** Puts back a copy taken by {@link snapshot}. */
  restore(copy: Map<string, string>): void {
    this.jar.clear();
    for (const [k, v] of copy) this.jar.set(k, v);
  }
}

/** Starts a login at `loginPath`; returns the authorization URL the app redirected to. */
export async function startLogin(browser: Browser, loginPath: string): Promise<URL> {
  const res = await browser.get(loginPath);
  expect(res.status).toBe(302);
  const url = new URL(res.location as string);
  expect(url.pathname).toBe('/v2/oauth/authorize');
  return url;
}

/** The callback URL (with code and state) the auto-approving provider sends the browser to. */
export async function approve(authorizeUrl: URL): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.get('location') as string);
}

/** A logger keeping every line as text. */
export function recordingLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = [];
  const write =
    (level: string) =>
    (...args: unknown[]): void => {
      lines.push(`${level} ${args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ')}`);
    };
  return {
    logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') },
    text: () => lines.join('\n'),
  };
}

/** Asserts `text` (a page or the log) holds no secret, code, cookie value or attribute. */
export function expectNoSecrets(text: string, extra: readonly string[] = []): void {
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toContain('PRIVATE KEY');
  expect(text).not.toContain(PERSONA['profile.name']);
  expect(text).not.toContain(PERSONA['profile.nric_number']);
  expect(text).not.toMatch(/\bat .+:\d+:\d+/); // stack frame
  for (const secret of extra) if (secret.length >= 8) expect(text).not.toContain(secret);
}

/** Asserts a failure page: HTML with the status, a clear sentence, and nothing internal. */
export function expectFailurePage(page: Page, status: number, sentence: RegExp): void {
  expect(page.status).toBe(status);
  expect(page.contentType).toMatch(/^text\/html/);
  expect(page.text).toMatch(sentence);
  expect(page.text).not.toMatch(/Error:|statusCode/);
  expectNoSecrets(page.text);
}

/** The signed-in user the app's `/me` route reports, or null. */
export async function me(browser: Browser): Promise<{ sub: string; data: Record<string, string> } | null> {
  return (JSON.parse((await browser.get('/me')).text) as { user: { sub: string; data: Record<string, string> } | null })
    .user;
}

/** What {@link itKeepsTheSharedGuarantees} needs of a running app. */
export interface GuaranteedApp {
  /** Token-endpoint calls the provider received so far. */
  tokenCalls(): number;
  /** Everything the app logged so far, as text. */
  log(): string;
}

/**
 * The guarantees every adapter must keep (issue: "the same guarantees everywhere"), as tests of
 * the app `app()` reached with browsers from `newBrowser()`: two tabs, replay, foreign state,
 * same-site returnTo, and a log with no secret.
 */
export function itKeepsTheSharedGuarantees(
  app: () => GuaranteedApp,
  newBrowser: () => Promise<Browser>,
  options: {
    /** The app keeps one session id across sign-in (its own session, not regenerated): the cookie from before is then signed in too. */
    sessionKeptAtSignIn?: boolean;
  } = {},
): void {
  it('lets two tabs of one browser both complete', async () => {
    const browser = await newBrowser();
    const first = await approve(await startLogin(browser, '/auth/login?returnTo=/one'));
    const second = await approve(await startLogin(browser, '/auth/login?returnTo=/two'));
    expect((await browser.get(second.href)).location).toBe('/two');
    expect((await browser.get(first.href)).location).toBe('/one');
    expect((await me(browser))?.sub).toMatch(/\S/);
  });

  it('refuses a replayed callback, also with the cookie from before the login completed, before the token endpoint', async () => {
    const browser = await newBrowser();
    const callback = await approve(await startLogin(browser, '/auth/login'));
    const before = browser.snapshot();
    expect((await browser.get(callback.href)).status).toBe(302);
    const calls = app().tokenCalls();
    const replay = await browser.get(callback.href);
    // Still signed in (the back button): sent on, not shown a failure.
    expect(replay.status).toBe(302);
    expect(replay.location).toBe('/');
    const stranger = await newBrowser();
    const refused = await stranger.get(callback.href);
    expectFailurePage(refused, 403, /not started in this browser, or was already used/);
    expect(refused.text).toContain('href="/auth/login"');
    browser.restore(before);
    if (options.sessionKeptAtSignIn === true) {
      expect(await me(browser)).not.toBeNull();
    } else {
      expectFailurePage(await browser.get(callback.href), 403, /not started in this browser, or was already used/);
    }
    expect(app().tokenCalls()).toBe(calls);
  });

  it('refuses a state started in another session, without calling the token endpoint', async () => {
    const victim = await newBrowser();
    const attacker = await newBrowser();
    await startLogin(attacker, '/auth/login');
    const callback = await approve(await startLogin(victim, '/auth/login'));
    const calls = app().tokenCalls();
    expectFailurePage(await attacker.get(callback.href), 403, /not started in this browser/);
    expect(app().tokenCalls()).toBe(calls);
    expect(await me(attacker)).toBeNull();
  });

  it('ignores a returnTo that leaves the site', async () => {
    for (const evil of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/%2F%2Fevil.example']) {
      const browser = await newBrowser();
      const back = await approve(await startLogin(browser, `/auth/login?returnTo=${encodeURIComponent(evil)}`));
      expect((await browser.get(back.href)).location).toBe('/');
    }
  });

  it('writes no secret, code, cookie value or attribute to the log', async () => {
    const browser = await newBrowser();
    const callback = await approve(await startLogin(browser, '/auth/login'));
    const before = browser.snapshot();
    await browser.get(callback.href);
    browser.restore(before);
    await browser.get(callback.href);
    expect(app().log()).toMatch(/state_mismatch|Sign-in completed/);
    expectNoSecrets(app().log(), [
      callback.searchParams.get('code') ?? '',
      callback.searchParams.get('state') ?? '',
      ...browser.jar.values(),
    ]);
  });
}
