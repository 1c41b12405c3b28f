/**
 * The in-memory part of the soak (perf/soak.ts): one example-app instance without
 * `REDIS_URL`, flooded with more abandoned logins than its store may hold. Its sessions must
 * stay at or under MAX_MEMORY_SESSIONS, and after the login TTL and one sweep, the store must be
 * empty and the heap and RSS back within 10% of the start.
 */
import { Browser, location } from './load-logins.js';
import { positiveInt } from './env.js';
import { Instance, type ProcessMemory } from './soak-cluster.js';

const FLOOD = positiveInt('SOAK_MEMORY_ABANDONED', 25_000);
const MAX_SESSIONS = positiveInt('SOAK_MEMORY_MAX', 20_000);
const LOGIN_TTL_S = positiveInt('SOAK_MEMORY_LOGIN_TTL_S', 20);
/** The store's sweep interval (the example app's default). */
const SWEEP_S = 60;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** What the in-memory part found. */
export interface MemorySoakResult {
  /** Table rows: point, sessions, heap, RSS. */
  rows: string[];
  /** One line of conclusions. */
  summary: string;
  problems: string[];
}

/** Run the in-memory part with `env` (the shared configuration, without REDIS_URL) on `port`. */
export async function soakMemoryStore(
  env: Record<string, string>,
  port: number,
  concurrency: number,
): Promise<MemorySoakResult> {
  const instance = new Instance('M', port, {
    ...env,
    PORT: String(port),
    LOGIN_TTL_SECONDS: String(LOGIN_TTL_S),
    MAX_MEMORY_SESSIONS: String(MAX_SESSIONS),
  });
  await instance.start();
  const origin = `http://127.0.0.1:${port}`;
  const problems: string[] = [];
  const rows: string[] = [];
  const failures = new Map<string, number>();
  let maxSeen = 0;
  const point = async (label: string): Promise<ProcessMemory> => {
    const m = await instance.memory();
    maxSeen = Math.max(maxSeen, m.sessions ?? 0);
    rows.push(`| ${label} | ${m.sessions ?? '?'} | ${mb(m.heapUsed)} | ${mb(m.rss)} |`);
    return m;
  };
  const flood = async (count: number): Promise<number> => {
    let next = 0;
    const started = performance.now();
    const worker = async (): Promise<void> => {
      while (next < count) {
        next += 1;
        try {
          const browser = new Browser();
          location(await browser.get(`${origin}/auth/login`), 'GET /auth/login');
          if (browser.sessionId() === undefined) throw new Error('no session cookie');
        } catch (err) {
          const what = err instanceof Error ? err.message.slice(0, 80) : 'unknown failure';
          failures.set(what, (failures.get(what) ?? 0) + 1);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return performance.now() - started;
  };

  try {
    await point('booted');
    await flood(500);
    const start = await point('start (after 500 warm-up abandoned logins)');
    const half = await flood(Math.floor(FLOOD / 2));
    await point(`after ${Math.floor(FLOOD / 2)} abandoned logins`);
    const rest = await flood(FLOOD - Math.floor(FLOOD / 2));
    const full = await point(`after ${FLOOD} abandoned logins`);
    const waitStart = performance.now();
    const deadline = waitStart + (LOGIN_TTL_S + SWEEP_S + 15) * 1000;
    let now = full;
    while ((now.sessions ?? 0) > 0 && performance.now() < deadline) {
      await sleep(2000);
      now = await instance.memory();
    }
    const waited = performance.now() - waitStart;
    const end = await point(`after the TTL and a sweep (${(waited / 1000).toFixed(0)} s later)`);

    if (maxSeen > MAX_SESSIONS)
      problems.push(`memory store held ${maxSeen} sessions, over its bound of ${MAX_SESSIONS}`);
    if ((end.sessions ?? 0) > 0)
      problems.push(`memory store still held ${end.sessions} sessions ${(waited / 1000).toFixed(0)} s after the flood`);
    const heap = end.heapUsed / start.heapUsed - 1;
    const rss = end.rss / start.rss - 1;
    if (heap > 0.1) problems.push(`memory instance: heap ${(heap * 100).toFixed(0)}% above its start after the TTL`);
    if (rss > 0.1) problems.push(`memory instance: RSS ${(rss * 100).toFixed(0)}% above its start after the TTL`);
    for (const [what, n] of failures) problems.push(`memory flood: ${n} × ${what}`);
    if (instance.unexpectedExits > 0) problems.push('memory instance crashed');
    const perSession = (full.heapUsed - start.heapUsed) / Math.max(1, (full.sessions ?? 0) - (start.sessions ?? 0));
    const summary =
      `In memory (MAX_MEMORY_SESSIONS=${MAX_SESSIONS}, LOGIN_TTL_SECONDS=${LOGIN_TTL_S}, sweep every ${SWEEP_S} s): ` +
      `${FLOOD} abandoned logins in ${((half + rest) / 1000).toFixed(1)} s; at most ${maxSeen} sessions held ` +
      `(~${(perSession / 1024).toFixed(2)} KB of heap each); after the TTL: heap ${heap >= 0 ? '+' : ''}${(heap * 100).toFixed(1)}%, ` +
      `RSS ${rss >= 0 ? '+' : ''}${(rss * 100).toFixed(1)}% against the start; ${[...failures.values()].reduce((a, b) => a + b, 0)} failed requests.`;
    return { rows, summary, problems };
  } finally {
    await instance.stop();
  }
}
