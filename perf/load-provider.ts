/**
 * `npm run load:provider`: the provider's CPU time per complete login (authorize → token →
 * userinfo) and logins per second, beside the floor (a bare node:http service doing the same
 * cryptography with no checks), each server in its own process. Three servers:
 *
 * - floor: authorize redirects with a code, token signs an RS256 ID token, userinfo encrypts.
 * - provider (auto-approve): our provider with `autoApprove`.
 * - provider (QR + phone): the interactive login: QR page, QR image, phone page, number match and
 *   approval, status poll, token, userinfo.
 * - provider (FAPI 2.0): auto-approve, in the FAPI 2.0 profile: PAR with a private_key_jwt
 *   assertion and a DPoP proof, authorize with the request_uri, token with an assertion and a
 *   proof (the ID token encrypted, ECDH-ES+A256KW), userinfo with a proof. Its ratio to the base
 *   auto-approve login is printed too (the driver's own signing is not the provider's CPU).
 *
 * Then the cost of one interactive authorize (the QR page) beside a trivial request (the
 * discovery document) on the same provider. Rounds are interleaved, each round of logins starting
 * with the next server, so a burst of load elsewhere hits all alike and no server always runs
 * right after the same other one; each figure is the median round, each ratio the median of the
 * per-round ratios. Every server is warmed up first (LOAD_WARMUP logins, default 1000) so it is
 * measured with its code optimised; with two cores or more and `taskset` at hand, the servers
 * run on the last core and this driver on the first (LOAD_PIN=0 turns that off). LOAD_LOGINS (default 300
 * per round), LOAD_ROUNDS (default 7), LOAD_CONCURRENCY (default 4), LOAD_REQUESTS (requests per
 * round of the authorize and discovery measurement, default ten times LOAD_LOGINS, in three times
 * as many rounds as the logins). Logins per second on one core is 1000 / (CPU ms per login): what
 * one fully busy core would serve.
 *
 * Then how the cost grows (LOAD_GROWTH=0 skips it), a table: CPU per login with 1, 100 and
 * 10 000 registered clients (auto-approve); with 10 and 10 000 pending authorizations from
 * distinct source addresses (127.1.x.y) left waiting (interactive); with 1 and 1 000 personas
 * (interactive: the phone page lists them); and the provider's heap after LOAD_HEAP_LOGINS
 * (default 100 000) completed logins once their lifetimes passed, beside its heap at the start
 * (both after a full GC).
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { cpus } from 'node:os';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { calculateJwkThumbprint, type CryptoKey, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { positiveInt } from './env.js';

const LOGINS = positiveInt('LOAD_LOGINS', 300);
const ROUNDS = positiveInt('LOAD_ROUNDS', 7);
const WARMUP = positiveInt('LOAD_WARMUP', 1000);
/**
 * Requests per round of the authorize-beside-discovery measurement: ten times as many as logins,
 * since each is about a twentieth of a login's CPU; with as few as a round's logins, one
 * collection or one scheduling hiccup in a 15 ms window moved the ratio by half.
 */
const REQUESTS = positiveInt('LOAD_REQUESTS', 10 * LOGINS);
/** Rounds of that measurement: three times as many as of logins (each takes a fraction of a second). */
const REQUEST_ROUNDS = 3 * ROUNDS;
/** Past the provider's default approval window (120 s): unanswered QR pages have expired by then. */
const AUTHORIZATION_LIFETIME_MS = 121_000;
const PIN =
  process.env.LOAD_PIN !== '0' && cpus().length >= 2 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

