/**
 * Finding (high): a callback with no session cookie, a state this process issued and a crafted
 * Host header reaches the host-mismatch diagnosis, whose host-display expression used to
 * backtrack exponentially and freeze the whole process. The apps run in a child process, so a
 * frozen app makes the request below time out (and this test fail) instead of freezing the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from '../helpers/rp-apps.js';

const root = join(__dirname, '..', '..');
/** Generous: the fixed code answers in milliseconds; the old expression took hours on these. */
const CLIENT_TIMEOUT_MS = 20_000;

const CRAFTED_HOSTS = [
  `${'a'.repeat(40)}!`,
  `www.${'a'.repeat(26)}_.example.com`,
  `${'a'.repeat(40)}:123456`,
  `${'a-'.repeat(30)}.${'b'.repeat(30)}!`,
  'x'.repeat(15_000),
];

interface Answer {
  status: number;
  location: string | undefined;
  body: string;
}

/** GET with an explicit Host header and no cookie; rejects when the app does not answer within the timeout. */
function get(baseUrl: string, path: string, host?: string): Promise<Answer> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'GET',
        headers: host === undefined ? {} : { host },
        timeout: CLIENT_TIMEOUT_MS,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${CLIENT_TIMEOUT_MS} ms: the app is frozen`)));
    req.on('error', reject);
    req.end();
  });
}

let child: ChildProcess;
let urls: Record<string, string>;

beforeAll(async () => {
  child = spawn(process.execPath, ['--import', 'tsx', join(root, 'test', 'helpers', 'rp-child.ts')], {
    cwd: root,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  urls = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n')[0];
      if (out.includes('\n') && line !== undefined) resolve(JSON.parse(line) as Record<string, string>);
    });
    child.once('exit', (code) => reject(new Error(`the apps exited with ${code} before listening`)));
  });
}, 60_000);

afterAll(() => {
  child.kill('SIGKILL');
});

describe.each(ADAPTERS)('%s: a callback with a crafted Host header', (adapter) => {
  it.each(
    CRAFTED_HOSTS.map((host) => [host.length > 60 ? `${host.slice(0, 20)}… (${host.length} chars)` : host, host]),
  )(
    'answers the state_mismatch page promptly for Host %s',
    async (_name, host) => {
      const baseUrl = urls[adapter] as string;
      const login = await get(baseUrl, '/auth/login');
      expect(login.status).toBe(302);
      const state = new URL(login.location as string).searchParams.get('state');
      expect(state).toMatch(/\S{16,}/);
      // No cookie: the session that started the login is not sent, so the flow diagnoses a host mismatch.
      const callback = await get(baseUrl, `/auth/callback?code=c&state=${state}`, host);
      expect(callback.status).toBe(403);
      expect(callback.body).toContain('Please start again');
      expect(callback.body).not.toContain(host);
      // The process still serves everyone else.
      expect((await get(baseUrl, '/auth/login')).status).toBe(302);
    },
    3 * CLIENT_TIMEOUT_MS,
  );
});
