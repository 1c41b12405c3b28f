/**
 * `npm run soak`: two example-app instances sharing a real `redis-server`, behind one
 * round-robin balancer, all on loopback; the persona providers of perf/load-logins.ts.
 *
 * 0. In memory: one instance without Redis, flooded with abandoned logins (perf/soak-memory.ts).
 * 1. Steady: after a warm-up, SOAK_LOGINS (10 000) complete logins at SOAK_CONCURRENCY (50),
 *    each checked for cross-talk; then SOAK_ABANDONED (10 000) abandoned logins; then a wait
 *    until Redis holds no session (the TTLs: LOGIN_TTL_SECONDS=SOAK_LOGIN_TTL_S,
 *    SESSION_MAX_AGE_SECONDS=SOAK_SESSION_MAX_AGE_S). Each instance's heap and RSS (after a full
 *    GC) at start, after the logins, after the abandoned logins and after the TTL.
 * 2. Faults: complete logins for SOAK_FAULT_SECONDS (60) while Redis is killed (SIGKILL) and
 *    restarted, then one instance is killed (SIGKILL) and restarted. Every login must complete
 *    or end on a page with a heading; no cross-talk; no instance crashes by itself; logins complete again after each fault without any help.
 *
 * Exits 1 when a rule is broken. A script, never part of `npm test`: it takes a few minutes.
 */
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_PERSONAS } from '../src/provider/index.js';
import { freePort } from '../test/helpers/ports.js';
import { startRedis } from '../test/helpers/redis.js';
import { positiveInt } from './env.js';
import {
  Browser,
  browserAgent,
  CLIENT_ID,
  clientSecret,
  completeLogin,
  frontAgent,
  location,
  PageError,
  percentile,
  SCOPE,
  startProviders,
  type Providers,
} from './load-logins.js';
import { soakMemoryStore } from './soak-memory.js';
import { Instance, redisFigures, startBalancer, type ProcessMemory, type RedisFigures } from './soak-cluster.js';

const LOGINS = positiveInt('SOAK_LOGINS', 10_000);
const ABANDONED = positiveInt('SOAK_ABANDONED', 10_000);
const CONCURRENCY = positiveInt('SOAK_CONCURRENCY', 50);
const WARM_UP = positiveInt('SOAK_WARM_UP', 300);
const LOGIN_TTL_S = positiveInt('SOAK_LOGIN_TTL_S', 45);
const SESSION_MAX_AGE_S = positiveInt('SOAK_SESSION_MAX_AGE_S', 60);
const FAULT_SECONDS = positiveInt('SOAK_FAULT_SECONDS', 60);
/** How long Redis, then the instance, stays down. */
const DOWN_MS = 3000;
/** After a failed login in the fault run, a person reads the page for a second before trying again. */
const RETRY_PAUSE_MS = 1000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const s1 = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** How one login ended. */
interface Outcome {
  start: number;
  end: number;
  /** 'ok', or the page it ended on ("503 Temporarily unavailable"), or 'no page: <reason>'. */
  result: string;
}

function classify(err: unknown): string {
  if (err instanceof PageError)
    return err.heading ? `${err.status} ${err.heading}` : `no page: HTTP ${err.status} without a heading`;
  const message = err instanceof Error ? err.message : 'unknown failure';
  return message.startsWith('cross-talk') ? `CROSS-TALK` : `no page: ${message.slice(0, 80)}`;
}

/** Run `task` with `concurrency` in flight until `count` have run or `deadline` (ms, performance.now()) passes. */
async function run(
  count: number,
  concurrency: number,
  deadline: number,
  task: () => Promise<void>,
  pauseAfterFailureMs = 0,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < count && performance.now() < deadline) {
      started += 1;
      const start = performance.now();
      let result = 'ok';
      try {
        await task();
      } catch (err) {
        result = classify(err);
      }
      outcomes.push({ start, end: performance.now(), result });
      if (result !== 'ok' && pauseAfterFailureMs > 0) await sleep(pauseAfterFailureMs);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcomes;
}

function tally(outcomes: Outcome[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const o of outcomes) if (o.result !== 'ok') counts.set(o.result, (counts.get(o.result) ?? 0) + 1);
  return counts;
}

