/**
 * The provider needs no Express at run time: the built package, copied into a folder whose
 * node_modules holds only its run-time dependencies (jose, debug; no express,
 * no passport), serves a sign-in through `createTestProvider()` and starts from its CLI.
 * Needs `npm run build` (as `npm test` does first).
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');
let dir: string;

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cjs/provider/index.js')))
    throw new Error('run `npm run build` first: this test loads the built package');
  dir = mkdtempSync(join(tmpdir(), 'nd-id-no-express-'));
  const pkg = join(dir, 'node_modules/passport-nd-id');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  for (const dep of ['jose', 'debug', 'ms', 'passport-strategy', 'uqr'])
    symlinkSync(join(ROOT, 'node_modules', dep), join(dir, 'node_modules', dep));
  writeFileSync(
    join(dir, 'sign-in.cjs'),
    `const { createTestProvider } = require('passport-nd-id/provider');
(async () => {
  let express = 'missing';
  try { require.resolve('express'); express = 'found'; } catch {}
  const t = await createTestProvider({ autoApprove: true });
  const q = new URLSearchParams({ response_type: 'code', client_id: t.client.clientId, redirect_uri: t.client.redirectUri, scope: 'openid',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', state: 's' });
  const a = await fetch(t.baseUrl + '/v2/oauth/authorize?' + q, { redirect: 'manual' });
  const code = new URL(a.headers.get('location')).searchParams.get('code');
  const tok = await fetch(t.baseUrl + '/v2/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({
    client_id: t.client.clientId, client_secret: t.client.clientSecret, grant_type: 'authorization_code', code,
    redirect_uri: t.client.redirectUri, code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk' }) });
  const { access_token } = await tok.json();
  const info = await fetch(t.baseUrl + '/v2/oauth/userinfo', { headers: { authorization: 'Bearer ' + access_token } });
  console.log(JSON.stringify({ express, token: tok.status, userinfo: info.status }));
  await t.close();
})().catch((e) => { console.error(e); process.exit(1); });
`,
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the provider in a folder where express is not installed', () => {
  it('createTestProvider() serves a whole sign-in', () => {
    const out = execFileSync(process.execPath, ['sign-in.cjs'], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    expect(JSON.parse(out.trim())).toEqual({ express: 'missing', token: 200, userinfo: 200 });
  });

  it('the CLI starts and serves the discovery document', async () => {
    writeFileSync(
      join(dir, 'clients.json'),
      JSON.stringify([
        {
          clientId: 'c',
          clientSecret: 'secret-secret-secret',
          redirectUris: ['http://127.0.0.1:9/cb'],
          publicKey: execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'], {
            encoding: 'utf8',
          }).replace(/[\s\S]*/, (pem) =>
            execFileSync('openssl', ['pkey', '-pubout'], { input: pem, encoding: 'utf8' }),
          ),
        },
      ]),
    );
    const child = spawn(
      process.execPath,
      [join(dir, 'node_modules/passport-nd-id/dist/cjs/provider/cli.js'), '--clients', 'clients.json', '--port', '0'],
      { cwd: dir },
    );
    try {
      const base = await new Promise<string>((resolveBase, reject) => {
        let seen = '';
        const timer = setTimeout(() => reject(new Error(`no base URL printed: ${seen}`)), 20_000);
        child.stdout.on('data', (c: Buffer) => {
          seen += c.toString();
          const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen);
          if (m) {
            clearTimeout(timer);
            resolveBase(m[1]!);
          }
        });
      });
      const res = await fetch(`${base}/v2/.well-known/openid-configuration`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { issuer: string }).issuer).toBe(`${base}/v2`);
    } finally {
      child.kill();
    }
  });
});
