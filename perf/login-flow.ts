/**
 * `npm run bench:flow`: what the login flow adds per login, and what a Redis replay store adds on
 * top, beside the bare `IdClient` in the same run. Each login is `begin` + `complete` (code
 * exchange, ID token check, userinfo decryption of three attributes) against the bench stub in a
 * child process; Redis is a real `redis-server` on loopback.
 *
 * Scenarios run interleaved, round after round. Reported per login: CPU of this process (µs)
 * and wall time (µs, sequential logins), median round, with ratios taken round by round.
 * Environment: BENCH_ITERATIONS (default 300 per round), BENCH_ROUNDS (7), BENCH_WARMUP (200).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { createClient } from 'redis';
import { IdClient } from '../src/client/id-client.js';
import { createLoginFlow, type LoginFlow } from '../src/flow/login-flow.js';
import { createRedisReplayStore } from '../src/flow/redis-replay-store.js';
import { createMemoryReplayStore } from '../src/flow/replay-store.js';
import { recordSession } from '../src/flow/session.js';
import { generatePkcePair } from '../src/pkce.js';
import { positiveInt } from './env.js';
import { startStub } from './stub-process.js';
import { BENCH_ATTRIBUTES } from './stub-server.js';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 300);
const ROUNDS = positiveInt('BENCH_ROUNDS', 7);
const WARMUP = positiveInt('BENCH_WARMUP', 200);
const CLIENT_ID = 'bench-client';
const NONCE = 'bench-nonce-0123456789';
const REDIRECT_URI = 'https://rp.example/callback';
const SCOPE = ['openid', ...Object.keys(BENCH_ATTRIBUTES)];

type Login = () => Promise<Record<string, string>>;
interface Scenario {
  name: string;
  login: Login;
  cpu: number[];
  wall: number[];
}

/** One login through `flow`: begin, then complete with the stub's fixed code (the stub signs a fixed nonce). */
function flowLogin(flow: LoginFlow, iss: string): Login {
  return async () => {
    const record: Record<string, unknown> = {};
    const session = recordSession(record);
    const { state } = flow.begin(session);
    (record[flow.sessionKey] as { state: string; nonce: string }[]).find((login) => login.state === state)!.nonce =
      NONCE;
    return (await flow.complete(session, { code: 'bench-code', state, iss })).user.data;
  };
}

async function main(): Promise<void> {
  const rp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stub = await startStub(rp.publicKey.export({ format: 'pem', type: 'spki' }).toString(), CLIENT_ID, NONCE);
  const redis = await startRedis();
  const redisClient = createClient({ url: redis.url });
  redisClient.on('error', () => undefined);
  await redisClient.connect();

  const client = new IdClient({
    clientId: CLIENT_ID,
    clientSecret: 'bench-secret',
    privateKey: rp.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    redirectUri: REDIRECT_URI,
    hostname: stub.origin,
  });
  const { codeVerifier } = generatePkcePair();
  const options = { client, redirectUri: REDIRECT_URI, scope: SCOPE };
  // The stub advertises the RFC 9207 iss parameter: the callback carries it, as the service's does.
  const issuer = `${stub.origin}/v2`;
  const scenarios: Scenario[] = [
    {
      name: 'IdClient alone (callback + userinfo)',
      cpu: [],
      wall: [],
      login: async () => {
        const { sub, accessToken } = await client.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
        return (await client.userinfo({ sub, accessToken })).data;
      },
    },
    {
      name: 'login flow, in-memory replay store',
      cpu: [],
      wall: [],
      login: flowLogin(createLoginFlow({ ...options, replayStore: createMemoryReplayStore() }), issuer),
    },
    {
      name: 'login flow, Redis replay store',
      cpu: [],
      wall: [],
      login: flowLogin(createLoginFlow({ ...options, replayStore: createRedisReplayStore(redisClient) }), issuer),
    },
    {
      name: 'login flow, in-memory, logger at info',
      cpu: [],
      wall: [],
      login: flowLogin(
        createLoginFlow({ ...options, replayStore: createMemoryReplayStore(), logger: infoLogger() }),
        issuer,
      ),
    },
  ];

  for (const s of scenarios) {
    const data = await s.login();
    for (const [scope, value] of Object.entries(BENCH_ATTRIBUTES)) {
      if (data[scope] !== value) throw new Error(`${s.name}: ${scope} did not decrypt to the expected value`);
    }
    for (let i = 0; i < WARMUP; i++) await s.login();
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const s of scenarios) {
      if (global.gc) global.gc();
      const cpuStart = process.cpuUsage();
      const wallStart = process.hrtime.bigint();
      for (let i = 0; i < ITERATIONS; i++) await s.login();
      const used = process.cpuUsage(cpuStart);
      s.wall.push(Number(process.hrtime.bigint() - wallStart) / 1000 / ITERATIONS);
      s.cpu.push((used.user + used.system) / ITERATIONS);
    }
  }
  const keys = await redisClient.dbSize();
  redisClient.destroy();
  client.close();
  stub.child.kill('SIGTERM');
  redis.child.kill('SIGKILL');
  report(scenarios, keys);
}

