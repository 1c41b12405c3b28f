/**
 * Two example-app processes behind one public address, sharing sessions through a real
 * redis-server: a login started on one instance completes on the other, and a Redis outage
 * gives a clear 503 page (no crash) until Redis is back.
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from 'passport-nd-id/provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawnExampleApp, waitForReady, type ExampleProcess } from '../helpers/example-process.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

/** Cookies as a browser on 127.0.0.1 keeps them: by name, for every port of the host. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

const persona = DEFAULT_PERSONAS[3]!;
const clientSecret = randomBytes(24).toString('base64url');
const sessionSecret = randomBytes(36).toString('base64url');

let redis: TestRedis;
let provider: StartedProvider;
let instanceA: ExampleProcess;
let instanceB: ExampleProcess;
let urlA: string;
let urlB: string;
let publicCallback: string;
/** Requests the provider received on its token endpoint. */
let tokenCalls = 0;

/** The environment of one example-app instance on `port`, sharing sessions through `redisUrl`. */
function appEnv(port: number, redisUrl: string): Record<string, string> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    ND_ID_HOSTNAME: provider.baseUrl,
    ND_ID_CLIENT_ID: 'multi-instance-rp',
    ND_ID_CLIENT_SECRET: clientSecret,
    ND_ID_PRIVATE_KEY: testKeyPair('multi-instance').privateKeyPem,
    ND_ID_REDIRECT_URI: publicCallback,
    SESSION_SECRET: sessionSecret,
    REDIS_URL: redisUrl,
  };
}

beforeAll(async () => {
  const problem = inject('systemPackagesProblem') ?? inject('buildProblem');
  if (problem) throw new Error(problem);
  redis = await startRedis();
  const [portA, portB] = [await freePort(), await freePort()];
  urlA = `http://127.0.0.1:${portA}`;
  urlB = `http://127.0.0.1:${portB}`;
  // The public address users see is instance A's; a load balancer may send any request to either.
  publicCallback = `${urlA}/auth/callback`;
  provider = await startProvider({
    clients: [
      {
        clientId: 'multi-instance-rp',
        clientSecret,
        redirectUris: [publicCallback],
        publicKey: testKeyPair('multi-instance').publicKeyPem,
        name: 'Multi-instance relying party',
      },
    ],
    autoApprove: persona.id,
  });
  provider.server.on('request', (req) => {
    if (req.url?.startsWith('/v2/oauth/token')) tokenCalls++;
  });
  instanceA = spawnExampleApp(appEnv(portA, redis.url));
  instanceB = spawnExampleApp(appEnv(portB, redis.url));
  await Promise.all([waitForReady(instanceA), waitForReady(instanceB)]);
});

afterAll(async () => {
  await instanceA?.stop();
  await instanceB?.stop();
  await provider?.close();
  await redis?.close();
});

/** GET without following redirects, with the jar's cookies; stores what the server sets. */
async function get(jar: CookieJar, url: string): Promise<Response> {
  const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
  jar.store(res);
  return res;
}

/** Start a login on `start`, let the provider approve, and deliver the callback to `finish`. */
async function logInAcross(jar: CookieJar, start: string, finish: string): Promise<void> {
  const login = await get(jar, `${start}/auth/login?returnTo=%2Fprofile`);
  expect(login.status).toBe(302);
  const authorize = login.headers.get('location')!;
  expect(authorize.startsWith(`${provider.baseUrl}/v2/oauth/authorize`)).toBe(true);

  const approved = await fetch(authorize, { redirect: 'manual' });
  expect(approved.status).toBe(302);
  const callback = new URL(approved.headers.get('location')!);
  expect(`${callback.origin}${callback.pathname}`).toBe(publicCallback);

  const done = await get(jar, `${finish}${callback.pathname}${callback.search}`);
  expect(done.status).toBe(302);
  expect(done.headers.get('location')).toBe('/profile');
}

