/**
 * `npm run bench`: the relying party's CPU time per login (callback + userinfo, decrypting
 * three attributes), against a stub provider in a child process that serves precomputed
 * responses, beside (a) the physical floor and (b) the reference client @opengovsg/sgid-client.
 *
 * Scenarios run interleaved, round after round, so a burst of load from elsewhere on the machine
 * hits all of them alike. Environment: BENCH_ITERATIONS (default 400 logins per round),
 * BENCH_ROUNDS (default 7), BENCH_WARMUP (default 300), BENCH_ONLY (run only the scenarios whose name contains it, for
 * profiling with `node --cpu-prof --import tsx perf/login-cpu.ts`), BENCH_CONTROL=1 (the logger scenario
 * without its logger: the same two clients, to see the noise between them). Each scenario's figure is
 * its median round.
 *
 * Then, per attribute key management the allowlist accepts (dir, A128KW..A256KW,
 * A128GCMKW..A256GCMKW), our login beside the floor doing the same unwrap with node:crypto,
 * against a stub whose attributes use it, in interleaved rounds (target: each at most 1.25x).
 * BENCH_ALG_ITERATIONS (default 200 logins per round) sets that phase's round size; BENCH_ALGS=0 skips it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SgidClient } from '@opengovsg/sgid-client';
import { IdClient } from '../src/client/id-client.js';
import { ATTRIBUTE_ALGORITHMS } from '../src/client/userinfo-crypto.js';
import { generatePkcePair } from '../src/pkce.js';
import { positiveInt } from './env.js';
import { FloorClient } from './floor.js';
import { startStub } from './stub-process.js';
import { BENCH_ATTRIBUTES } from './stub-server.js';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 400);
const ROUNDS = positiveInt('BENCH_ROUNDS', 7);
const WARMUP = positiveInt('BENCH_WARMUP', 300);
const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-secret';
const NONCE = 'bench-nonce-0123456789';
const REDIRECT_URI = 'https://rp.example/callback';

type Login = () => Promise<Record<string, string>>;

interface Scenario {
  name: string;
  login: Login;
  samples: number[];
}

async function main(): Promise<void> {
  const rp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = rp.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const stub = await startStub(rp.publicKey.export({ format: 'pem', type: 'spki' }).toString(), CLIENT_ID, NONCE);
  const { origin } = stub;
  const { codeVerifier } = generatePkcePair();

  const ours = new IdClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: privateKeyPem,
    redirectUri: REDIRECT_URI,
    hostname: origin,
  });
  // A logger at level info, filtering by level as pino does: what a production app passes.
  const logged = new IdClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: privateKeyPem,
    redirectUri: REDIRECT_URI,
    hostname: origin,
    ...(process.env.BENCH_CONTROL ? {} : { logger: levelLogger('info') }),
  });
  const floor = new FloorClient(origin, rp.privateKey);
  const sgid = new SgidClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    privateKey: privateKeyPem,
    redirectUri: REDIRECT_URI,
    hostname: origin,
  });

  const scenarios: Scenario[] = [
    {
      name: 'passport-nd-id IdClient',
      samples: [],
      login: async () => {
        const { sub, accessToken } = await ours.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
        return (await ours.userinfo({ sub, accessToken })).data;
      },
    },
    { name: '(a) floor: node:http + node:crypto', samples: [], login: () => floor.login('bench-code', codeVerifier) },
    {
      name: '(b) @opengovsg/sgid-client 2.3',
      samples: [],
      login: async () => {
        const { sub, accessToken } = await sgid.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
        return (await sgid.userinfo({ sub, accessToken })).data;
      },
    },
    {
      name: 'passport-nd-id IdClient, logger at info',
      samples: [],
      login: async () => {
        const { sub, accessToken } = await logged.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
        return (await logged.userinfo({ sub, accessToken })).data;
      },
    },
  ];

  // BENCH_BASELINE=<dir holding another commit's src/>: its IdClient runs beside ours, same rounds.
  const baselineDir = process.env.BENCH_BASELINE;
  let baseline: { close(): void } | undefined;
  if (baselineDir !== undefined && baselineDir !== '') {
    const { IdClient: BaselineClient } = (await import(
      pathToFileURL(resolve(baselineDir, 'src/client/id-client.ts')).href
    )) as { IdClient: typeof IdClient };
    const client = new BaselineClient({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: privateKeyPem,
      redirectUri: REDIRECT_URI,
      hostname: origin,
    });
    baseline = client;
    scenarios.push({
      name: 'baseline IdClient (BENCH_BASELINE)',
      samples: [],
      login: async () => {
        const { sub, accessToken } = await client.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
        return (await client.userinfo({ sub, accessToken })).data;
      },
    });
  }

  const only = process.env.BENCH_ONLY;
  if (only !== undefined) scenarios.splice(0, scenarios.length, ...scenarios.filter((s) => s.name.includes(only)));
  const jwksFetches: Record<string, number> = {};
  for (const s of scenarios) {
    await stubCall(origin, '/stats/reset');
    await check(s);
    for (let i = 0; i < WARMUP; i++) await s.login();
    jwksFetches[s.name] = (await stubStats(origin))['/v2/.well-known/jwks.json'] ?? 0;
  }
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with the next scenario, so none always follows the same one (the
    // garbage one leaves is collected during the next).
    const order = [...scenarios.slice(round % scenarios.length), ...scenarios.slice(0, round % scenarios.length)];
    for (const s of order) {
      await stubCall(origin, '/stats/reset');
      s.samples.push(await measure(s.login));
      jwksFetches[s.name]! += (await stubStats(origin))['/v2/.well-known/jwks.json'] ?? 0;
    }
  }
  ours.close();
  logged.close();
  baseline?.close();
  floor.close();
  stub.child.kill('SIGTERM');

  report(scenarios, jwksFetches, ours.jwksFetchCount, ours.discoveryFetchCount);
  if (process.env.BENCH_ALGS !== '0' && only === undefined)
    await attributeAlgorithms(
      rp.privateKey,
      privateKeyPem,
      rp.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    );
}

/** Ours beside the floor for each attribute key management, each pair against its own stub. */
async function attributeAlgorithms(
  rpKey: import('node:crypto').KeyObject,
  privateKeyPem: string,
  publicPem: string,
): Promise<void> {
  const iterations = positiveInt('BENCH_ALG_ITERATIONS', 200);
  const { codeVerifier } = generatePkcePair();
  const pairs: { alg: string; ours: Scenario; floor: Scenario; close: () => void }[] = [];
  for (const alg of ATTRIBUTE_ALGORITHMS) {
    const stub = await startStub(publicPem, CLIENT_ID, NONCE, undefined, alg);
    const client = new IdClient({
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      privateKey: privateKeyPem,
      redirectUri: REDIRECT_URI,
      hostname: stub.origin,
    });
    const floor = new FloorClient(stub.origin, rpKey, alg);
    const ours: Scenario = {
      name: `ours, ${alg}`,
      samples: [],
      login: async () => {
        const { sub, accessToken } = await client.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
        return (await client.userinfo({ sub, accessToken })).data;
      },
    };
    const bare: Scenario = { name: `floor, ${alg}`, samples: [], login: () => floor.login('bench-code', codeVerifier) };
    for (const s of [ours, bare]) {
      await check(s);
      for (let i = 0; i < WARMUP / 2; i++) await s.login();
    }
    pairs.push({
      alg,
      ours,
      floor: bare,
      close: () => {
        client.close();
        floor.close();
        stub.child.kill('SIGTERM');
      },
    });
  }
  const all = pairs.flatMap((p) => [p.ours, p.floor]);
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...all.slice((round * 2) % all.length), ...all.slice(0, (round * 2) % all.length)];
    for (const s of round % 2 === 0 ? order : order.reverse()) s.samples.push(await measureN(s.login, iterations));
  }
  for (const p of pairs) p.close();
  const out = [
    '',
    `Attribute key management (A128GCM content), ${iterations} logins x ${ROUNDS} interleaved rounds: ours beside the node:crypto floor doing the same unwrap`,
  ];
  for (const p of pairs) {
    const ratios = p.ours.samples.map((x, i) => x / p.floor.samples[i]!);
    const r = median(ratios);
    out.push(
      `${p.alg.padEnd(10)} ours ${median(p.ours.samples).toFixed(0).padStart(6)} µs  floor ${median(p.floor.samples).toFixed(0).padStart(6)} µs  ours / floor median ${r.toFixed(2)}x, rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x   target <= 1.25x  ${r <= 1.25 ? 'MET' : 'MISSED'}`,
    );
  }
  process.stdout.write(out.join('\n') + '\n');
}