const describe = (counts: Map<string, number>): string =>
  counts.size === 0 ? 'none' : [...counts].map(([what, n]) => `${n} × ${what}`).join(', ');

function latencyRow(label: string, outcomes: Outcome[]): string {
  const ok = outcomes
    .filter((o) => o.result === 'ok')
    .map((o) => o.end - o.start)
    .sort((a, b) => a - b);
  const wall =
    outcomes.length === 0 ? 0 : Math.max(...outcomes.map((o) => o.end)) - Math.min(...outcomes.map((o) => o.start));
  const ms = (n: number): string => `${n.toFixed(0)} ms`;
  return (
    `| ${label} | ${outcomes.length} | ${s1(wall)} | ${((ok.length / wall) * 1000).toFixed(0)}/s | ${ms(percentile(ok, 50))} | ` +
    `${ms(percentile(ok, 95))} | ${ms(percentile(ok, 99))} | ${outcomes.length - ok.length} |`
  );
}

export async function runSoak(): Promise<void> {
  const problems: string[] = [];
  const redis = await startRedis();
  const rpKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const front = createServer();
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const balancerServer = createServer();
  await new Promise<void>((resolve) => balancerServer.listen(0, '127.0.0.1', resolve));
  const publicOrigin = `http://127.0.0.1:${(balancerServer.address() as AddressInfo).port}`;
  const providers: Providers = await startProviders(
    rpKeys.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    `${publicOrigin}/auth/callback`,
    front,
  );
  // Both instances: the same registration, secret and Redis, as behind a real balancer.
  const shared: Record<string, string> = {
    HOST: '127.0.0.1',
    ND_ID_HOSTNAME: `http://127.0.0.1:${(front.address() as AddressInfo).port}`,
    ND_ID_CLIENT_ID: CLIENT_ID,
    ND_ID_CLIENT_SECRET: clientSecret,
    ND_ID_PRIVATE_KEY: rpKeys.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    ND_ID_REDIRECT_URI: `${publicOrigin}/auth/callback`,
    ND_ID_SCOPE: SCOPE,
    SESSION_SECRET: randomBytes(36).toString('base64url'),
    REDIS_URL: redis.url,
    LOGIN_TTL_SECONDS: String(LOGIN_TTL_S),
    SESSION_MAX_AGE_SECONDS: String(SESSION_MAX_AGE_S),
  };
  const { REDIS_URL: _unused, ...withoutRedis } = shared;
  const memory = await soakMemoryStore(withoutRedis, await freePort(), CONCURRENCY);
  problems.push(...memory.problems);

  const [portA, portB] = [await freePort(), await freePort()];
  const instances = [
    new Instance('A', portA, { ...shared, PORT: String(portA) }),
    new Instance('B', portB, { ...shared, PORT: String(portB) }),
  ];
  await Promise.all(instances.map((i) => i.start()));
  const balancer = await startBalancer(
    balancerServer,
    instances.map((i) => i.port),
  );
  const figures = await redisFigures(redis.url);

  const login = async (): Promise<void> => {
    await completeLogin(publicOrigin, providers, DEFAULT_PERSONAS[randomInt(DEFAULT_PERSONAS.length)]!);
  };
  const abandon = async (): Promise<void> => {
    const browser = new Browser();
    location(await browser.get(`${publicOrigin}/auth/login`), 'abandoned GET /auth/login');
    if (browser.sessionId() === undefined) throw new Error('abandoned GET /auth/login: no session cookie');
  };

  const memoryRows: string[] = [];
  const snapshots = new Map<string, { mem: ProcessMemory[]; redis: RedisFigures }>();
  const snapshot = async (label: string): Promise<void> => {
    const mem = await Promise.all(instances.map((i) => i.memory()));
    const r = await figures.read();
    snapshots.set(label, { mem, redis: r });
    memoryRows.push(
      `| ${label} | ${mem.map((m) => `${mb(m.heapUsed)} / ${mb(m.rss)}`).join(' | ')} | ${r.keys} | ${mb(r.usedMemory)} |`,
    );
  };

  // ------------------------------------------------------------------------------------------
  // 1. Steady.
  const t0 = performance.now();
  await snapshot('booted');
  await run(WARM_UP, CONCURRENCY, Infinity, login);
  await snapshot(`start (after ${WARM_UP} warm-up logins)`);
  const logins = await run(LOGINS, CONCURRENCY, Infinity, login);
  await snapshot(`after ${LOGINS} complete logins`);
  const abandoned = await run(ABANDONED, CONCURRENCY, Infinity, abandon);
  await snapshot(`after ${ABANDONED} abandoned logins`);
  const ttlWaitStart = performance.now();
  const ttlDeadline = ttlWaitStart + (Math.max(LOGIN_TTL_S, SESSION_MAX_AGE_S) + 30) * 1000;
  while ((await figures.read()).keys > 0 && performance.now() < ttlDeadline) await sleep(1000);
  const ttlWaited = performance.now() - ttlWaitStart;
  await snapshot('after the TTL (Redis empty)');
  const steadyMs = performance.now() - t0;

  for (const [what, n] of tally([...logins, ...abandoned])) problems.push(`steady run: ${n} × ${what}`);
  const start = snapshots.get(`start (after ${WARM_UP} warm-up logins)`)!;
  const end = snapshots.get('after the TTL (Redis empty)')!;
  if (end.redis.keys > 0) problems.push(`Redis still held ${end.redis.keys} keys ${s1(ttlWaited)} after the run`);
  const returned = instances.map((instance, i) => {
    const heap = end.mem[i]!.heapUsed / start.mem[i]!.heapUsed - 1;
    const rss = end.mem[i]!.rss / start.mem[i]!.rss - 1;
    if (heap > 0.1)
      problems.push(`instance ${instance.name}: heap ${(heap * 100).toFixed(0)}% above its start after the TTL`);
    if (rss > 0.1)
      problems.push(`instance ${instance.name}: RSS ${(rss * 100).toFixed(0)}% above its start after the TTL`);
    return `${instance.name}: heap ${heap >= 0 ? '+' : ''}${(heap * 100).toFixed(1)}%, RSS ${rss >= 0 ? '+' : ''}${(rss * 100).toFixed(1)}%`;
  });

  // ------------------------------------------------------------------------------------------
  // 2. Faults, while logins keep coming.
  const retriedBefore = balancer.counts.retried;
  const badGatewayBefore = balancer.counts.badGateway;
  const faultStart = performance.now();
  const faults: { name: string; at: number; back: number }[] = [];
  const injector = (async () => {
    await sleep((FAULT_SECONDS * 1000) / 5);
    let at = performance.now();
    await redis.kill();
    await sleep(DOWN_MS);
    await redis.start();
    faults.push({ name: 'Redis killed (SIGKILL) and restarted empty', at, back: performance.now() });
    await sleep((FAULT_SECONDS * 1000 * 2) / 5 - DOWN_MS);
    at = performance.now();
    await instances[1]!.kill();
    await sleep(DOWN_MS);
    await instances[1]!.start();
    faults.push({ name: 'instance B killed (SIGKILL) and restarted', at, back: performance.now() });
  })();
  const faulted = await run(
    Number.MAX_SAFE_INTEGER,
    CONCURRENCY,
    faultStart + FAULT_SECONDS * 1000,
    login,
    RETRY_PAUSE_MS,
  );
  await injector;
  await snapshot('after the fault run');

  const faultRows: string[] = [];
  const attributed = new Set<Outcome>();
  faults.forEach((fault, i) => {
    // Each failure belongs to the last fault that began before it ended.
    const windowEnd = faults[i + 1]?.at ?? Infinity;
    const hit = faulted.filter((o) => o.result !== 'ok' && o.end >= fault.at && o.end < windowEnd);
    for (const o of hit) attributed.add(o);
    const lastFailure = Math.max(fault.at, ...hit.map((o) => o.end));
    const firstOkAfter = faulted
      .filter((o) => o.result === 'ok' && o.start >= fault.back)
      .reduce((m, o) => Math.min(m, o.end), Infinity);
    faultRows.push(
      `| ${fault.name} | ${s1(fault.back - fault.at)} | ${hit.length} | ${s1(lastFailure - fault.at)} | ` +
        `${Number.isFinite(firstOkAfter) ? s1(firstOkAfter - fault.back) : 'never'} | ${describe(tally(hit))} |`,
    );
    if (!Number.isFinite(firstOkAfter)) problems.push(`no login completed after "${fault.name}"`);
  });
  const unexplained = faulted.filter((o) => o.result !== 'ok' && !attributed.has(o));
  if (unexplained.length > 0)
    problems.push(`fault run: ${unexplained.length} failures outside any fault: ${describe(tally(unexplained))}`);
  for (const [what, n] of tally(faulted)) {
    if (what === 'CROSS-TALK' || what.startsWith('no page')) problems.push(`fault run: ${n} × ${what}`);
  }
  const tail = faulted.filter((o) => o.start >= (faults.at(-1)?.back ?? Infinity) + 5000);
  if (tail.some((o) => o.result !== 'ok')) problems.push('fault run: logins still failed 5 s after the last fault');
  for (const instance of instances)
    if (instance.unexpectedExits > 0 || !instance.isRunning()) problems.push(`instance ${instance.name} crashed`);

  figures.close();
  await Promise.all(instances.map((i) => i.stop()));
  await balancer.close();
  await providers.close();
  await redis.close();
  browserAgent.destroy();
  frontAgent.destroy();

  // ------------------------------------------------------------------------------------------
  console.log(
    `\nSoak: 2 example-app instances (own processes, Redis sessions) behind a round-robin balancer, one redis-server, ` +
      `${DEFAULT_PERSONAS.length} autoApprove providers; concurrency ${CONCURRENCY}; LOGIN_TTL_SECONDS=${LOGIN_TTL_S}, ` +
      `SESSION_MAX_AGE_SECONDS=${SESSION_MAX_AGE_S}. Steady part ${s1(steadyMs)} (TTL wait ${s1(ttlWaited)}), fault part ${s1(FAULT_SECONDS * 1000)}.`,
  );
  console.log(`\n${memory.summary}\n`);
  console.log('| in memory | sessions held | heapUsed | RSS |');
  console.log('|---|---|---|---|');
  for (const row of memory.rows) console.log(row);
  console.log('\n| run | logins | wall | completed/s | p50 | p95 | p99 | not completed |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(latencyRow('complete logins', logins));
  console.log(latencyRow('abandoned logins (GET /auth/login)', abandoned));
  console.log(latencyRow('complete logins during faults', faulted));
  console.log(
    `\nSteady run: not completed: ${describe(tally([...logins, ...abandoned]))}; cross-talk: ${logins.filter((o) => o.result === 'CROSS-TALK').length}.`,
  );
  console.log(
    '\nMemory after a full GC (heapUsed / RSS per instance; instance B is a new process after the fault run):\n',
  );
  console.log(`| point | A | B | Redis keys | Redis used_memory |`);
  console.log('|---|---|---|---|---|');
  for (const row of memoryRows) console.log(row);
  console.log(`\nAfter the TTL against the start: ${returned.join('; ')} (target: within +10%).`);
  console.log(
    `\nFaults (a login counts for a fault when it failed after the fault began and before the next one; a person whose login failed tries again ${RETRY_PAUSE_MS / 1000} s later):\n`,
  );
  console.log(
    '| fault | down for | logins failed | failing for (from the fault to the last failure) | first completed login after it was back | how they ended |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const row of faultRows) console.log(row);
  console.log(
    `\nBalancer: ${balancer.counts.retried - retriedBefore} requests retried on the other instance, ` +
      `${balancer.counts.badGateway - badGatewayBefore} answered with its own 502 page during the fault run ` +
      `(all runs, by cause: ${[...balancer.counts.reasons].map(([why, n]) => `${n} × ${why}`).join(', ') || 'none'}). ` +
      `Crashes: ${instances.map((i) => `${i.name} ${i.unexpectedExits}`).join(', ')}.`,
  );
  if (problems.length > 0) {
    console.error('\nFAILED:');
    for (const p of problems) console.error(`  - ${p}`);
    process.exit(1);
  }
  console.log(
    '\nOK: no cross-talk, no crash, every login completed or ended on a page with a heading, memory back within 10%.',
  );
}
