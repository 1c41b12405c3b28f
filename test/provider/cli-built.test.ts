/**
 * The built `nd-id-provider` (dist/, run `npm run build` first) as its own process: --version,
 * --help with examples, `init`, the refusals and audit findings it logs as they happen, and the
 * ways a CI job ends a run and gets the verdict (the finish request, SIGTERM, --exit-after).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generatePkcePair, generateState, IdClient } from '../../src/client.js';
import { testKeyPair } from '../helpers/keys.js';

const CLI = join(process.cwd(), 'dist', 'cjs', 'provider', 'cli.js');
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

interface Run {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  exit: Promise<number | null>;
}

const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function runBuilt(args: string[]): Run {
  if (!existsSync(CLI)) throw new Error('dist/ is missing: run `npm run build` first');
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ND_ID_SUBJECT_SECRET: 'cli-built-subject-secret' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stdin.end();
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // 'close', not 'exit': the output read after it is then complete.
  const exit = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

async function ready(run: Run): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const check = (): void => {
      const m = /ready at (http:\/\/\S+) /.exec(run.out());
      if (m) resolve(m[1]!);
    };
    run.child.stdout.on('data', check);
    check();
    void run.exit.then((code) => reject(new Error(`exited with ${code} before it was ready: ${run.err()}`)));
  });
}

/** Resolves once `pattern` appears on stderr. */
function stderrShows(run: Run, pattern: RegExp): Promise<string> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (pattern.test(run.err())) resolve(run.err());
    };
    run.child.stderr.on('data', check);
    check();
  });
}

const dir = mkdtempSync(join(tmpdir(), 'nd-id-cli-built-'));
const clients = join(dir, 'clients.json');
const CLIENT = {
  clientId: 'demo',
  clientSecret: 'demo-secret-value-0123',
  redirectUri: 'http://localhost:3000/callback',
};
writeFileSync(
  clients,
  JSON.stringify([
    {
      clientId: CLIENT.clientId,
      clientSecret: CLIENT.clientSecret,
      redirectUris: [CLIENT.redirectUri],
      publicKey: testKeyPair('rp').publicKeyPem,
    },
  ]),
);

function idClient(baseUrl: string): IdClient {
  return new IdClient({ ...CLIENT, privateKey: testKeyPair('rp').privateKeyPem, hostname: baseUrl });
}

/** A correct login: state checked, ID token checked, userinfo read. */
async function goodLogin(baseUrl: string): Promise<void> {
  const app = idClient(baseUrl);
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const state = generateState();
  const { url, nonce } = app.authorizationUrl({ state, codeChallenge, scope: 'openid profile.name' });
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
  expect(back.searchParams.get('state')).toBe(state);
  const { sub, accessToken } = await app.callback({ code: back.searchParams.get('code') ?? '', codeVerifier, nonce });
  await app.userinfo({ sub, accessToken });
}

/** Redeems the code and stops there: no userinfo, as an app that dropped the login would. */
async function loginWithoutUserinfo(baseUrl: string): Promise<void> {
  const app = idClient(baseUrl);
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const { url, nonce } = app.authorizationUrl({ state: generateState(), codeChallenge });
  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');
  await app.callback({ code: back.searchParams.get('code') ?? '', codeVerifier, nonce });
}

