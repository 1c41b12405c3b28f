/**
 * An app that uses only IdClient or the fetch handlers runs with neither passport
 * nor express installed: the built package is copied into a folder whose node_modules holds only
 * the package's own dependencies, and loaded there both ways. ndIdRouter() without a passport
 * option then says how to install Passport. Runs against dist/, which `npm test` builds first.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..', '..');
const modules = join(root, 'node_modules');
let app: string;

function run(file: string, source: string): string {
  writeFileSync(join(app, file), source);
  return execFileSync(process.execPath, [file], { cwd: app, encoding: 'utf8', timeout: 20_000 }).trim();
}

beforeAll(() => {
  expect(existsSync(join(root, 'dist/cjs/index.js')), 'dist/cjs/index.js is missing: run npm run build').toBe(true);
  app = mkdtempSync(join(tmpdir(), 'nd-id-no-passport-'));
  const pkg = join(app, 'node_modules', 'passport-nd-id');
  mkdirSync(pkg, { recursive: true });
  cpSync(join(root, 'dist'), join(pkg, 'dist'), { recursive: true });
  cpSync(join(root, 'package.json'), join(pkg, 'package.json'));
  // The run-time dependencies (and theirs), and nothing else: no passport, no express.
  for (const dep of ['jose', 'debug', 'ms', 'passport-strategy', 'uqr']) {
    const target = join(app, 'node_modules', dep);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(modules, dep), target, 'dir');
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
});

afterAll(() => {
  if (app !== undefined) rmSync(app, { recursive: true, force: true });
});

describe('the root entry without passport or express installed', () => {
  it('is really without them', () => {
    expect(() => run('probe.cjs', "require.resolve('passport'); console.log('found')")).toThrow(
      /Cannot find module 'passport'/,
    );
    expect(() => run('probe2.cjs', "require.resolve('express'); console.log('found')")).toThrow(
      /Cannot find module 'express'/,
    );
  });

  it('loads with require() and builds an IdClient, a login flow and fetch handlers', () => {
    const out = run(
      'app.cjs',
      `const { IdClient, createFetchLogin, createCookieSession } = require('passport-nd-id/fetch');
       const { NdIdStrategy } = require('passport-nd-id');
       const { generateKeyPairSync } = require('node:crypto');
       const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
       const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
       const client = new IdClient({ clientId: 'c', clientSecret: 's', privateKey: pem, redirectUri: 'http://127.0.0.1:3000/callback', hostname: 'http://127.0.0.1:9' });
       console.log(typeof client.authorizationUrl, typeof createFetchLogin, typeof createCookieSession, typeof NdIdStrategy);`,
    );
    expect(out).toBe('function function function function');
  });

  it('loads with import() too', () => {
    const out = run(
      'app.mjs',
      `const m = await import('passport-nd-id'); const f = await import('passport-nd-id/fetch'); console.log(typeof m.NdIdStrategy, typeof f.IdClient, typeof f.createFetchLogin);`,
    );
    expect(out).toBe('function function function');
  });

  it('ndIdRouter() without a passport option says how to install Passport', () => {
    const out = run(
      'router.cjs',
      `const { ndIdRouter } = require('passport-nd-id');
       try { ndIdRouter(); console.log('no error'); } catch (err) { console.log(err.constructor.name + ': ' + err.message); }`,
    );
    expect(out).toMatch(
      /^TypeError: ndIdRouter: the passport package is not installed\. Install it \(npm install passport/,
    );
  });
});
