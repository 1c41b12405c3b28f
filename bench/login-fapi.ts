/**
 * `npm run bench` (third part): the relying party's CPU per whole login in the FAPI 2.0 profile
 * beside the base profile, in one run. A login is what the app does: start it (base: build the
 * authorization URL; FAPI: make the login's DPoP key, sign a client assertion and a proof, push
 * the request), then the callback (FAPI: a new assertion and proof, decrypt the ID token) and
 * userinfo (FAPI: a proof with `ath`), decrypting three attributes. Each profile talks to its own
 * stub provider in a child process serving precomputed answers, so only the RP's CPU counts.
 *
 * Target (issue 22): the profile costs at most 1.5x the base profile's CPU per login.
 * Environment: BENCH_ITERATIONS (default 300 logins per round), BENCH_ROUNDS (7), BENCH_WARMUP (200).
 */
import { generateKeyPairSync } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { IdClient } from '../src/client/id-client.js';
import { generatePkcePair } from '../src/pkce.js';
import { positiveInt } from '../scripts/env.js';
import { startStub } from './stub-process.js';
import { BENCH_ATTRIBUTES } from './stub-server.js';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 300);
const ROUNDS = positiveInt('BENCH_ROUNDS', 7);
const WARMUP = positiveInt('BENCH_WARMUP', 200);
const CLIENT_ID = 'bench-client';
const NONCE = 'bench-nonce-0123456789';
const REDIRECT_URI = 'https://rp.example/callback';
const TARGET = 1.5;

type Login = () => Promise<Record<string, string>>;

async function main(): Promise<void> {
  const rp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = rp.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const rpPublicPem = rp.publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const assertionKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const encKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const baseStub = await startStub(rpPublicPem, CLIENT_ID, NONCE);
  const fapiStub = await startStub(rpPublicPem, CLIENT_ID, NONCE, encKey.publicKey.export({ format: 'pem', type: 'spki' }).toString());

  const base = new IdClient({ clientId: CLIENT_ID, clientSecret: 'bench-secret', privateKey: privateKeyPem, redirectUri: REDIRECT_URI, hostname: baseStub.origin });
  const fapi = new IdClient({
    clientId: CLIENT_ID,
    privateKey: privateKeyPem,
    redirectUri: REDIRECT_URI,
    hostname: fapiStub.origin,
    profile: 'fapi2',
    idTokenSigningAlgorithms: ['RS256'], // what the stub signs with
    clientAssertionKey: assertionKey,
    idTokenDecryptionKey: encKey.privateKey,
    authenticationContextMessage: 'Sign in to the bench',
  });
  const fapiIssuer = fapi.issuer;

  const baseLogin: Login = async () => {
    const { codeVerifier, codeChallenge } = generatePkcePair();
    base.authorizationUrl({ codeChallenge, nonce: NONCE, state: 's' });
    const { sub, accessToken } = await base.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
    return (await base.userinfo({ sub, accessToken })).data;
  };
  const fapiLogin: Login = async () => {
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const { key } = await fapi.dpopKeyForLogin();
    await fapi.pushAuthorizationRequest({ codeChallenge, nonce: NONCE, state: 's', dpopKey: key });
    const { sub, accessToken } = await fapi.callback({ code: 'bench-code', nonce: NONCE, codeVerifier, iss: fapiIssuer, dpopKey: key });
    return (await fapi.userinfo({ sub, accessToken, dpopKey: key })).data;
  };

  const scenarios = [
    { name: 'base profile (authorization URL, callback, userinfo)', login: baseLogin, samples: [] as number[] },
    { name: 'FAPI 2.0 (DPoP key, PAR, callback + JWE ID token, userinfo)', login: fapiLogin, samples: [] as number[] },
  ];
  for (const s of scenarios) {
    await check(s.name, s.login);
    for (let i = 0; i < WARMUP; i++) await s.login();
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? scenarios : [...scenarios].reverse();
    for (const s of order) s.samples.push(await measure(s.login));
  }
  base.close();
  fapi.close();
  baseStub.child.kill('SIGTERM');
  fapiStub.child.kill('SIGTERM');

  const [b, f] = scenarios as [(typeof scenarios)[0], (typeof scenarios)[0]];
  const ratios = f.samples.map((x, i) => x / b.samples[i]!);
  const ratio = median(ratios);
  process.stdout.write(
    [
      `Relying-party CPU per login, FAPI 2.0 beside the base profile: node ${process.version}, ${ITERATIONS} logins x ${ROUNDS} interleaved rounds after ${WARMUP} warm-up logins`,
      `Machine: ${cpus().length} CPUs, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end of the run.`,
      '',
      ...scenarios.map((s) => `${s.name.padEnd(62)} ${median(s.samples).toFixed(0).padStart(6)} µs CPU/login (median round; best ${Math.min(...s.samples).toFixed(0)})`),
      '',
      `FAPI / base  median ${ratio.toFixed(2)}x, rounds ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}x   target <= ${TARGET}x  ${ratio <= TARGET ? 'MET' : 'MISSED'}`,
    ].join('\n') + '\n',
  );
}

async function measure(login: Login): Promise<number> {
  if (global.gc) global.gc();
  const start = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) await login();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / ITERATIONS;
}

async function check(name: string, login: Login): Promise<void> {
  const data = await login();
  for (const [scope, value] of Object.entries(BENCH_ATTRIBUTES)) {
    if (data[scope] !== value) throw new Error(`${name}: ${scope} did not decrypt to the expected value`);
  }
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
