/**
 * Where the relying party's CPU goes in one FAPI 2.0 login, step by step (for profiling, not
 * part of `npm run bench`): the same login as `perf/login-fapi.ts` against the same stub, with
 * `process.cpuUsage()` around each client call, beside the base login's two calls; then the
 * profile's own operations alone (a login's DPoP key, a client assertion, a DPoP proof with and
 * without `ath`, the ECDH-ES ID-token decryption); then the floor: the least the profile can add
 * to a login (its key, five signatures, a key agreement and one more round trip, each by node:crypto
 * or node:http directly), as a ratio to the base login. Run under `node --cpu-prof --import tsx` for
 * a profile. Environment: BENCH_ITERATIONS (default 400 logins per round), BENCH_ROUNDS (5).
 */
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { systemClock } from '../src/clock.js';
import { createClientAssertion } from '../src/client/client-assertion.js';
import { createDpopProof, generateDpopKey } from '../src/client/dpop.js';
import { importIdTokenDecryptionKeys, importSigningKeys } from '../src/client/fapi-keys.js';
import { IdClient } from '../src/client/id-client.js';
import { decryptIdToken } from '../src/client/id-token-jwe.js';
import { generatePkcePair } from '../src/pkce.js';
import { positiveInt } from './env.js';
import { fapiFloor, type FloorOperation } from './floor.js';
import { startStub } from './stub-process.js';

const ITERATIONS = positiveInt('BENCH_ITERATIONS', 400);
const ROUNDS = positiveInt('BENCH_ROUNDS', 5);
const CLIENT_ID = 'bench-client';
const NONCE = 'bench-nonce-0123456789';
const REDIRECT_URI = 'https://rp.example/callback';

type Steps = Record<string, number[]>;

