/**
 * `npm run bench` (fourth part): the relying party's CPU per whole login in the FAPI 2.0 profile,
 * beside (a) our base-profile login and (b) openid-client 6 doing the same FAPI 2.0 login. A
 * login is what the app does: start it (base: build the authorization URL; FAPI: make the
 * login's DPoP key, sign a client assertion and a proof, push the request), then the callback
 * (FAPI: a new assertion and proof, decrypt the ID token) and userinfo (FAPI: a proof with
 * `ath`), decrypting three attributes. Each client runs in its own process
 * (`perf/fapi-worker.ts`) and measures its own CPU; the rounds are interleaved, each starting
 * with the next client, and only one client runs at a time. Both FAPI clients talk to the same
 * stub provider (a child process serving precomputed answers), the base one to its own. A fourth
 * process runs the FAPI floor (perf/floor.ts): the base login plus, per login, what the profile
 * adds at the least by node:crypto and node:http directly, so that how far the FAPI login is above
 * what any client must do is measured in the same rounds.
 *
 * Targets (issue 30): FAPI at most 1.6x the base login; ours at most 0.45x openid-client's.
 * Environment: BENCH_ITERATIONS (default 300 logins per round), BENCH_ROUNDS (7), BENCH_WARMUP (200);
 * BENCH_BASELINE=<dir holding another commit's src/>: its FAPI login runs too, in the same rounds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { positiveInt } from './env.js';
import { startStub } from './stub-process.js';
import { BENCH_ATTRIBUTES } from './stub-server.js';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 300);
const ROUNDS = positiveInt('BENCH_ROUNDS', 7);
const WARMUP = positiveInt('BENCH_WARMUP', 200);
const CLIENT_ID = 'bench-client';
const NONCE = 'bench-nonce-0123456789';
const FAPI_VS_BASE_TARGET = 1.6;
const OURS_VS_OPENID_CLIENT_TARGET = 0.45;

/** A client in its own process, driven line by line. */
interface Worker {
  name: string;
  child: ChildProcess;
  lines: AsyncIterator<string>;
  samples: number[];
}