async function measureN(login: Login, n: number): Promise<number> {
  if (global.gc) global.gc();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) await login();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

/** A minimal leveled logger: calls below `level` return at once, the others write nowhere. */
function levelLogger(level: 'debug' | 'info' | 'warn' | 'error') {
  const rank = { debug: 20, info: 30, warn: 40, error: 50 };
  const min = rank[level];
  let written = 0;
  const at =
    (l: keyof typeof rank) =>
    (..._args: unknown[]) => {
      if (rank[l] >= min) written += 1;
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), written: () => written };
}

/** CPU time of the whole process per login, in µs, over ITERATIONS sequential logins. */
async function measure(login: Login): Promise<number> {
  if (global.gc) global.gc();
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) await login();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ITERATIONS;
}

/** One login must return the three attributes, or the numbers mean nothing. */
async function check(s: Scenario): Promise<void> {
  const data = await s.login();
  for (const [scope, value] of Object.entries(BENCH_ATTRIBUTES)) {
    if (data[scope] !== value) throw new Error(`${s.name}: ${scope} did not decrypt to the expected value`);
  }
}

function report(
  scenarios: Scenario[],
  jwksFetches: Record<string, number>,
  ourCount: number,
  discoveryCount: number,
): void {
  const baseline = scenarios.length === 5 ? scenarios[4] : undefined;
  if (scenarios.length !== 4 && baseline === undefined) {
    for (const s of scenarios) process.stdout.write(`${s.name}: ${median(s.samples).toFixed(0)} µs CPU/login\n`);
    return;
  }
  const [ours, floor, sgid, logged] = scenarios as [Scenario, Scenario, Scenario, Scenario];
  // The three run back to back in each round, under the same load: compare them round by round.
  const paired = (a: Scenario, b: Scenario) => a.samples.map((x, i) => x / b.samples[i]!);
  const oursVsFloor = paired(ours, floor);
  const sgidVsOurs = paired(sgid, ours);
  const sgidVsFloor = paired(sgid, floor);
  const loggedVsOurs = paired(logged, ours);
  const rows = scenarios.map((s) => [
    s.name,
    median(s.samples).toFixed(0),
    Math.min(...s.samples).toFixed(0),
    s === floor ? '1.00x' : `${median(paired(s, floor)).toFixed(2)}x`,
    String(jwksFetches[s.name]),
  ]);
  const head = ['client', 'µs CPU/login (median round)', 'best round', 'vs floor', 'JWKS fetches'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const range = (xs: number[]) =>
    `median ${median(xs).toFixed(2)}x, rounds ${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}x`;
  const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  const out = [
    `Login CPU (callback + userinfo, 3 attributes), node ${process.version}, ${ITERATIONS} logins x ${ROUNDS} interleaved rounds after ${WARMUP} warm-up logins`,
    'Stub provider in a child process serving precomputed responses; process.cpuUsage() of the RP process only.',
    `Machine: ${cpus().length} CPUs, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} at the end of the run.`,
    '',
    line(head),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    'Ratios are per round (the clients run back to back in each round, each round starting with the next), then the median:',
    `ours / floor        ${range(oursVsFloor)}   target <= 1.25x  ${verdict(median(oursVsFloor) <= 1.25)}`,
    `sgid-client / ours  ${range(sgidVsOurs)}   target >= 2.50x  ${verdict(median(sgidVsOurs) >= 2.5)}`,
    `sgid-client / floor ${range(sgidVsFloor)}`,
    `logger at info / no logger  ${range(loggedVsOurs)}   target <= 1.03x  ${verdict(median(loggedVsOurs) <= 1.03)}`,
    `JWKS fetches by IdClient over the whole run: ${ourCount} (target 1)  ${verdict(ourCount === 1)}`,
    `Discovery fetches by IdClient over the whole run: ${discoveryCount} (target 1)  ${verdict(discoveryCount === 1)}`,
    ...(baseline === undefined
      ? []
      : [
          `ours / baseline     ${range(paired(ours, baseline))}   target <= 1.05x  ${verdict(median(paired(ours, baseline)) <= 1.05)}`,
        ]),
  ];
  process.stdout.write(out.join('\n') + '\n');
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function stubCall(origin: string, path: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    request(origin + path, { method: 'POST', agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    })
      .on('error', reject)
      .end();
  });
}

async function stubStats(origin: string): Promise<Record<string, number>> {
  return (await stubCall(origin, '/stats')) as Record<string, number>;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
