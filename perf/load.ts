/**
 * `npm run load`: load test of a relying party (the example app: NdIdStrategy + ndIdRouter,
 * in-memory sessions) against the provider in autoApprove mode, all on loopback.
 * `npm run soak` runs the soak instead (perf/soak.ts): two instances on a real Redis,
 * with faults.
 *
 * 1. LOAD_LOGINS (default 1000) complete logins at LOAD_CONCURRENCY (default 50): each one is a
 *    fresh browser (its own cookie jar) signing in as a random persona, then reading /profile.
 *    Every profile page, and every session in the store, must hold exactly that persona.
 * 2. LOAD_ABANDONED (default 10000) logins started and never finished, each in its own browser.
 * 3. The same number started in ONE browser, to show maxPendingLogins bounds a session.
 *
 * The RP runs in a child process (perf/load-rp.ts, with --expose-gc), so the numbers are its
 * own; this process runs the browsers and the providers. Memory is read over IPC after a full GC.
 * One provider per persona, behind a front on the issuer's origin: see perf/load-logins.ts.
 *
 * Exits 1 on any failed request, wrong page, cross-talk or unbounded session.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DEFAULT_PERSONAS, type Persona } from '../src/provider/index.js';
import { DEFAULT_MAX_PENDING_LOGINS } from '../src/passport/strategy.js';
import { positiveInt } from './env.js';
import {
  Browser,
  browserAgent,
  CLIENT_ID,
  clientSecret,
  completeLogin,
  frontAgent,
  location,
  percentile,
  SCOPE,
  startProviders,
} from './load-logins.js';
import type { RpReply, RpRequest, RpStats } from './load-rp.js';
import { runSoak } from './soak.js';

const LOGINS = positiveInt('LOAD_LOGINS', 1000);
const CONCURRENCY = positiveInt('LOAD_CONCURRENCY', 50);
const ABANDONED = positiveInt('LOAD_ABANDONED', 10_000);

// ---------------------------------------------------------------------------------------------
// The RP child process.

class RpProcess {
  readonly #child: ChildProcess;
  #waiting: ((reply: RpReply) => void)[] = [];

  constructor() {
    this.#child = fork(join(__dirname, 'load-rp.ts'), [], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#child.on('message', (reply: RpReply) => this.#waiting.shift()?.(reply));
    this.#child.on('exit', (code) => {
      if (this.#waiting.length > 0) {
        console.error(`The RP process exited (${code}) while the load test waited for it.`);
        process.exit(1);
      }
    });
  }

  ask(message: RpRequest): Promise<RpReply> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#child.send(message);
    });
  }

  async stats(): Promise<RpStats> {
    const reply = await this.ask({ type: 'stats' });
    if (reply.type !== 'stats')
      throw new Error(`the RP could not report its figures (${reply.type === 'failed' ? reply.reason : reply.type})`);
    return reply.stats;
  }

  stop(): void {
    this.#child.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// The runs.

const failures = new Map<string, number>();
function failed(reason: string): void {
  failures.set(reason, (failures.get(reason) ?? 0) + 1);
}

/** Runs `task(i)` for i in [0, count) with `concurrency` in flight; returns the wall time in ms. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      try {
        await task(i);
      } catch (err) {
        failed(err instanceof Error ? err.message : 'unknown failure');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return performance.now() - started;
}

interface Completed {
  browser: Browser;
  persona: Persona;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function statsRow(label: string, s: RpStats): string {
  const mean = s.sessions === 0 ? 0 : Math.round(s.totalBytes / s.sessions);
  return (
    `| ${label} | ${mb(s.rss)} | ${mb(s.heapUsed)} | ${s.sessions} | ${s.withPending} | ${s.maxPendingPerSession} | ` +
    `${mean} | ${s.maxBytes} | ${(s.totalBytes / 1024).toFixed(0)} KB | ${s.longLived} |`
  );
}

async function main(): Promise<void> {
  const rpKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const front = createServer();
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const frontOrigin = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;

  const rp = new RpProcess();
  const ready = await rp.ask({
    type: 'start',
    sessionSecret: randomBytes(32).toString('base64url'),
    provider: {
      hostname: frontOrigin,
      clientId: CLIENT_ID,
      clientSecret,
      privateKey: rpKeys.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      scope: SCOPE,
    },
  });
  if (ready.type !== 'ready') throw new Error('the RP did not start');
  const rpOrigin = `http://127.0.0.1:${ready.port}`;
  const providers = await startProviders(
    rpKeys.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    `${rpOrigin}/auth/callback`,
    front,
  );

  const rows: string[] = [];
  const before = await rp.stats();
  rows.push(statsRow('before', before));

  // 1. Complete logins.
  const latencies: number[] = [];
  const completed: Completed[] = [];
  const loginMs = await pool(LOGINS, CONCURRENCY, async () => {
    const persona = DEFAULT_PERSONAS[randomInt(DEFAULT_PERSONAS.length)]!;
    const t0 = performance.now();
    const browser = await completeLogin(rpOrigin, providers, persona);
    latencies.push(performance.now() - t0);
    completed.push({ browser, persona });
  });
  const afterLogins = await rp.stats();
  rows.push(statsRow(`after ${LOGINS} logins`, afterLogins));

  // Every browser's session in the store holds its own persona, and nobody else's.
  const reply = await rp.ask({ type: 'sessions' });
  if (reply.type !== 'sessions') throw new Error('the RP could not list its sessions');
  const personaCounts = new Map<string, number>();
  for (const { browser, persona } of completed) {
    personaCounts.set(persona.id, (personaCounts.get(persona.id) ?? 0) + 1);
    const sid = browser.sessionId();
    const user = sid === undefined ? undefined : reply.users[sid];
    if (
      !user ||
      user.sub !== providers.subjectFor(persona.id) ||
      user.data['profile.name'] !== persona['profile.name'] ||
      user.data['profile.nric_number'] !== persona['profile.nric_number'] ||
      user.data['profile.passport_expiry_date'] !== persona['profile.passport_expiry_date']
    ) {
      failed("cross-talk: a browser's session in the store holds another person, or none");
    }
  }
  const distinctSids = new Set(completed.map((c) => c.browser.sessionId()));
  if (distinctSids.size !== completed.length) failed('two browsers ended up with the same session');

  // 2. Abandoned logins, one browser each.
  const abandonedMs = await pool(ABANDONED, CONCURRENCY, async () => {
    const browser = new Browser();
    const answer = await browser.get(`${rpOrigin}/auth/login`);
    location(answer, 'abandoned GET /auth/login');
    if (browser.sessionId() === undefined) throw new Error('abandoned GET /auth/login: no session cookie');
  });
  const afterAbandoned = await rp.stats();
  rows.push(statsRow(`+ ${ABANDONED} abandoned (own browsers)`, afterAbandoned));

  // 3. Abandoned logins, all in one browser (first one alone, so the session exists).
  const one = new Browser();
  location(await one.get(`${rpOrigin}/auth/login`), 'GET /auth/login in one browser');
  const oneSid = one.sessionId();
  const oneMs = await pool(ABANDONED - 1, CONCURRENCY, async () => {
    const answer = await one.get(`${rpOrigin}/auth/login`);
    location(answer, 'GET /auth/login in one browser');
    if (one.sessionId() !== oneSid) throw new Error('the one browser was given another session');
  });
  const afterOne = await rp.stats();
  rows.push(statsRow(`+ ${ABANDONED} abandoned (one browser)`, afterOne));
  if (afterOne.sessions !== afterAbandoned.sessions + 1)
    failed('logins started in one browser created more than one session');
  if (afterOne.maxPendingPerSession > DEFAULT_MAX_PENDING_LOGINS)
    failed('a session holds more pending logins than maxPendingLogins');

  rp.stop();
  await providers.close();
  browserAgent.destroy();
  frontAgent.destroy();

  // Report.
  latencies.sort((a, b) => a - b);
  const errors = [...failures.values()].reduce((a, b) => a + b, 0);
  const ms = (n: number): string => `${n.toFixed(1)} ms`;
  console.log(
    `\nLoad test: RP = example app (NdIdStrategy + ndIdRouter, memory store) in its own process; ${DEFAULT_PERSONAS.length} autoApprove providers on loopback.`,
  );
  console.log(`\n| complete logins | concurrency | wall time | logins/s | p50 | p95 | p99 | max | errors |`);
  console.log(`|---|---|---|---|---|---|---|---|---|`);
  console.log(
    `| ${latencies.length} | ${CONCURRENCY} | ${(loginMs / 1000).toFixed(2)} s | ${((latencies.length / loginMs) * 1000).toFixed(0)} | ` +
      `${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 95))} | ${ms(percentile(latencies, 99))} | ` +
      `${ms(latencies.at(-1) ?? NaN)} | ${errors} |`,
  );
  console.log(
    `\nPersonas signed in: ${[...personaCounts].map(([id, n]) => `${id} ${n}`).join(', ')}; every profile page and stored session matched its own browser's persona.`,
  );
  console.log(
    `Abandoned logins: ${ABANDONED} own browsers in ${(abandonedMs / 1000).toFixed(2)} s; ${ABANDONED} in one browser in ${(oneMs / 1000).toFixed(2)} s.`,
  );
  const perAbandoned = (afterAbandoned.heapUsed - afterLogins.heapUsed) / ABANDONED;
  const perSignedIn = (afterLogins.heapUsed - before.heapUsed) / Math.max(1, latencies.length);
  console.log(
    `Heap growth: ~${(perSignedIn / 1024).toFixed(2)} KB per completed login (one-off warm-up included), ~${(perAbandoned / 1024).toFixed(2)} KB per abandoned login ` +
      `(each abandoned login in its own browser is a stored session until its cookie's maxAge, then swept; the ${ABANDONED} in one browser added ` +
      `${afterOne.sessions - afterAbandoned.sessions} session of ${afterOne.maxBytes} bytes at most).`,
  );
  console.log(`\nRP process after a full GC (session sizes: JSON as the store keeps it, in bytes):\n`);
  console.log(
    '| point | rss | heapUsed | sessions | with pending logins | most pending in one | mean size | max size | total | cookie expires > 1 h |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  if (errors > 0) {
    console.error('\nFAILED:');
    for (const [reason, count] of failures) console.error(`  ${count} x ${reason}`);
    process.exit(1);
  }
  console.log('\nOK: no errors, no cross-talk, sessions bounded.');
}

(process.argv.slice(2).includes('soak') ? runSoak() : main()).catch((err: unknown) => {
  console.error(`The load test could not run: ${err instanceof Error ? err.message : 'unknown error'}`);
  process.exit(1);
});
