/**
 * Part of `npm run bench`: what `requireSignIn()` costs on a signed-in request. The same trivial
 * Express route (express-session memory store, `passport.session()`), without and with the guard,
 * each in a child process of its own (`perf/protected-apps.ts`), measured as the server's CPU
 * per request, interleaved round after round. Each figure is the median round; the ratio is the
 * median of per-round ratios with its interquartile range. Target: at most 1.05x.
 * Environment: BENCH_ROUTE_ITERATIONS (default 2000 requests per round), BENCH_ROUTE_ROUNDS (21),
 * BENCH_ROUTE_WARMUP (5000).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { positiveInt } from './env.js';
import { benchAgent as agent, get, median } from './http-get.js';

const ITERATIONS = positiveInt('BENCH_ROUTE_ITERATIONS', 2000);
const ROUNDS = positiveInt('BENCH_ROUTE_ROUNDS', 21);
const WARMUP = positiveInt('BENCH_ROUTE_WARMUP', 5000);

async function startApp(guard: boolean): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(process.execPath, [...process.execArgv, join(__dirname, 'protected-apps.ts')], {
    env: { ...process.env, BENCH_GUARD: guard ? '1' : '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  for await (const line of createInterface({ input: child.stdout! }))
    return { port: (JSON.parse(line) as { port: number }).port, child };
  throw new Error('protected-apps.ts exited before it was ready');
}

async function main(): Promise<void> {
  const scenarios = [
    {
      name: 'trivial route (express-session + passport.session())',
      guard: false,
      samples: [] as number[],
      port: 0,
      cookie: '',
    },
    { name: 'same route behind requireSignIn()', guard: true, samples: [] as number[], port: 0, cookie: '' },
  ];
  const children: ChildProcess[] = [];
  for (const s of scenarios) {
    const app = await startApp(s.guard);
    children.push(app.child);
    s.port = app.port;
    s.cookie = (await get(s.port, '/__signin')).cookies.join('; ');
    const check = await get(s.port, '/page', s.cookie);
    if (check.status !== 200 || check.body !== 'ok') throw new Error(`${s.name} answered ${check.status}`);
    for (let i = 0; i < WARMUP; i++) await get(s.port, '/page', s.cookie);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? scenarios : [...scenarios].reverse();
    for (const s of order) {
      const before = JSON.parse((await get(s.port, '/__cpu')).body) as { us: number };
      for (let i = 0; i < ITERATIONS; i++) await get(s.port, '/page', s.cookie);
      const after = JSON.parse((await get(s.port, '/__cpu')).body) as { us: number };
      s.samples.push((after.us - before.us) / ITERATIONS);
    }
  }
  const [plain, guarded] = scenarios as [(typeof scenarios)[0], (typeof scenarios)[0]];
  const ratios = guarded.samples.map((x, i) => x / plain.samples[i]!).sort((a, b) => a - b);
  const q = (f: number): string => ratios[Math.floor(f * (ratios.length - 1))]!.toFixed(3);
  process.stdout.write(
    [
      `Signed-in request to a trivial route, server CPU per request (median of ${ROUNDS} rounds × ${ITERATIONS}; ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}):`,
      ...scenarios.map((s) => `  ${s.name.padEnd(56)} ${median(s.samples).toFixed(1).padStart(7)} µs`),
      `requireSignIn() vs none: ${median(ratios).toFixed(3)}x CPU (middle half of rounds ${q(0.25)}–${q(0.75)}); target at most 1.05x.`,
    ].join('\n') + '\n',
  );
  agent.destroy();
  for (const child of children) child.kill('SIGTERM');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench (protected route) failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