async function waitUntilServing(url: string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    const res = await fetch(`${url}/`, { redirect: 'manual' });
    await res.arrayBuffer();
    if (res.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} kept answering 503 after Redis came back`);
}

describe('two app instances sharing sessions in Redis', () => {
  it('a login started on instance A and completed on instance B leaves the person signed in on both', async () => {
    const jar = new CookieJar();
    await logInAcross(jar, urlA, urlB);

    for (const url of [urlA, urlB]) {
      const profile = await get(jar, `${url}/profile`);
      expect(profile.status).toBe(200);
      const html = await profile.text();
      expect(html).toContain(persona['profile.name']);
      expect(html).not.toContain(persona['profile.nric_number']);
    }
  });

  it('the same callback racing on both instances reaches the token endpoint exactly once (shared replay store)', async () => {
    const jar = new CookieJar();
    const login = await get(jar, `${urlA}/auth/login`);
    const approved = await fetch(login.headers.get('location')!, { redirect: 'manual' });
    const callback = new URL(approved.headers.get('location')!);
    const before = tokenCalls;
    // Every copy carries the same cookie, so each instance loads the session before any saves it.
    const cookie = jar.header();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${i % 2 === 0 ? urlA : urlB}${callback.pathname}${callback.search}`, {
          redirect: 'manual',
          headers: { cookie },
        }),
      ),
    );
    await Promise.all(responses.map((res) => res.arrayBuffer()));
    expect(tokenCalls - before).toBe(1);
    expect(responses.filter((res) => res.status === 302)).toHaveLength(1);
    expect(responses.filter((res) => res.status === 403)).toHaveLength(9);
  });

  it('while Redis is down both instances answer a clear 503 page, log it without secrets, and recover when it returns', async () => {
    const jar = new CookieJar();
    await logInAcross(jar, urlB, urlA);
    expect((await get(jar, `${urlA}/profile`)).status).toBe(200);

    await redis.kill();
    for (const url of [urlA, urlB]) {
      for (const path of ['/profile', '/', '/auth/login']) {
        const res = await get(jar, `${url}${path}`);
        expect(res.status).toBe(503);
        const html = await res.text();
        expect(html).toContain('<h1>Temporarily unavailable</h1>');
        expect(html).not.toMatch(/\bat .+\.(js|ts):\d+/); // no stack trace
      }
    }
    expect(instanceA.isRunning()).toBe(true);
    expect(instanceB.isRunning()).toBe(true);

    await redis.start();
    await waitUntilServing(urlA);
    await waitUntilServing(urlB);

    // Redis came back empty (no persistence), so that session is gone; signing in again works on both.
    const fresh = new CookieJar();
    await logInAcross(fresh, urlA, urlB);
    for (const url of [urlA, urlB]) {
      const profile = await get(fresh, `${url}/profile`);
      expect(profile.status).toBe(200);
      expect(await profile.text()).toContain(persona['profile.name']);
    }

    // The instances logged the outage, without secrets or personal data.
    const logs = instanceA.stderr() + instanceB.stderr() + instanceA.stdout() + instanceB.stdout();
    expect(logs).toContain('Session store: Redis at redis://127.0.0.1');
    for (const secret of [clientSecret, sessionSecret, persona['profile.name'], persona['profile.nric_number']]) {
      expect(logs).not.toContain(secret);
    }
    expect(logs).not.toContain('PRIVATE KEY');
  });

  it('an instance started while Redis is unreachable still starts, and answers 503 instead of hanging', async () => {
    const port = await freePort();
    const unreachable = `redis://127.0.0.1:${await freePort()}`;
    const late = spawnExampleApp(appEnv(port, unreachable));
    try {
      await waitForReady(late);
      const res = await fetch(`http://127.0.0.1:${port}/`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain('<h1>Temporarily unavailable</h1>');
      expect(late.stderr()).toContain(`Session store: Redis at ${unreachable} is unavailable`);
      expect(late.isRunning()).toBe(true);
    } finally {
      await late.stop();
    }
  });
});
