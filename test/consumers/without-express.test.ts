/**
 * express and passport are optional peers: an app that uses only IdClient, the fetch handlers or
 * the provider installs the packed tarball alone (`npm init -y`, `npm install <tarball>`, so
 * neither package is in its tree) and runs. Each app is a plain CommonJS script in that folder;
 * the first two sign a person in against a provider this test starts, the third starts the
 * packed provider itself.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { packedTarball } from '../helpers/pack.js';

const run = promisify(execFile);
const CALLBACK = 'http://127.0.0.1:3999/auth/callback';
const keys = testKeyPair('no-express');
const persona = DEFAULT_PERSONAS[0]!;
let dir = '';
let tarball = '';
let provider: StartedProvider;

/** One login with a bare IdClient: authorize (auto-approved), exchange the code, read the name. */
const ID_CLIENT_APP = `
const { IdClient, generatePkcePair, generateState } = require('passport-nd-id/client');
const client = new IdClient({
  hostname: process.env.ND_ID_HOSTNAME, clientId: 'no-express', clientSecret: 'no-express-secret',
  privateKey: process.env.ND_ID_PRIVATE_KEY, redirectUri: ${JSON.stringify(CALLBACK)},
});
(async () => {
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const { url, nonce } = client.authorizationUrl({ state: generateState(), codeChallenge });
  const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')).searchParams.get('code');
  const { sub, accessToken } = await client.callback({ code, codeVerifier, nonce });
  console.log(JSON.stringify((await client.userinfo({ sub, accessToken })).data));
})().catch((err) => { console.error(err); process.exit(1); });
`;

/** One login through createFetchLogin with a sealed cookie session, driven with Request objects. */
const FETCH_APP = `
const { createCookieSession, createFetchLogin, IdClient } = require('passport-nd-id/fetch');
const auth = createFetchLogin({
  client: new IdClient({
    hostname: process.env.ND_ID_HOSTNAME, clientId: 'no-express', clientSecret: 'no-express-secret',
    privateKey: process.env.ND_ID_PRIVATE_KEY, redirectUri: ${JSON.stringify(CALLBACK)},
  }),
  session: createCookieSession({ secret: 'a-session-secret-of-at-least-32-characters' }),
  loginPath: '/auth/login',
});
(async () => {
  const cookieOf = (res) => res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const login = await auth.login(new Request('http://127.0.0.1:3999/auth/login'));
  const cookie = cookieOf(login);
  const back = (await fetch(login.headers.get('location'), { redirect: 'manual' })).headers.get('location');
  const done = await auth.callback(new Request(back, { headers: { cookie } }));
  const user = await auth.user(new Request('http://127.0.0.1:3999/', { headers: { cookie: cookieOf(done) } }));
  console.log(JSON.stringify({ status: done.status, name: user && user.data['profile.name'] }));
})().catch((err) => { console.error(err); process.exit(1); });
`;

/** The packed provider, started by the app itself, and one login against it. */
const PROVIDER_APP = `
const { createTestProvider } = require('passport-nd-id/provider');
const { IdClient, generatePkcePair } = require('passport-nd-id/client');
(async () => {
  const { provider, baseUrl, client, close } = await createTestProvider({ autoApprove: true });
  const app = new IdClient({ ...client, hostname: baseUrl });
  const { codeVerifier, codeChallenge } = generatePkcePair();
  const { url, nonce } = app.authorizationUrl({ state: 'no-express-state-0123456789', codeChallenge });
  const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location')).searchParams.get('code');
  const { sub, accessToken } = await app.callback({ code, codeVerifier, nonce });
  console.log(JSON.stringify((await app.userinfo({ sub, accessToken })).data));
  await close();
})().catch((err) => { console.error(err); process.exit(1); });
`;

beforeAll(async () => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  tarball = packedTarball();
  dir = mkdtempSync(join(tmpdir(), 'nd-id-no-express-'));
  await run('npm', ['init', '-y'], { cwd: dir });
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], {
    cwd: dir,
    timeout: 300_000,
  });
  writeFileSync(join(dir, 'id-client.js'), ID_CLIENT_APP);
  writeFileSync(join(dir, 'fetch.js'), FETCH_APP);
  writeFileSync(join(dir, 'provider.js'), PROVIDER_APP);
  provider = await startProvider({
    clients: [
      {
        clientId: 'no-express',
        clientSecret: 'no-express-secret',
        redirectUris: [CALLBACK],
        publicKey: keys.publicKeyPem,
      },
    ],
    autoApprove: persona.id,
  });
}, 400_000);

afterAll(async () => {
  await provider?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs one of the scripts; resolves its last line of output, or the error it died with. */
async function runApp(file: string): Promise<string> {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ND_ID_HOSTNAME: provider.baseUrl,
    ND_ID_PRIVATE_KEY: keys.privateKeyPem,
  };
  return run(process.execPath, [file], { cwd: dir, env, timeout: 60_000 }).then(
    ({ stdout }) => stdout.trim().split('\n').pop() ?? '',
    (err: { stderr?: string }) =>
      `failed: ${(err.stderr ?? String(err)).split('\n').find((l) => /Error|Cannot find/.test(l)) ?? err.stderr}`,
  );
}

describe('an app with neither express nor passport installed', () => {
  it('has neither in its tree after installing only the tarball', () => {
    expect(existsSync(join(dir, 'node_modules', 'passport-nd-id', 'package.json'))).toBe(true);
    expect(existsSync(join(dir, 'node_modules', 'express'))).toBe(false);
    expect(existsSync(join(dir, 'node_modules', 'passport'))).toBe(false);
  });

  it('signs a person in with IdClient alone', async () => {
    expect(
      JSON.parse(await runApp('id-client.js').then((out) => (out.startsWith('failed') ? JSON.stringify(out) : out))),
    ).toEqual({ 'profile.name': persona['profile.name'] });
  }, 90_000);

  it('signs a person in through the fetch handlers', async () => {
    const out = await runApp('fetch.js');
    expect(out).toBe(JSON.stringify({ status: 302, name: persona['profile.name'] }));
  }, 90_000);

  it('starts the packed provider and signs a person in against it', async () => {
    const out = await runApp('provider.js');
    expect(out).toContain('"profile.name"');
  }, 90_000);
});
