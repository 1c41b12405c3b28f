/** The audit from the command line: a table at exit, and --audit-strict failing a CI job on findings. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, type CliIo } from '../../src/provider/cli.js';
import { generateCodeChallenge, generateCodeVerifier } from '../../src/pkce.js';
import { testKeyPair } from '../helpers/keys.js';
import { startProviderProcess } from '../helpers/provider-process.js';

const dir = mkdtempSync(join(tmpdir(), 'nd-id-audit-cli-'));
const clients = join(dir, 'clients.json');
writeFileSync(
  clients,
  JSON.stringify([
    {
      clientId: 'demo',
      clientSecret: 'demo-secret-value',
      redirectUris: ['http://localhost:3000/callback'],
      publicKey: testKeyPair('rp').publicKeyPem,
    },
  ]),
);

/** An authorize request with no state (a finding), answered at once by --auto-approve. */
async function loginWithoutState(baseUrl: string): Promise<void> {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: 'demo',
    redirect_uri: 'http://localhost:3000/callback',
    scope: 'openid',
    nonce: 'nonce-0123456789',
    code_challenge: generateCodeChallenge(generateCodeVerifier(64)),
    code_challenge_method: 'S256',
  });
  const res = await fetch(`${baseUrl}/v2/oauth/authorize?${q.toString()}`, { redirect: 'manual' });
  expect(res.status).toBe(302);
}

async function run(argv: string[]) {
  const out: string[] = [];
  const io: CliIo = {
    stdout: (t) => out.push(t),
    stderr: () => undefined,
    env: { ND_ID_SUBJECT_SECRET: 'cli-subject-secret-0123' },
  };
  const outcome = await runCli(['--clients', clients, '--port', '0', '--auto-approve', ...argv], io);
  if (!('started' in outcome)) throw new Error('did not start');
  return { outcome, out };
}

describe('nd-id-provider audit flags', () => {
  it('prints the audit table at exit; --audit-strict makes the exit status 1 on findings', async () => {
    const strict = await run(['--audit-strict', '--audit-endpoint']);
    await loginWithoutState(strict.outcome.started.baseUrl);
    const served = (await (await fetch(`${strict.outcome.started.baseUrl}/_provider/audit`)).json()) as {
      findings: { code: string }[];
    };
    expect(served.findings.map((f) => f.code)).toEqual(['state_missing']);
    expect(await strict.outcome.stop()).toBe(1);
    expect(strict.out.join('')).toMatch(/Audit: 1 finding\n.*\ndemo\s+state_missing\s+1\s/);

    const lax = await run([]);
    await loginWithoutState(lax.outcome.started.baseUrl);
    expect((await fetch(`${lax.outcome.started.baseUrl}/_provider/audit`)).status).toBe(404);
    expect(await lax.outcome.stop()).toBe(0);
    expect(lax.out.join('')).toMatch(/state_missing/);
  });

  it('exits 0 with --audit-strict when the client did nothing wrong', async () => {
    const clean = await run(['--audit-strict']);
    expect(await clean.outcome.stop()).toBe(0);
    expect(clean.out.join('')).toContain('Audit: no findings.');
  });

  it('as an executable, exits with status 1 on SIGTERM after a finding with --audit-strict', async () => {
    const { child, baseUrl } = await startProviderProcess(
      ['--clients', clients, '--port', '0', '--auto-approve', '--audit-strict'],
      'cli-subject-secret-0123',
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // 'close', not 'exit': the table printed at exit is then all read.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    try {
      await loginWithoutState(baseUrl);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(1);
    expect(out).toMatch(/demo\s+state_missing\s+1/);
  });
});

describe('nd-id-provider --conformance', () => {
  it('gives the first authorization the baseline, prints the plan table at exit and exits 1 when a case failed', async () => {
    const { outcome, out } = await run(['--conformance']);
    const { baseUrl } = outcome.started;
    expect(outcome.started.provider.conformance.current()).toBeUndefined();
    await loginWithoutState(baseUrl);
    expect(outcome.started.provider.conformance.current()).toBe('baseline');
    const report = await fetch(`${baseUrl}/_provider/conformance/report`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ caseId: 'baseline', signedIn: false }),
    });
    expect(report.status).toBe(204);
    expect(await outcome.stop()).toBe(1);
    expect(out.join('')).toMatch(/baseline\s+must\s+accept\s+FAIL\s+Reported: the browser did not end signed in\./);
    expect(out.join('')).toMatch(/0 passed, 1 failed, 0 inconclusive, 20 not run/);
  });
});