async function main(): Promise<void> {
  const pem = (k: import('node:crypto').KeyObject, type: 'pkcs8' | 'spki') =>
    k.export({ format: 'pem', type }).toString();
  const rp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const assertionKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const encKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const baseStub = await startStub(pem(rp.publicKey, 'spki'), CLIENT_ID, NONCE);
  const fapiStub = await startStub(pem(rp.publicKey, 'spki'), CLIENT_ID, NONCE, pem(encKey.publicKey, 'spki'));
  const common = {
    BENCH_CLIENT_ID: CLIENT_ID,
    BENCH_NONCE: NONCE,
    BENCH_RP_PRIVATE_KEY: pem(rp.privateKey, 'pkcs8'),
    BENCH_ASSERTION_KEY: pem(assertionKey, 'pkcs8'),
    BENCH_ID_TOKEN_KEY: pem(encKey.privateKey, 'pkcs8'),
  };
  const workers = [
    startWorker('passport-nd-id, base profile (authorization URL, callback, userinfo)', {
      ...common,
      BENCH_ROLE: 'ours-base',
      BENCH_ORIGIN: baseStub.origin,
    }),
    startWorker('passport-nd-id, FAPI 2.0 (DPoP key, PAR, callback + JWE ID token, userinfo)', {
      ...common,
      BENCH_ROLE: 'ours-fapi',
      BENCH_ORIGIN: fapiStub.origin,
    }),
    startWorker('the FAPI floor: base login + key, 5 signatures, ID token decryption, round trip', {
      ...common,
      BENCH_ROLE: 'floor',
      BENCH_ORIGIN: baseStub.origin,
      BENCH_FAPI_ORIGIN: fapiStub.origin,
    }),
    startWorker('openid-client 6, the same FAPI 2.0 login (attributes with jose)', {
      ...common,
      BENCH_ROLE: 'openid-client',
      BENCH_ORIGIN: fapiStub.origin,
    }),
  ];
  const baselineDir = process.env.BENCH_BASELINE;
  if (baselineDir !== undefined && baselineDir !== '') {
    workers.push(
      startWorker('baseline FAPI 2.0 login (BENCH_BASELINE)', {
        ...common,
        BENCH_ROLE: 'ours-fapi',
        BENCH_ORIGIN: fapiStub.origin,
        BENCH_SRC: baselineDir,
      }),
    );
  }
  for (const w of workers) {
    const data = (await ask(w, 'check')) as Record<string, string>;
    for (const [scope, value] of Object.entries(BENCH_ATTRIBUTES)) {
      if (data[scope] !== value) throw new Error(`${w.name}: ${scope} did not decrypt to the expected value`);
    }
    await ask(w, `run ${WARMUP}`);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = [...workers.slice(round % workers.length), ...workers.slice(0, round % workers.length)];
    for (const w of order) w.samples.push(((await ask(w, `run ${ITERATIONS}`)) as { us: number }).us);
  }
  for (const w of workers) w.child.stdin!.end('exit\n');
  baseStub.child.kill('SIGTERM');
  fapiStub.child.kill('SIGTERM');

  const [base, fapi, floor, openid, baseline] = workers as [Worker, Worker, Worker, Worker, Worker | undefined];
  const paired = (a: Worker, b: Worker) => a.samples.map((x, i) => x / b.samples[i]!);
  const range = (xs: number[]) =>
    `median ${median(xs).toFixed(2)}x, rounds ${Math.min(...xs).toFixed(2)}-${Math.max(...xs).toFixed(2)}x`;
  const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  const fapiVsBase = paired(fapi, base);
  const oursVsOpenid = paired(fapi, openid);
  process.stdout.write(
    [
      `Relying-party CPU per login, each client in its own process: node ${process.version}, ${ITERATIONS} logins x ${ROUNDS} interleaved rounds after ${WARMUP} warm-up logins`,
      `Machine: ${cpus().length} CPUs, load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} at the end of the run.`,
      '',
      ...workers.map(
        (w) =>
          `${w.name.padEnd(80)} ${median(w.samples).toFixed(0).padStart(6)} µs CPU/login (median round; best ${Math.min(...w.samples).toFixed(0)})`,
      ),
      '',
      `FAPI / base                   ${range(fapiVsBase)}   target <= ${FAPI_VS_BASE_TARGET}x  ${verdict(median(fapiVsBase) <= FAPI_VS_BASE_TARGET)}`,
      `FAPI: ours / openid-client 6  ${range(oursVsOpenid)}   target <= ${OURS_VS_OPENID_CLIENT_TARGET}x  ${verdict(median(oursVsOpenid) <= OURS_VS_OPENID_CLIENT_TARGET)}`,
      `FAPI floor / base             ${range(paired(floor, base))}   (the least FAPI / base can be)`,
      `FAPI / FAPI floor             ${range(paired(fapi, floor))}   (the profile's code around the floor)`,
      ...(baseline === undefined
        ? []
        : [
            `FAPI: ours / baseline        ${range(paired(fapi, baseline))}`,
            `baseline FAPI / base          ${range(paired(baseline, base))}`,
          ]),
    ].join('\n') + '\n',
  );
}

function startWorker(name: string, env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [...process.execArgv, join(__dirname, 'fapi-worker.ts')], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  const rl: Interface = createInterface({ input: child.stdout! });
  return { name, child, lines: rl[Symbol.asyncIterator](), samples: [] };
}

async function ask(w: Worker, command: string): Promise<unknown> {
  w.child.stdin!.write(`${command}\n`);
  const next = await w.lines.next();
  if (next.done) throw new Error(`${w.name}: the worker exited`);
  return JSON.parse(next.value) as unknown;
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, c) => a - c);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
