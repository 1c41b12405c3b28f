/**
 * `@opentelemetry/api` is an optional peer: without it, the built package (its CommonJS and its
 * ES module build) signs a person in and loads nothing of OpenTelemetry. The package is copied
 * into a folder whose node_modules links every dependency of this checkout except
 * `@opentelemetry/*`, so module resolution from the package cannot find the API; an app in that
 * folder logs in against a provider this test starts.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const CALLBACK = 'http://127.0.0.1:3998/auth/callback';
const SECRET = 'without-otel-secret-0123456789';
const keys = testKeyPair('without-otel');
let dir = '';
let provider: StartedProvider;

/** The login, the same in both module systems; `load` is the package's client entry. */
const LOGIN = `
const pkgRequire = createRequire(join(process.cwd(), 'node_modules', 'passport-nd-id', 'package.json'));
let apiFound = true;
try { pkgRequire.resolve('@opentelemetry/api'); } catch { apiFound = false; }
const client = new IdClient({
  hostname: process.env.ND_ID_HOSTNAME, clientId: 'without-otel', clientSecret: ${JSON.stringify(SECRET)},
  privateKey: process.env.ND_ID_PRIVATE_KEY, redirectUri: ${JSON.stringify(CALLBACK)},
});
const flow = createLoginFlow({ client, redirectUri: ${JSON.stringify(CALLBACK)}, scope: 'openid profile.name' });
const record = {};
const session = recordSession(record);
const { redirectUrl } = await flow.start(session);
const back = new URL((await fetch(redirectUrl, { redirect: 'manual' })).headers.get('location'));
const { user } = await flow.complete(session, Object.fromEntries(back.searchParams));
client.close();
const otelLoaded = Object.keys(createRequire(join(process.cwd(), 'app.js')).cache).filter((k) => k.includes('opentelemetry'));
console.log(JSON.stringify({ apiFound, name: user.data['profile.name'], otelLoaded }));
`;

const CJS_APP = `
const { createRequire } = require('node:module');
const { join } = require('node:path');
const { IdClient, createLoginFlow, recordSession } = require('passport-nd-id/client');
(async () => {${LOGIN}})().catch((err) => { console.error(err); process.exit(1); });
`;

const ESM_APP = `
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { IdClient, createLoginFlow, recordSession } from 'passport-nd-id/client';
${LOGIN}`;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nd-id-no-otel-'));
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'passport-nd-id'), { recursive: true });
  for (const name of readdirSync(join(root, 'node_modules'))) {
    if (name === '@opentelemetry' || name === '.bin' || name === 'passport-nd-id') continue;
    symlinkSync(join(root, 'node_modules', name), join(modules, name));
  }
  cpSync(join(root, 'package.json'), join(modules, 'passport-nd-id', 'package.json'));
  cpSync(join(root, 'dist'), join(modules, 'passport-nd-id', 'dist'), { recursive: true });
  writeFileSync(join(dir, 'app.js'), CJS_APP);
  writeFileSync(join(dir, 'app.mjs'), ESM_APP);
  provider = await startProvider({
    autoApprove: DEFAULT_PERSONAS[0]!.id,
    clients: [
      { clientId: 'without-otel', clientSecret: SECRET, redirectUris: [CALLBACK], publicKey: keys.publicKeyPem },
    ],
  });
});
afterAll(async () => {
  await provider?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('without @opentelemetry/api installed', () => {
  for (const app of ['app.js', 'app.mjs']) {
    it(`the built package signs in and loads nothing of OpenTelemetry (${app})`, async () => {
      const { stdout } = await run(process.execPath, [app], {
        cwd: dir,
        env: { PATH: process.env.PATH, ND_ID_HOSTNAME: provider.baseUrl, ND_ID_PRIVATE_KEY: keys.privateKeyPem },
      });
      expect(JSON.parse(stdout.trim())).toEqual({
        apiFound: false,
        name: DEFAULT_PERSONAS[0]!['profile.name'],
        otelLoaded: [],
      });
    });
  }
});