/** Moves every thread of process `pid` to `core`, when pinning is on. */
function pin(pid: number | undefined, core: number): void {
  if (PIN && pid !== undefined)
    spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)], { stdio: 'ignore' });
}
const CONCURRENCY = positiveInt('LOAD_CONCURRENCY', 4);
const CLIENT = {
  clientId: 'load-client',
  clientSecret: 'load-client-secret-0123456789',
  redirectUri: 'http://127.0.0.1:9/callback',
};
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(
  port: number,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

class Server {
  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  static async start(
    name: string,
    mode: string,
    publicKeyPem: string,
    extra: Record<string, unknown> = {},
  ): Promise<Server> {
    const child = fork(join(__dirname, 'load-provider-server.ts'), [], {
      execArgv: ['--import', 'tsx', '--expose-gc'],
    });
    pin(child.pid, cpus().length - 1);
    const port = await new Promise<number>((resolve) => {
      child.on('message', (m: { type: string; port?: number }) => {
        if (m.type === 'ready') resolve(m.port!);
      });
      child.send({ type: 'start', start: { mode, publicKeyPem, ...CLIENT, ...extra } });
    });
    return new Server(name, child, port);
  }

  /** Ask the server something; its answer of type `answer`. */
  private ask<T>(message: Record<string, unknown>, answer: string, field: string): Promise<T> {
    return new Promise((resolve) => {
      const onMessage = (m: Record<string, unknown>): void => {
        if (m['type'] !== answer) return;
        this.child.off('message', onMessage);
        resolve(m[field] as T);
      };
      this.child.on('message', onMessage);
      this.child.send(message);
    });
  }

  /** CPU time of the server process so far, in µs. */
  cpu(): Promise<number> {
    return this.ask({ type: 'cpu' }, 'cpu', 'micros');
  }

  /** Heap in use after a full GC, in bytes. */
  heap(): Promise<number> {
    return this.ask({ type: 'heap' }, 'heap', 'bytes');
  }

  /** Move the provider's clock forward. */
  advance(ms: number): Promise<void> {
    return this.ask({ type: 'advance', ms }, 'advanced', 'type');
  }
}

const AUTHORIZE = `/v2/oauth/authorize?${new URLSearchParams({
  response_type: 'code',
  client_id: CLIENT.clientId,
  redirect_uri: CLIENT.redirectUri,
  scope: 'openid profile.name profile.nric_number profile.passport_expiry_date',
  state: 'load-state',
  nonce: 'load-nonce',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
}).toString()}`;

function expect(ok: boolean, what: string): void {
  if (!ok) throw new Error(`load:provider: ${what}`);
}

/** Token and userinfo for a redirect carrying a code. */
async function redeem(port: number, location: string): Promise<void> {
  const code = new URL(location).searchParams.get('code') ?? '';
  const token = await call(
    port,
    'POST',
    '/v2/oauth/token',
    new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: CLIENT.redirectUri,
      code_verifier: VERIFIER,
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
    }).toString(),
    { 'content-type': 'application/x-www-form-urlencoded' },
  );
  expect(token.status === 200, `token answered ${token.status}`);
  const { access_token } = JSON.parse(token.body) as { access_token: string };
  const userinfo = await call(port, 'GET', '/v2/oauth/userinfo', undefined, {
    authorization: `Bearer ${access_token}`,
  });
  expect(userinfo.status === 200, `userinfo answered ${userinfo.status}`);
}

async function autoLogin(port: number): Promise<void> {
  const a = await call(port, 'GET', AUTHORIZE);
  expect(a.status === 302, `authorize answered ${a.status}`);
  await redeem(port, String(a.headers['location']));
}

async function interactiveLogin(port: number): Promise<void> {
  const page = await call(port, 'GET', AUTHORIZE, undefined, {
    'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/130.0 Safari/537.36',
  });
  expect(page.status === 200, `authorize answered ${page.status}`);
  const phoneUrl = new URL(/data-qr-payload="([^"]+)"/.exec(page.body)?.[1] ?? '');
  const image = /<img class="qr"[^>]*src="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const match = /data-match-code="(\d\d)"/.exec(page.body)?.[1] ?? '';
  const statusUrl = (JSON.parse(/id="qr-config">([^<]*)</.exec(page.body)?.[1] ?? '{}') as { statusUrl: string })
    .statusUrl;
  expect((await call(port, 'GET', image)).status === 200, 'QR image');
  expect((await call(port, 'GET', phoneUrl.pathname)).status === 200, 'phone page');
  const approve = await call(
    port,
    'POST',
    phoneUrl.pathname,
    new URLSearchParams({ decision: 'approve', persona: 'ada', match }).toString(),
    {
      'content-type': 'application/x-www-form-urlencoded',
    },
  );
  expect(approve.status === 200, `approve answered ${approve.status}`);
  const status = JSON.parse((await call(port, 'GET', statusUrl)).body) as { redirectTo: string };
  await redeem(port, status.redirectTo);
}

