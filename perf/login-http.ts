/**
 * Part of `npm run bench`: a full login over HTTP (GET login → redirect to the service → GET
 * callback with code and state → code exchange, ID token check, userinfo decryption of three
 * attributes, new session), measured as the server's CPU per login, for:
 * - `ndIdRouter()` with passport and express-session (memory store);
 * - minimal hand-written Express routes over `IdClient`, same session middleware (the baseline);
 * - `createFetchLogin()` with its sealed cookie session;
 * - `ndIdRouter()` again with the client in the FAPI 2.0 profile (the login pushes its request
 *   with a client assertion and a DPoP proof, the ID token comes encrypted), against a second
 *   stub answering as for a FAPI client: the profile's cost to a whole app, beside the router's.
 * Each app runs in a child process of its own (`perf/http-apps.ts`, so garbage collection is
 * counted against the app that caused it) against the bench stub in another; this process only
 * drives requests, so its own CPU is not counted. The authorize hop is the service's work and is
 * skipped: the stub accepts its fixed code.
 * Scenarios run interleaved, round after round, each round starting with the next one; each
 * figure is the median round, and ratios are the median of per-round ratios, with their
 * interquartile range to show the machine's noise.
 * Environment: BENCH_HTTP_ITERATIONS (default 150 logins per round), BENCH_HTTP_ROUNDS (21),
 * BENCH_HTTP_WARMUP (1500 logins per app first, so every app is measured with its code fully optimised).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { positiveInt } from './env.js';
import { benchAgent as agent, get, median } from './http-get.js';

const ITERATIONS = positiveInt('BENCH_HTTP_ITERATIONS', 150);
const ROUNDS = positiveInt('BENCH_HTTP_ROUNDS', 21);
const WARMUP = positiveInt('BENCH_HTTP_WARMUP', 1500);
const CLIENT_ID = 'bench-client';
const NONCE = 'bench-nonce-0123456789';

/** One login through the app on `port`; throws unless it ends signed in (302 to `/`). */
async function login(port: number, iss: string): Promise<void> {
  const start = await get(port, '/auth/login');
  const sent = new URL(start.location).searchParams;
  // A pushed login sends only client_id and request_uri; the bench stub's request_uri ends with the state.
  const requestUri = sent.get('request_uri');
  const state =
    requestUri === null ? sent.get('state') : decodeURIComponent(requestUri.slice(requestUri.lastIndexOf(':') + 1));
  if (start.status !== 302 || state === null) throw new Error(`login answered ${start.status}`);
  const done = await get(
    port,
    `/auth/callback?code=bench-code&state=${encodeURIComponent(state)}&iss=${encodeURIComponent(iss)}`,
    start.cookies.join('; '),
  );
  if (done.status !== 302 || done.location !== '/')
    throw new Error(`callback answered ${done.status}: ${done.body.slice(0, 200)}`);
}

async function serverCpu(port: number): Promise<number> {
  return (JSON.parse((await get(port, '/__cpu')).body) as { us: number }).us;
}

/**
 * With two cores or more and `taskset` (util-linux) at hand, the measured apps run on the last
 * core and this driver and the stub on the first, so they do not preempt each other mid-login;
 * BENCH_HTTP_PIN=0 turns that off.
 */
const PIN_CORES =
  process.env.BENCH_HTTP_PIN !== '0' && cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

