import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliIo, type CliOutcome } from '../../src/provider/cli.js';
import { testKeyPair } from '../helpers/keys.js';
import { startProviderProcess } from '../helpers/provider-process.js';

const dir = mkdtempSync(join(tmpdir(), 'nd-id-cli-'));
writeFileSync(join(dir, 'rp.pub.pem'), testKeyPair('rp').publicKeyPem);
const goodClient = {
  clientId: 'demo',
  clientSecret: 'demo-secret-value',
  redirectUris: ['http://localhost:3000/callback'],
  publicKeyFile: 'rp.pub.pem',
  name: 'Demo',
};

function clientsFile(content: unknown, name = `clients-${Math.random().toString(36).slice(2)}.json`): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

function io(env: Record<string, string> = {}): CliIo & { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, stdout: (t) => out.push(t), stderr: (t) => err.push(t), env };
}

const running: CliOutcome[] = [];
afterEach(async () => {
  for (const o of running.splice(0)) if ('started' in o) await o.started.close();
});

async function run(argv: string[], env: Record<string, string> = {}) {
  const streams = io(env);
  const outcome = await runCli(argv, streams);
  running.push(outcome);
  return { outcome, out: streams.out.join(''), err: streams.err.join('') };
}

describe('nd-id-provider command', () => {
  it('prints its base URL when ready and serves the discovery document there', async () => {
    const { outcome, out } = await run(['--clients', clientsFile([goodClient]), '--port', '0'], {
      ND_ID_SUBJECT_SECRET: 'cli-subject-secret-0123',
    });
    const baseUrl = /ready at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1] ?? '';
    expect(baseUrl).not.toBe('');
    expect('started' in outcome).toBe(true);
    const doc = (await (await fetch(`${baseUrl}/v2/.well-known/openid-configuration`)).json()) as { issuer: string };
    expect(doc.issuer).toBe(`${baseUrl}/v2`);
  });

  it('auto-approves as the named persona with --auto-approve PERSONA', async () => {
    const { outcome } = await run([
      '--clients',
      clientsFile({ clients: [goodClient] }),
      '--port=0',
      '--auto-approve',
      'dewi',
    ]);
    if (!('started' in outcome)) throw new Error('did not start');
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: 'demo',
      redirect_uri: 'http://localhost:3000/callback',
      scope: 'openid',
      code_challenge: 'a'.repeat(43),
      code_challenge_method: 'S256',
    });
    const res = await fetch(`${outcome.started.baseUrl}/v2/oauth/authorize?${q}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
  });

  it('lists the personas and exits', async () => {
    const { outcome, out } = await run(['--list-personas']);
    expect(outcome).toEqual({ exitCode: 0 });
    expect(out).toMatch(/^ID\s+NAME\s+NRIC\s+PASSPORT EXPIRY/);
    expect(out).toMatch(/ada\s+Ada Testperson\s+S1234567D\s+2031-05-17/);
  });

  it('prints help and exits', async () => {
    const { outcome, out } = await run(['--help']);
    expect(outcome).toEqual({ exitCode: 0 });
    for (const flag of ['--port', '--host', '--clients', '--auto-approve', '--list-personas', '--help'])
      expect(out).toContain(flag);
  });

  it('--strict-client-auth advertises and takes only the JSON body, refusing a form body with the audit finding', async () => {
    const { outcome } = await run([
      '--clients',
      clientsFile([goodClient]),
      '--port',
      '0',
      '--strict-client-auth',
      '--audit-endpoint',
    ]);
    if (!('started' in outcome)) throw new Error('did not start');
    const base = outcome.started.baseUrl;
    const doc = (await (await fetch(`${base}/v2/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.token_endpoint_auth_methods_supported).toEqual(['client_secret_post']);
    const form = new URLSearchParams({
      client_id: 'demo',
      client_secret: goodClient.clientSecret,
      grant_type: 'authorization_code',
      code: 'x',
      code_verifier: 'v'.repeat(43),
      redirect_uri: goodClient.redirectUris[0]!,
    });
    const res = await fetch(`${base}/v2/oauth/token`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
    const audit = (await (await fetch(`${base}/_provider/audit`)).json()) as { findings: { code: string }[] };
    expect(audit.findings.map((f) => f.code)).toEqual(['client_auth_outside_spec']);
  });

  it('refuses to start without --clients', async () => {
    const { outcome, err } = await run([]);
    expect(outcome).toEqual({ exitCode: 2 });
    expect(err).toMatch(/--clients FILE is required/);
  });

  it('refuses a bad config at start with one clear line per mistake and never echoes a secret', async () => {
    const file = clientsFile([
      { ...goodClient, redirectUris: ['http://rp.example/callback'] },
      { ...goodClient, clientSecret: 'hunter2-very-secret', publicKeyFile: undefined, publicKey: 'ssh-rsa AAAA' },
      { ...goodClient, publicKeyFile: 'missing.pem' },
    ]);
    const { outcome, err } = await run([
      '--clients',
      file,
      '--port',
      'eighty',
      '--auto-approve',
      'nobody',
      '--verbose',
    ]);
    expect(outcome).toEqual({ exitCode: 2 });
    const lines = err.split('\n').filter((l) => l.startsWith('  - '));
    expect(err).toMatch(/cannot start, 9 mistakes/);
    expect(lines).toHaveLength(9);
    expect(err).toMatch(/--port must be a whole number/);
    expect(err).toMatch(/unknown argument "--verbose"/);
    expect(err).toMatch(/clients\[2\]\.publicKeyFile "missing\.pem" cannot be read/);
    expect(err).toMatch(
      /clients\[0\]\.redirectUris\[0\] "http:\/\/rp\.example\/callback" uses http on a non-loopback host/,
    );
    expect(err).toMatch(/clients\[1\]\.clientId "demo" is a duplicate/);
    expect(err).toMatch(/clients\[2\]\.clientId "demo" is a duplicate/);
    expect(err).toMatch(/clients\[1\]\.publicKey must be a PEM RSA public key/);
    expect(err).toMatch(/clients\[2\] must have exactly one of publicKey \(one key\) and publicKeys/);
    expect(err).toMatch(/autoApprove "nobody" is not a persona id/);
    expect(err).not.toContain('hunter2');
  });

  it('refuses a clients file that is not JSON', async () => {
    const { outcome, err } = await run(['--clients', clientsFile('{ not json')]);
    expect(outcome).toEqual({ exitCode: 2 });
    expect(err).toMatch(/is not valid JSON/);
  });

  it('runs as an executable and prints its base URL', async () => {
    const { child, baseUrl } = await startProviderProcess(
      ['--clients', clientsFile([goodClient]), '--port', '0'],
      'cli-subject-secret-0123',
    );
    try {
      expect((await fetch(`${baseUrl}/v2/.well-known/jwks.json`)).status).toBe(200);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  });
});