/** A logger like pino's at level info: debug is a no-op, the others serialise one JSON line (discarded). */
function infoLogger(): {
  debug: () => void;
  info: (o: unknown, m: unknown) => void;
  warn: (o: unknown, m: unknown) => void;
  error: (o: unknown, m: unknown) => void;
} {
  let bytes = 0;
  const write = (o: unknown, m: unknown): void => {
    bytes += JSON.stringify({ level: 30, time: Date.now(), ...(o as object), msg: m }).length;
  };
  return { debug: () => undefined, info: write, warn: write, error: write, toString: () => String(bytes) } as never;
}

function report(scenarios: Scenario[], redisKeys: number): void {
  const [bare, memory, withRedis, logged] = scenarios as [Scenario, Scenario, Scenario, Scenario];
  const ratio = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]!));
  const rows = scenarios.map((s) => [
    s.name,
    median(s.cpu).toFixed(0),
    median(s.wall).toFixed(0),
    `${ratio(s.cpu, bare.cpu).toFixed(3)}x`,
    `${ratio(s.wall, bare.wall).toFixed(3)}x`,
  ]);
  const head = ['scenario', 'µs CPU/login', 'µs wall/login', 'CPU vs IdClient', 'wall vs IdClient'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const delta = (a: number[], b: number[]) => median(a.map((x, i) => x - b[i]!));
  const out = [
    `Login flow cost, node ${process.version}, ${ITERATIONS} sequential logins x ${ROUNDS} interleaved rounds after ${WARMUP} warm-up logins`,
    `Machine: ${cpus().length} CPUs, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} at the end of the run.`,
    '',
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `Redis replay store vs in-memory, per login (median of per-round differences): ` +
      `CPU ${delta(withRedis.cpu, memory.cpu).toFixed(0)} µs, wall ${delta(withRedis.wall, memory.wall).toFixed(0)} µs ` +
      `(${ratio(withRedis.cpu, memory.cpu).toFixed(3)}x CPU, ${ratio(withRedis.wall, memory.wall).toFixed(3)}x wall).`,
    `Keys left in Redis (one per login, each expiring with the login TTL): ${redisKeys}.`,
    `Logger at info vs none, per login (median of per-round ratios): CPU ${ratio(logged.cpu, memory.cpu).toFixed(3)}x ` +
      `(${delta(logged.cpu, memory.cpu).toFixed(0)} µs).`,
  ];
  process.stdout.write(out.join('\n') + '\n');
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A throwaway redis-server on a free loopback port, no persistence. */
async function startRedis(): Promise<{ url: string; child: ChildProcess }> {
  const port = await new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  child.once('error', (err) => {
    process.stderr.write(`bench:flow needs redis-server on the PATH (${err.message}).\n`);
    process.exit(1);
  });
  process.on('exit', () => child.kill('SIGKILL'));
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.includes('Ready to accept connections')) return { url: `redis://127.0.0.1:${port}`, child };
  }
  throw new Error('redis-server exited before it was ready');
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:flow failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