describe('nd-id-provider (built): version, help, init', () => {
  it('prints the package version with --version and exits 0', async () => {
    const run = runBuilt(['--version']);
    expect(await run.exit).toBe(0);
    expect(run.out()).toBe(`nd-id-provider ${version}\n`);
  });

  it('prints help with examples, init and the ways to end a run', async () => {
    const run = runBuilt(['--help']);
    expect(await run.exit).toBe(0);
    expect(run.out()).toMatch(
      /\nExamples:\n {2}nd-id-provider init --redirect-uri http:\/\/localhost:3000\/auth\/callback\n/,
    );
    for (const flag of [
      '--strict-client-auth',
      '--exit-after',
      '--version',
      'POST\n/_provider/conformance/finish',
      'SIGTERM',
    ])
      expect(run.out()).toContain(flag);
  });

  it('init writes a key pair and a clients.json the provider starts with, and refuses to overwrite them without --force', async () => {
    const target = mkdtempSync(join(tmpdir(), 'nd-id-init-'));
    const first = runBuilt(['init', '--redirect-uri', 'http://localhost:3000/auth/callback', '--dir', target]);
    expect(await first.exit).toBe(0);
    const privatePem = readFileSync(join(target, 'rp-private-key.pem'), 'utf8');
    const publicPem = readFileSync(join(target, 'rp-public-key.pem'), 'utf8');
    expect(createPrivateKey(privatePem).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(createPublicKey(privatePem).export({ format: 'pem', type: 'spki' })).toBe(publicPem);
    expect(statSync(join(target, 'rp-private-key.pem')).mode & 0o077).toBe(0);
    const written = JSON.parse(readFileSync(join(target, 'clients.json'), 'utf8')) as {
      clients: Array<Record<string, unknown>>;
    };
    expect(written.clients[0]).toMatchObject({
      clientId: 'my-app',
      redirectUris: ['http://localhost:3000/auth/callback'],
      publicKeyFile: 'rp-public-key.pem',
    });
    const secret = String(written.clients[0]!.clientSecret);
    expect(secret.length).toBeGreaterThanOrEqual(43);
    expect(first.out()).not.toContain(secret);

    const again = runBuilt(['init', '--redirect-uri', 'http://localhost:3000/auth/callback', '--dir', target]);
    expect(await again.exit).toBe(2);
    expect(again.err()).toMatch(/nothing written, 4 mistakes/);
    expect(again.err()).toMatch(/clients\.json exists; keep it, or pass --force/);
    expect(readFileSync(join(target, 'rp-private-key.pem'), 'utf8')).toBe(privatePem);

    const forced = runBuilt([
      'init',
      '--redirect-uri',
      'http://localhost:3000/auth/callback',
      '--dir',
      target,
      '--force',
    ]);
    expect(await forced.exit).toBe(0);
    expect(readFileSync(join(target, 'rp-private-key.pem'), 'utf8')).not.toBe(privatePem);

    const served = runBuilt(['--clients', join(target, 'clients.json'), '--port', '0']);
    const baseUrl = await ready(served);
    expect((await fetch(`${baseUrl}/v2/.well-known/openid-configuration`)).status).toBe(200);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
  });

  it('SIGHUP (the terminal that started it closed) ends the run with the verdict, like SIGTERM', async () => {
    const clients = join(mkdtempSync(join(tmpdir(), 'nd-id-hup-')), 'clients.json');
    writeFileSync(
      clients,
      JSON.stringify([
        {
          clientId: 'hup-rp',
          clientSecret: 'hup-rp-secret-0123456789',
          redirectUris: ['http://127.0.0.1:3000/cb'],
          userinfo: false,
        },
      ]),
    );
    const run = runBuilt(['--clients', clients, '--port', '0']);
    await ready(run);
    run.child.kill('SIGHUP');
    expect(await run.exit).toBe(0);
    expect(run.err()).toContain('nd-id-provider: SIGHUP received; ending the run');
    expect(run.out()).toMatch(/Audit: no findings\.\nVerdict: PASSED/);
  });

  it('init refuses a callback URL the provider would refuse, writing nothing', async () => {
    const target = mkdtempSync(join(tmpdir(), 'nd-id-init-bad-'));
    const run = runBuilt(['init', '--redirect-uri', 'http://example.com/cb', '--dir', target]);
    expect(await run.exit).toBe(2);
    expect(run.err()).toMatch(/--redirect-uri must be https, or http on a loopback host/);
    expect(existsSync(join(target, 'clients.json'))).toBe(false);
  });
});

describe('nd-id-provider (built): what it logs as it happens', () => {
  it('logs each refused request with its code, endpoint and client, and each audit finding, without --log and without secrets', async () => {
    const run = runBuilt(['--clients', clients, '--port', '0', '--auto-approve']);
    const baseUrl = await ready(run);
    const { codeChallenge } = generatePkcePair();
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT.clientId,
      redirect_uri: 'http://127.0.0.1:3000/callback',
      scope: 'openid',
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
    });
    expect((await fetch(`${baseUrl}/v2/oauth/authorize?${q.toString()}`)).status).toBe(400);
    const afterAuthorize = await stderrShows(run, /audit: finding redirect_uri_not_registered/);
    expect(afterAuthorize).toMatch(
      /authorize: refused: redirect_uri_mismatch for client demo: .*Sent: http:\/\/127\.0\.0\.1:3000\/callback\. Registered: http:\/\/localhost:3000\/callback\. Likely cause: the host differs/,
    );
    expect(afterAuthorize).toMatch(/audit: finding redirect_uri_not_registered for client demo \(1\)/);

    const token = await fetch(`${baseUrl}/v2/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_id: 'demo',
        client_secret: 'not-the-secret',
        grant_type: 'authorization_code',
        code: 'abc',
        code_verifier: 'v'.repeat(43),
        redirect_uri: CLIENT.redirectUri,
      }),
    });
    expect(token.status).toBe(401);
    const all = await stderrShows(run, /audit: finding client_secret_wrong/);
    expect(all).toMatch(/token: refused: invalid_client \(401\) for client demo: Client authentication failed\./);
    expect(all).not.toContain('not-the-secret');
    expect(all).not.toContain(CLIENT.clientSecret);
    // Without --log, a successful request is not logged.
    expect(all).not.toMatch(/auto-approved/);
    run.child.kill('SIGTERM');
    await run.exit;
  });
});

describe('nd-id-provider (built): ending a run and getting the verdict', () => {
  it('POST /_provider/conformance/finish answers the verdict and the process exits 0 when the app passed', async () => {
    const run = runBuilt(['--clients', clients, '--port', '0', '--auto-approve', '--conformance']);
    const baseUrl = await ready(run);
    await goodLogin(baseUrl); // baseline
    const res = await fetch(`${baseUrl}/_provider/conformance/finish`, { method: 'POST' });
    expect(res.status).toBe(200);
    const verdict = (await res.json()) as {
      passed: boolean;
      exitCode: number;
      conformance: { summary: Record<string, number>; running: boolean; cases: { id: string; status: string }[] };
      findings: unknown[];
      text: string;
    };
    expect(verdict).toMatchObject({ passed: true, exitCode: 0, findings: [] });
    expect(verdict.conformance.running).toBe(false);
    expect(verdict.conformance.cases[0]).toMatchObject({ id: 'baseline', status: 'pass' });
    expect(verdict.text).toMatch(/Verdict: PASSED\n$/);
    expect(await run.exit).toBe(0);
    expect(run.out()).toMatch(/baseline\s+must\s+accept\s+PASS/);
    expect(run.out()).toMatch(/Verdict: PASSED\n$/);
  });

  it('the finish request says failed, and the process exits 1, when a case failed', async () => {
    const run = runBuilt(['--clients', clients, '--port', '0', '--auto-approve', '--conformance']);
    const baseUrl = await ready(run);
    await loginWithoutUserinfo(baseUrl); // baseline redeemed, the app never signed the person in
    const verdict = (await (await fetch(`${baseUrl}/_provider/conformance/finish`, { method: 'POST' })).json()) as {
      passed: boolean;
      exitCode: number;
    };
    expect(verdict).toMatchObject({ passed: false, exitCode: 1 });
    expect(await run.exit).toBe(1);
    expect(run.out()).toMatch(/Verdict: FAILED\n$/);
  });

  it('SIGTERM prints the audit table and the verdict, and sets the exit status (1 with --audit-strict and findings)', async () => {
    const run = runBuilt(['--clients', clients, '--port', '0', '--auto-approve', '--audit-strict']);
    const baseUrl = await ready(run);
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: CLIENT.clientId,
      redirect_uri: CLIENT.redirectUri,
      scope: 'openid',
      nonce: generateState(),
      code_challenge: generatePkcePair().codeChallenge,
      code_challenge_method: 'S256',
    });
    expect((await fetch(`${baseUrl}/v2/oauth/authorize?${q.toString()}`, { redirect: 'manual' })).status).toBe(302);
    await stderrShows(run, /audit: finding state_missing for client demo/);
    run.child.kill('SIGTERM');
    expect(await run.exit).toBe(1);
    expect(run.err()).toMatch(/SIGTERM received; ending the run/);
    expect(run.out()).toMatch(/demo\s+state_missing\s+1\s/);
    expect(run.out()).toMatch(/Verdict: FAILED \(audit findings count\)\n$/);
  });

  it('--exit-after ends the run by itself with the verdict', async () => {
    const run = runBuilt(['--clients', clients, '--port', '0', '--exit-after', '1']);
    await ready(run);
    expect(await run.exit).toBe(0);
    expect(run.err()).toMatch(/--exit-after: 1 s passed; ending the run/);
    expect(run.out()).toMatch(/Audit: no findings\.\nVerdict: PASSED\n$/);
  });

  it('--exit-after plan ends the run once the last case of the plan is decided', async () => {
    const run = runBuilt([
      '--clients',
      clients,
      '--port',
      '0',
      '--auto-approve',
      '--conformance',
      '--exit-after',
      'plan',
    ]);
    const baseUrl = await ready(run);
    const cases = (
      (await (await fetch(`${baseUrl}/_provider/conformance`)).json()) as { cases: { level: string; id: string }[] }
    ).cases;
    for (const c of cases) {
      try {
        await goodLogin(baseUrl);
      } catch {
        // a hostile case, refused by IdClient or by the state check
      }
      if (c.level === 'userinfo') {
        await fetch(`${baseUrl}/_provider/conformance/report`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ caseId: c.id, signedIn: false }),
        });
      }
    }
    expect(await run.exit).toBe(0);
    expect(run.out()).toMatch(/21 passed, 0 failed, 0 inconclusive, 0 not run\nVerdict: PASSED\n$/);
  });

  it('refuses --exit-after plan without --conformance, and a bad --exit-after value', async () => {
    const run = runBuilt(['--clients', clients, '--exit-after', 'plan']);
    expect(await run.exit).toBe(2);
    expect(run.err()).toMatch(/--exit-after plan needs --conformance/);
    const bad = runBuilt(['--clients', clients, '--exit-after', 'soon']);
    expect(await bad.exit).toBe(2);
    expect(bad.err()).toMatch(/--exit-after takes a number of seconds/);
  });
});
