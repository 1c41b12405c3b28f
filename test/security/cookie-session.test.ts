/**
 * Finding (info) and section 3: the sealed-cookie session is a compact JWE (dir + A256GCM,
 * jose's format), bound to the cookie's name, with kid for rotation and exp inside. Two stores
 * sharing a secret (`user.session`, `staff.session`) no longer open each other's cookies.
 * Checked over HTTP against an app that reads its session cookie.
 */
import { createServer, type Server } from 'node:http';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCookieSession, type CookieSessionStore } from '../../src/adapters/cookie-session.js';
import { Browser, closeServer, listenOnLoopback } from '../helpers/harness.js';
import { fetchBridge } from '../helpers/rp-apps.js';

const OLD_SECRET = 'old-cookie-secret-0123456789-abcdefghijkl';
const NEW_SECRET = 'new-cookie-secret-0123456789-abcdefghijkl';
const HOUR = 60 * 60 * 1000;

let now = Date.UTC(2026, 0, 1);
const clock = (): number => now;
/** The app's store: seals with the new secret, still opens the old one's cookies. */
const staff = createCookieSession({
  secret: [NEW_SECRET, OLD_SECRET],
  cookieName: 'staff.session',
  clock,
  maxAge: HOUR,
});
let server: Server;
let baseUrl = '';

/** The cookie value `store` seals for a session holding `user`. */
async function sealed(store: CookieSessionStore, user: unknown): Promise<string> {
  const session = await store.load(new Request('http://x/'));
  session.set('user', user);
  const header = (await store.commit(session, new Request('http://x/'))) ?? '';
  return header.slice(header.indexOf('=') + 1, header.indexOf(';'));
}

/** Who the app sees signed in with `value` as its staff.session cookie. */
async function seenWith(value: string): Promise<unknown> {
  const browser = new Browser(baseUrl);
  browser.jar.set('staff.session', value);
  return (JSON.parse((await browser.get('/me')).text) as { user: unknown }).user;
}

beforeAll(async () => {
  server = createServer(
    fetchBridge(
      (request, path) =>
        path === '/me' ? staff.load(request).then((s) => Response.json({ user: s.get('user') ?? null })) : undefined,
      () => baseUrl,
    ),
  );
  baseUrl = await listenOnLoopback(server);
});

afterAll(async () => {
  await closeServer(server);
});

describe('the sealed-cookie session', () => {
  it("opens its own cookie, a compact JWE with dir + A256GCM, a kid and its cookie's name in the protected header", async () => {
    const value = await sealed(staff, { sub: 'staff-1' });
    expect(value.split('.')).toHaveLength(5);
    expect(decodeProtectedHeader(value)).toMatchObject({
      alg: 'dir',
      enc: 'A256GCM',
      cookie: 'staff.session',
      kid: expect.stringMatching(/^[\w-]{8,}$/),
    });
    expect(await seenWith(value)).toEqual({ sub: 'staff-1' });
  });

  it('refuses a user.session cookie presented as staff.session, though both share a secret', async () => {
    const users = createCookieSession({ secret: NEW_SECRET, cookieName: 'user.session', clock, maxAge: HOUR });
    expect(await seenWith(await sealed(users, { sub: 'user-1', role: 'staff' }))).toBeNull();
  });

  it('opens cookies sealed with a secret still listed (rotation), and none sealed with a secret no longer listed', async () => {
    const before = createCookieSession({ secret: OLD_SECRET, cookieName: 'staff.session', clock, maxAge: HOUR });
    expect(await seenWith(await sealed(before, { sub: 'staff-2' }))).toEqual({ sub: 'staff-2' });
    const retired = createCookieSession({
      secret: 'retired-cookie-secret-0123456789-abcdef',
      cookieName: 'staff.session',
      clock,
      maxAge: HOUR,
    });
    expect(await seenWith(await sealed(retired, { sub: 'staff-3' }))).toBeNull();
  });

  it('refuses a cookie past its exp', async () => {
    const value = await sealed(staff, { sub: 'staff-4' });
    now += HOUR + 1000;
    try {
      expect(await seenWith(value)).toBeNull();
    } finally {
      now -= HOUR + 1000;
    }
  });

  it('refuses a tampered cookie: header, ciphertext or tag changed, or a part dropped', async () => {
    const value = await sealed(staff, { sub: 'staff-5' });
    const parts = value.split('.');
    const flip = (s: string, at: number): string => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);
    for (const index of [0, 2, 3, 4]) {
      const changed = [...parts];
      changed[index] = flip(changed[index] as string, 1);
      expect(await seenWith(changed.join('.'))).toBeNull();
    }
    expect(await seenWith(parts.slice(0, 4).join('.'))).toBeNull();
    expect(await seenWith(`${value}${'A'.repeat(4000)}`)).toBeNull();
  });
});