/** The keys of the FAPI 2.0 load client and its login's DPoP key (one for every login: the driver's CPU is not measured). */
interface FapiKeys {
  signing: CryptoKey;
  kid: string;
  dpop: CryptoKey;
  dpopJwk: JWK;
  jwks: { keys: JWK[] };
}

async function fapiKeys(): Promise<FapiKeys> {
  const sig = await generateKeyPair('ES256', { extractable: true });
  const enc = await generateKeyPair('ECDH-ES+A256KW', { extractable: true });
  const dpop = await generateKeyPair('ES256', { extractable: true });
  const sigJwk = await exportJWK(sig.publicKey);
  const kid = await calculateJwkThumbprint(sigJwk);
  const encJwk = await exportJWK(enc.publicKey);
  return {
    signing: sig.privateKey,
    kid,
    dpop: dpop.privateKey,
    dpopJwk: await exportJWK(dpop.publicKey),
    jwks: {
      keys: [
        { ...sigJwk, kid, use: 'sig', alg: 'ES256' },
        { ...encJwk, kid: 'enc-1', use: 'enc', alg: 'ECDH-ES+A256KW' },
      ],
    },
  };
}

let jtiCounter = 0;

function fapiLogin(keys: FapiKeys): (port: number) => Promise<void> {
  return async (port) => {
    const base = `http://127.0.0.1:${port}`;
    const now = Math.floor(Date.now() / 1000);
    const assertion = (): Promise<string> =>
      new SignJWT({
        iss: CLIENT.clientId,
        sub: CLIENT.clientId,
        aud: `${base}/v2`,
        jti: `a${jtiCounter++}`,
        iat: now,
        exp: now + 60,
      })
        .setProtectedHeader({ alg: 'ES256', kid: keys.kid })
        .sign(keys.signing);
    const proof = (htm: string, path: string, extra: Record<string, string> = {}): Promise<string> =>
      new SignJWT({ htm, htu: `${base}${path}`, iat: now, jti: `p${jtiCounter++}`, ...extra })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: keys.dpopJwk })
        .sign(keys.dpop);
    const auth = {
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await assertion(),
    };
    const par = await call(
      port,
      'POST',
      '/v2/oauth/par',
      new URLSearchParams({ ...Object.fromEntries(new URL(AUTHORIZE, base).searchParams), ...auth }).toString(),
      {
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await proof('POST', '/v2/oauth/par'),
      },
    );
    expect(par.status === 201, `PAR answered ${par.status}`);
    const { request_uri } = JSON.parse(par.body) as { request_uri: string };
    const a = await call(
      port,
      'GET',
      `/v2/oauth/authorize?${new URLSearchParams({ client_id: CLIENT.clientId, request_uri })}`,
    );
    expect(a.status === 302, `authorize answered ${a.status}`);
    const code = new URL(String(a.headers['location'])).searchParams.get('code') ?? '';
    const token = await call(
      port,
      'POST',
      '/v2/oauth/token',
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: CLIENT.redirectUri,
        code_verifier: VERIFIER,
        client_assertion_type: auth.client_assertion_type,
        client_assertion: await assertion(),
      }).toString(),
      { 'content-type': 'application/x-www-form-urlencoded', dpop: await proof('POST', '/v2/oauth/token') },
    );
    expect(token.status === 200, `token answered ${token.status}`);
    const { access_token } = JSON.parse(token.body) as { access_token: string };
    const ath = createHash('sha256').update(access_token).digest('base64url');
    const userinfo = await call(port, 'GET', '/v2/oauth/userinfo', undefined, {
      authorization: `DPoP ${access_token}`,
      dpop: await proof('GET', '/v2/oauth/userinfo', { ath }),
    });
    expect(userinfo.status === 200, `userinfo answered ${userinfo.status}`);
  };
}