async function startChild(
  file: string,
  env: Record<string, string>,
  core?: number,
): Promise<{ line: string; child: ChildProcess }> {
  const args = [...process.execArgv, join(__dirname, file)];
  const pinned = PIN_CORES && core !== undefined;
  const child = spawn(
    pinned ? 'taskset' : process.execPath,
    pinned ? ['-c', String(core), process.execPath, ...args] : args,
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  process.on('exit', () => child.kill('SIGTERM'));
  for await (const line of createInterface({ input: child.stdout! })) return { line, child };
  throw new Error(`${file} exited before it was ready`);
}

async function main(): Promise<void> {
  if (PIN_CORES) spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]);
  const rp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stub = await startChild(
    'stub-server.ts',
    {
      BENCH_RP_PUBLIC_KEY: rp.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      BENCH_CLIENT_ID: CLIENT_ID,
      BENCH_NONCE: NONCE,
    },
    0,
  );
  const { origin } = JSON.parse(stub.line) as { origin: string };
  const assertionKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const idTokenKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const fapiStub = await startChild(
    'stub-server.ts',
    {
      BENCH_RP_PUBLIC_KEY: rp.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      BENCH_CLIENT_ID: CLIENT_ID,
      BENCH_NONCE: NONCE,
      BENCH_ID_TOKEN_KEY: idTokenKey.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    },
    0,
  );
  const fapiOrigin = (JSON.parse(fapiStub.line) as { origin: string }).origin;
  const scenarios = [
    { key: 'bare', name: 'hand-written IdClient routes (express-session)', samples: [] as number[] },
    { key: 'router', name: 'ndIdRouter() + passport (express-session)', samples: [] as number[] },
    { key: 'fetch', name: 'createFetchLogin() (sealed cookie session)', samples: [] as number[] },
    { key: 'fapi', name: 'ndIdRouter() + passport, FAPI 2.0 profile', samples: [] as number[] },
  ] as const;
  // Each stub advertises the RFC 9207 iss parameter, as the service does: every callback carries it.
  const issuerOf = (key: string): string => `${key === 'fapi' ? fapiOrigin : origin}/v2`;
  const ports: Record<string, number> = {};
  const apps: ChildProcess[] = [];
  for (const s of scenarios) {
    const app = await startChild(
      'http-apps.ts',
      {
        BENCH_APP: s.key,
        BENCH_ORIGIN: s.key === 'fapi' ? fapiOrigin : origin,
        BENCH_ASSERTION_KEY: assertionKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
        BENCH_ID_TOKEN_PRIVATE_KEY: idTokenKey.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
        BENCH_RP_PRIVATE_KEY: rp.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
        BENCH_CLIENT_ID: CLIENT_ID,
        BENCH_NONCE: NONCE,
      },
      cpus().length - 1,
    );
    ports[s.key] = (JSON.parse(app.line) as { port: number }).port;
    apps.push(app.child);
  }

  for (const s of scenarios) for (let i = 0; i < WARMUP; i++) await login(ports[s.key], issuerOf(s.key));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with the next app, so no app always runs right after the same other one.
    for (let k = 0; k < scenarios.length; k++) {
      const s = scenarios[(round + k) % scenarios.length]!;
      const before = await serverCpu(ports[s.key]);
      for (let i = 0; i < ITERATIONS; i++) await login(ports[s.key], issuerOf(s.key));
      const after = await serverCpu(ports[s.key]);
      s.samples.push((after - before) / ITERATIONS);
    }
  }
  const [bare, router, fetchLogin, fapi] = scenarios;
  const ratios = (a: number[], b: number[]): number[] => a.map((x, i) => x / b[i]!).sort((x, y) => x - y);
  const ratio = (a: number[], b: number[]): string => {
    const r = ratios(a, b);
    const q = (f: number): string => r[Math.floor(f * (r.length - 1))]!.toFixed(2);
    return `${median(r).toFixed(3)}x CPU (middle half of rounds ${q(0.25)}–${q(0.75)})`;
  };
  const out = [
    `Full login over HTTP, server CPU per login (median of ${ROUNDS} rounds × ${ITERATIONS} logins; ${cpus().length} cores${PIN_CORES ? ', apps pinned to the last' : ''}, load ${loadavg()[0]!.toFixed(2)}):`,
    ...scenarios.map((s) => `  ${s.name.padEnd(50)} ${median(s.samples).toFixed(0).padStart(6)} µs`),
    `Router vs hand-written routes: ${ratio(router.samples, bare.samples)}; target at most 1.10x.`,
    `createFetchLogin vs hand-written routes: ${ratio(fetchLogin.samples, bare.samples)}.`,
    `Router in the FAPI 2.0 profile vs the base profile: ${ratio(fapi.samples, router.samples)}; target at most 1.5x.`,
  ];
  process.stdout.write(out.join('\n') + '\n');
  agent.destroy();
  for (const app of apps) app.kill('SIGTERM');
  stub.child.kill('SIGTERM');
  fapiStub.child.kill('SIGTERM');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench (HTTP login) failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
