/**
 * `npm run bench:qr-page`: the provider's CPU time for one QR page (an interactive authorize,
 * answered 200 with the page and its QR code) beside its baseline, one discovery request, on the
 * same provider in its own process (`load-provider-server.ts`, so the CPU measured is the
 * server's alone). Rounds alternate A B A B (authorize, discovery, then discovery, authorize, …)
 * so a burst of load elsewhere on the machine hits both alike; each figure is the median round
 * and the ratio the median of the per-round ratios. Target: at most 1.5x.
 *
 * QR_REQUESTS (default 3000 per round), QR_ROUNDS (default 14), QR_WARMUP (default 3000 of each),
 * QR_CONCURRENCY (default 4). QR_PROFILE=DIR writes the server's `--cpu-prof` profile to DIR.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { positiveInt } from './env.js';

const REQUESTS = positiveInt('QR_REQUESTS', 3000);
const ROUNDS = positiveInt('QR_ROUNDS', 14);
const WARMUP = positiveInt('QR_WARMUP', 3000);
const CONCURRENCY = positiveInt('QR_CONCURRENCY', 4);
/** Past the provider's default approval window (120 s): the waiting QR pages of a round expire. */
const PAST_LIFETIME_MS = 121_000;
const CLIENT = {
  clientId: 'qr-client',
  clientSecret: 'qr-client-secret-0123456789',
  redirectUri: 'http://127.0.0.1:9/cb',
};
const AUTHORIZE = `/v2/oauth/authorize?${new URLSearchParams({
  response_type: 'code',
  client_id: CLIENT.clientId,
  redirect_uri: CLIENT.redirectUri,
  scope: 'openid profile.name profile.nric_number profile.passport_expiry_date',
  state: 'qr-state',
  nonce: 'qr-nonce',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
}).toString()}`;
const DISCOVERY = '/v2/.well-known/openid-configuration';

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** GET `path`; resolves with the status once the whole body is read. */
function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends `message` to the server process and resolves with its answer of type `answer`. */
function ask(child: ChildProcess, message: Record<string, unknown>, answer: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const onMessage = (m: Record<string, unknown>): void => {
      if (m['type'] !== answer) return;
      child.off('message', onMessage);
      resolve(m);
    };
    child.on('message', onMessage);
    child.send(message);
  });
}

async function startServer(): Promise<{ child: ChildProcess; port: number }> {
  const profile = process.env.QR_PROFILE;
  const child = fork(join(__dirname, 'load-provider-server.ts'), [], {
    execArgv: ['--import', 'tsx', ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
  });
  const publicKeyPem = generateKeyPairSync('rsa', { modulusLength: 2048 })
    .publicKey.export({ format: 'pem', type: 'spki' })
    .toString();
  const ready = await ask(
    child,
    { type: 'start', start: { mode: 'provider-interactive', publicKeyPem, ...CLIENT } },
    'ready',
  );
  return { child, port: ready['port'] as number };
}

/** Server CPU µs per request for `n` GETs of `path`, `CONCURRENCY` at a time. */
async function round(server: { child: ChildProcess; port: number }, path: string, n: number): Promise<number> {
  const cpu = async (): Promise<number> => (await ask(server.child, { type: 'cpu' }, 'cpu'))['micros'] as number;
  const before = await cpu();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next += 1;
        const status = await get(server.port, path);
        if (status !== 200) throw new Error(`bench:qr-page: ${path} answered ${status}`);
      }
    }),
  );
  const micros = ((await cpu()) - before) / n;
  if (path === AUTHORIZE) await ask(server.child, { type: 'advance', ms: PAST_LIFETIME_MS }, 'advanced');
  return micros;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const server = await startServer();
  await round(server, AUTHORIZE, WARMUP);
  await round(server, DISCOVERY, WARMUP);
  const page: number[] = [];
  const discovery: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      page.push(await round(server, AUTHORIZE, REQUESTS));
      discovery.push(await round(server, DISCOVERY, REQUESTS));
    } else {
      discovery.push(await round(server, DISCOVERY, REQUESTS));
      page.push(await round(server, AUTHORIZE, REQUESTS));
    }
  }
  const ratios = page.map((p, i) => p / discovery[i]!).sort((a, b) => a - b);
  const q = (f: number): string => ratios[Math.floor(f * (ratios.length - 1))]!.toFixed(2);
  console.log(
    `bench:qr-page: ${ROUNDS} rounds of ${REQUESTS} requests each, A B A B, concurrency ${CONCURRENCY}; median round`,
  );
  console.log(`  QR page (interactive authorize) ${median(page).toFixed(1)} µs CPU per request`);
  console.log(`  discovery (baseline)            ${median(discovery).toFixed(1)} µs CPU per request`);
  console.log(
    `  QR page / discovery: ${median(ratios).toFixed(2)}x (rounds ${q(0.25)}–${q(0.75)}); target at most 1.5x`,
  );
  server.child.send({ type: 'exit' });
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