async function run(
  server: Server,
  n: number,
  one: (port: number) => Promise<void>,
): Promise<{ cpuMs: number; perSecond: number }> {
  const before = await server.cpu();
  const started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        next += 1;
        await one(server.port);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = (await server.cpu()) - before;
  return { cpuMs: cpu / 1000 / n, perSecond: n / seconds };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  pin(process.pid, 0);
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const floor = await Server.start('floor', 'floor', publicKeyPem);
  const auto = await Server.start('provider, auto-approve', 'provider-auto', publicKeyPem);
  const qr = await Server.start('provider, QR + phone', 'provider-interactive', publicKeyPem);
  const keys = await fapiKeys();
  const fapi = await Server.start('provider, FAPI 2.0', 'provider-fapi', publicKeyPem, { jwks: keys.jwks });
  const scenarios = [
    { server: floor, one: autoLogin, cpu: [] as number[], rate: [] as number[] },
    { server: auto, one: autoLogin, cpu: [] as number[], rate: [] as number[] },
    { server: qr, one: interactiveLogin, cpu: [] as number[], rate: [] as number[] },
    { server: fapi, one: fapiLogin(keys), cpu: [] as number[], rate: [] as number[] },
  ];
  for (const s of scenarios) await run(s.server, WARMUP, s.one);
  const authorizeCpu: number[] = [];
  const trivialCpu: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with the next server, so no server always runs right after the same other one.
    for (let k = 0; k < scenarios.length; k++) {
      const s = scenarios[(round + k) % scenarios.length]!;
      const r = await run(s.server, LOGINS, s.one);
      s.cpu.push(r.cpuMs);
      s.rate.push(r.perSecond);
    }
  }
  // The authorize beside discovery, in rounds of their own: each is cheap, so there are more of
  // them, each taking the two in turn (in alternating order), on the interactive provider.
  const authorize = async (port: number): Promise<void> => {
    expect((await call(port, 'GET', AUTHORIZE)).status === 200, 'authorize');
  };
  const discovery = async (port: number): Promise<void> => {
    expect((await call(port, 'GET', '/v2/.well-known/openid-configuration')).status === 200, 'discovery');
  };
  for (let round = 0; round < REQUEST_ROUNDS; round++) {
    for (const which of round % 2 === 0 ? ['authorize', 'discovery'] : ['discovery', 'authorize']) {
      if (which === 'authorize') {
        authorizeCpu.push((await run(qr, REQUESTS, authorize)).cpuMs);
        // The QR pages' pending authorizations expire before the next round, as unanswered ones do.
        await qr.advance(AUTHORIZATION_LIFETIME_MS);
      } else {
        trivialCpu.push((await run(qr, REQUESTS, discovery)).cpuMs);
      }
    }
  }
  const floorCpu = scenarios[0]!.cpu;
  /** Median of the per-round ratios a/b, with the middle half of the rounds. */
  const ratio = (a: number[], b: number[]): string => {
    const r = a.map((x, i) => x / b[i]!).sort((x, y) => x - y);
    const q = (f: number): string => r[Math.floor(f * (r.length - 1))]!.toFixed(2);
    return `${median(r).toFixed(2)}x (rounds ${q(0.25)}–${q(0.75)})`;
  };
  console.log(
    `load:provider: ${ROUNDS} rounds of ${LOGINS} logins, concurrency ${CONCURRENCY}${PIN ? ', servers pinned to the last core' : ''}; median round`,
  );
  for (const s of scenarios) {
    console.log(
      `  ${s.server.name.padEnd(24)} ${median(s.cpu).toFixed(3)} ms CPU/login  ${ratio(s.cpu, floorCpu)} floor  ${(1000 / median(s.cpu)).toFixed(0)} logins/s on one core  (${median(s.rate).toFixed(0)} logins/s measured, shared machine)`,
    );
  }
  console.log(
    `  FAPI 2.0 login (auto-approve) beside the base auto-approve login: ${ratio(scenarios[3]!.cpu, scenarios[1]!.cpu)}`,
  );
  console.log(
    '  targets: auto-approve at most 1.2x floor; interactive login at most 3x floor; interactive authorize at most 1.5x a trivial request',
  );
  const a = median(authorizeCpu);
  const t = median(trivialCpu);
  console.log(
    `  interactive authorize (QR page) ${(a * 1000).toFixed(0)} µs CPU; trivial request (discovery) ${(t * 1000).toFixed(0)} µs CPU: ${ratio(authorizeCpu, trivialCpu)}; ${REQUEST_ROUNDS} rounds of ${REQUESTS} requests each`,
  );
  for (const s of scenarios) s.server.child.kill();
}