function cpu(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function main(): Promise<void> {
  const pem = (k: import('node:crypto').KeyObject, type: 'pkcs8' | 'spki') =>
    k.export({ format: 'pem', type }).toString();
  const rp = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const assertionKeyPem = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, 'pkcs8');
  const encKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const encKeyPem = pem(encKey.privateKey, 'pkcs8');
  const baseStub = await startStub(pem(rp.publicKey, 'spki'), CLIENT_ID, NONCE);
  const fapiStub = await startStub(pem(rp.publicKey, 'spki'), CLIENT_ID, NONCE, pem(encKey.publicKey, 'spki'));
  const privateKey = pem(rp.privateKey, 'pkcs8');
  const base = new IdClient({
    clientId: CLIENT_ID,
    clientSecret: 'bench-secret',
    privateKey,
    redirectUri: REDIRECT_URI,
    hostname: baseStub.origin,
  });
  const fapi = new IdClient({
    clientId: CLIENT_ID,
    privateKey,
    redirectUri: REDIRECT_URI,
    hostname: fapiStub.origin,
    profile: 'fapi2',
    clientAssertionKey: assertionKeyPem,
    idTokenDecryptionKey: encKeyPem,
    authenticationContextMessage: 'Sign in to the bench',
  });
  const iss = fapi.issuer;
  const baseSteps: Steps = {};
  const fapiSteps: Steps = {};
  const add = (steps: Steps, name: string, us: number) => (steps[name] ??= []).push(us);

  const baseLogin = async (acc: Record<string, number>) => {
    let t = cpu();
    const { codeVerifier, codeChallenge } = generatePkcePair();
    base.authorizationUrl({ codeChallenge, nonce: NONCE, state: 's' });
    acc['start (PKCE, authorization URL)'] = (acc['start (PKCE, authorization URL)'] ?? 0) + cpu() - t;
    t = cpu();
    const { sub, accessToken } = await base.callback({ code: 'bench-code', nonce: NONCE, codeVerifier });
    acc['callback (token call, ID token)'] = (acc['callback (token call, ID token)'] ?? 0) + cpu() - t;
    t = cpu();
    await base.userinfo({ sub, accessToken });
    acc['userinfo (call, 3 attributes)'] = (acc['userinfo (call, 3 attributes)'] ?? 0) + cpu() - t;
  };
  const fapiLogin = async (acc: Record<string, number>) => {
    let t = cpu();
    const { codeVerifier, codeChallenge } = generatePkcePair();
    const { key } = await fapi.dpopKeyForLogin();
    acc['start: PKCE + DPoP key'] = (acc['start: PKCE + DPoP key'] ?? 0) + cpu() - t;
    t = cpu();
    await fapi.pushAuthorizationRequest({ codeChallenge, nonce: NONCE, state: 's', dpopKey: key });
    acc['PAR (assertion, proof, call)'] = (acc['PAR (assertion, proof, call)'] ?? 0) + cpu() - t;
    t = cpu();
    const { sub, accessToken } = await fapi.callback({
      code: 'bench-code',
      nonce: NONCE,
      codeVerifier,
      iss,
      dpopKey: key,
    });
    acc['callback (assertion, proof, call, JWE + ID token)'] =
      (acc['callback (assertion, proof, call, JWE + ID token)'] ?? 0) + cpu() - t;
    t = cpu();
    await fapi.userinfo({ sub, accessToken, dpopKey: key });
    acc['userinfo (proof with ath, call, 3 attributes)'] =
      (acc['userinfo (proof with ath, call, 3 attributes)'] ?? 0) + cpu() - t;
  };
  for (let i = 0; i < 300; i++) {
    await baseLogin({});
    await fapiLogin({});
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const [login, steps] of [
      [baseLogin, baseSteps],
      [fapiLogin, fapiSteps],
    ] as const) {
      const acc: Record<string, number> = {};
      if (global.gc) global.gc();
      const t = cpu();
      for (let i = 0; i < ITERATIONS; i++) await login(acc);
      add(steps, 'whole login', (cpu() - t) / ITERATIONS);
      for (const [name, us] of Object.entries(acc)) add(steps, name, us / ITERATIONS);
    }
  }

  // The profile's operations alone.
  const [signing] = importSigningKeys(assertionKeyPem, 'clientAssertionKey');
  const decryption = importIdTokenDecryptionKeys(encKeyPem, 'idTokenDecryptionKey');
  const tokenUrl = new URL(`${fapiStub.origin}/v2/oauth/token`);
  const body = (await (
    await fetch(tokenUrl, { method: 'POST' }).catch(() => undefined)
  )
    ?.json()
    .catch(() => undefined)) as { id_token?: string } | undefined;
  const alone: Steps = {};
  const { key } = generateDpopKey();
  const ops: [string, () => unknown][] = [
    ['a login DPoP key (made, imported, thumbprint)', () => generateDpopKey()],
    [
      'a new key + its first proof',
      () => createDpopProof(generateDpopKey().key, { htm: 'POST', url: tokenUrl, clock: systemClock }),
    ],
    ['client assertion (ES256)', () => createClientAssertion(signing!, CLIENT_ID, iss, systemClock)],
    ['DPoP proof', () => createDpopProof(key, { htm: 'POST', url: tokenUrl, clock: systemClock })],
    [
      'DPoP proof with ath',
      () => createDpopProof(key, { htm: 'GET', url: tokenUrl, clock: systemClock, accessToken: 'a'.repeat(43) }),
    ],
  ];
  if (typeof body?.id_token === 'string')
    ops.push(['ECDH-ES+A256KW ID token decryption', () => decryptIdToken(body.id_token!, decryption)]);
  // The floor (perf/floor.ts), each operation alone.
  if (typeof body?.id_token !== 'string') throw new Error('fapi-steps: the FAPI stub gave no ID token');
  const floor = fapiFloor(fapiStub.origin, body.id_token, createPrivateKey(encKeyPem)).operations;
  ops.push(...floor.map(([name, , op]) => [name, op] as [string, () => unknown]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, op] of ops) {
      const t = cpu();
      for (let i = 0; i < ITERATIONS; i++) await op();
      add(alone, name, (cpu() - t) / ITERATIONS);
    }
  }
  base.close();
  fapi.close();
  baseStub.child.kill('SIGTERM');
  fapiStub.child.kill('SIGTERM');
  const show = (title: string, steps: Steps) =>
    [
      title,
      ...Object.entries(steps).map(([name, xs]) => `  ${name.padEnd(52)} ${median(xs).toFixed(0).padStart(6)} µs`),
    ].join('\n');
  process.stdout.write(
    [
      `CPU per step, node ${process.version}, ${ITERATIONS} logins x ${ROUNDS} rounds (median round)`,
      show('Base login', baseSteps),
      show('FAPI 2.0 login', fapiSteps),
      show('Operations alone', alone),
      floorSummary(floor, alone, median(baseSteps['whole login']!), median(fapiSteps['whole login']!)),
    ].join('\n') + '\n',
  );
}

/** The profile's floor added to the base login measured here, as a ratio: the least FAPI / base can be. */
function floorSummary(floor: FloorOperation[], alone: Steps, baseUs: number, fapiUs: number): string {
  const extra = floor.reduce((sum, [name, times]) => sum + times * median(alone[name]!), 0);
  return [
    'FAPI floor (the base login plus the floor operations above, each as often as a login needs it)',
    `  floor extras per login ${extra.toFixed(0).padStart(34)} µs`,
    `  FAPI floor / base login ${((baseUs + extra) / baseUs).toFixed(2).padStart(33)}x`,
    `  FAPI login / base login ${(fapiUs / baseUs).toFixed(2).padStart(33)}x`,
  ].join('\n');
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, c) => a - c);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

main().catch((err: unknown) => {
  process.stderr.write(`fapi-steps failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