/** One request from a given local address, on a connection of its own. */
function callFrom(port: number, localAddress: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, localAddress }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** `k` pending authorizations, each from its own source address (127.1.x.y and up). */
async function prefill(port: number, k: number): Promise<void> {
  const per = 8;
  for (let i = 0; i < k; i += per) {
    await Promise.all(
      Array.from({ length: Math.min(per, k - i) }, (_, j) => {
        const n = i + j;
        return callFrom(port, `127.${1 + (n >> 16)}.${(n >> 8) & 255}.${n & 255 || 1}`, AUTHORIZE).then((status) =>
          expect(status === 200, `prefill authorize answered ${status}`),
        );
      }),
    );
  }
}

/** Median CPU ms per login of `one` on a fresh server, after a warm-up. */
async function growthCpu(
  name: string,
  mode: string,
  publicKeyPem: string,
  extra: Record<string, number>,
  one: (port: number) => Promise<void>,
  before?: (server: Server) => Promise<void>,
): Promise<number> {
  const server = await Server.start(name, mode, publicKeyPem, extra);
  try {
    await run(server, Math.min(WARMUP, 500), one);
    if (before) await before(server);
    const cpu: number[] = [];
    for (let round = 0; round < GROWTH_ROUNDS; round++) cpu.push((await run(server, GROWTH_LOGINS, one)).cpuMs);
    return median(cpu);
  } finally {
    server.child.kill();
  }
}

const GROWTH = process.env.LOAD_GROWTH !== '0';
const GROWTH_LOGINS = positiveInt('LOAD_GROWTH_LOGINS', 200);
const GROWTH_ROUNDS = positiveInt('LOAD_GROWTH_ROUNDS', 3);
const HEAP_LOGINS = positiveInt('LOAD_HEAP_LOGINS', 100_000);

async function growth(): Promise<void> {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const publicKeyPem = publicKey.export({ format: 'pem', type: 'spki' }).toString();
  const rows: [string, string][] = [];
  const show = (what: string, ms: number): void => {
    rows.push([what, `${ms.toFixed(3)} ms`]);
    console.log(`  ${what.padEnd(58)} ${ms.toFixed(3)} ms CPU/login`);
  };
  console.log(`load:provider growth: ${GROWTH_ROUNDS} rounds of ${GROWTH_LOGINS} logins per row, median round`);
  for (const clients of [1, 100, 10_000]) {
    show(
      `auto-approve, ${clients} registered client${clients === 1 ? '' : 's'}`,
      await growthCpu('clients', 'provider-auto', publicKeyPem, { clients }, autoLogin),
    );
  }
  for (const pending of [10, 10_000]) {
    show(
      `interactive, ${pending} pending authorizations from distinct addresses`,
      await growthCpu(
        'pending',
        'provider-interactive',
        publicKeyPem,
        { maxPending: 100_000, authorizationTtl: 3600 },
        interactiveLogin,
        (server) => prefill(server.port, pending),
      ),
    );
  }
  for (const count of [1, 1000]) {
    show(
      `interactive, ${count} persona${count === 1 ? '' : 's'}`,
      await growthCpu('personas', 'provider-interactive', publicKeyPem, { personas: count }, interactiveLogin),
    );
  }
  const server = await Server.start('heap', 'provider-auto', publicKeyPem);
  try {
    await run(server, 200, autoLogin);
    const start = await server.heap();
    const started = Date.now();
    await run(server, HEAP_LOGINS, autoLogin);
    const full = await server.heap();
    await server.advance(2 * 3600 * 1000);
    // One more login: the stores drop what expired as they are next written.
    await run(server, 1, autoLogin);
    const after = await server.heap();
    const mb = (b: number): string => `${(b / 1024 / 1024).toFixed(1)} MB`;
    console.log(
      `  heap: start ${mb(start)}; after ${HEAP_LOGINS} logins ${mb(full)}; once their lifetimes passed ${mb(after)} (${((after / start - 1) * 100).toFixed(1)}% from start; ${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
  } finally {
    server.child.kill();
  }
}

main()
  .then(() => (GROWTH ? growth() : undefined))
  .then(() => agent.destroy())
  .catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
