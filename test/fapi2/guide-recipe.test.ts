/**
 * docs/fapi2.md's "Switching an existing app" (the README's app in the FAPI 2.0 profile, marked
 * `<!-- readme-test: fapi -->`) runs as written against the built package and the built
 * provider CLI (`nd-id-provider --clients clients.json`) with a FAPI client registered by the
 * app's own jwks_uri, and signs a person in. (test/readme.test.ts type-checks the snippet.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { docSnippets, installedAppTsconfig, repoRoot } from '../helpers/doc-snippets.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';
import { stopChild } from '../helpers/stop-child.js';
import { Browser } from '../helpers/harness.js';

const workDir = join(repoRoot, '.tmp', `fapi2-guide-${process.pid}`);
const CLI = join(repoRoot, 'dist', 'cjs', 'provider', 'cli.js');
const recipe = docSnippets('ts').find((s) => s.file === 'docs/fapi2.md' && s.kind === 'fapi');
const children: ChildProcess[] = [];

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
});
afterAll(async () => {
  for (const child of children) await stopChild(child);
  rmSync(workDir, { recursive: true, force: true });
});

function start(args: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

async function waitFor(
  run: { child: ChildProcess; output: () => string },
  pattern: RegExp,
  what: string,
): Promise<RegExpExecArray> {
  for (;;) {
    const match = pattern.exec(run.output());
    if (match) return match;
    if (run.child.exitCode !== null) throw new Error(`${what} exited:\n${run.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it('the guide has the recipe', () => {
  expect(recipe?.code).toContain("profile: 'fapi2'");
});

it("runs the README's app switched to the profile against npx nd-id-provider with a FAPI client in clients.json", async () => {
  const port = await freePort();
  const appOrigin = `http://127.0.0.1:${port}`;
  const callback = `${appOrigin}/auth/callback`;
  const rsa = testKeyPair('fapi-guide');
  const pem = (key: ReturnType<typeof generateKeyPairSync>['privateKey']): string =>
    key.export({ format: 'pem', type: 'pkcs8' }).toString();
  const assertionKey = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const idTokenKey = pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);
  const clients = join(workDir, 'clients.json');
  writeFileSync(
    clients,
    JSON.stringify([
      {
        clientId: 'my-app',
        redirectUris: [callback],
        publicKey: rsa.publicKeyPem,
        profile: 'fapi2',
        jwksUri: `${appOrigin}/auth/jwks.json`,
        idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
        idTokenEncryptedResponseEnc: 'A256GCM',
      },
    ]),
  );
  const provider = start([CLI, '--clients', clients, '--port', '0', '--auto-approve'], {
    ND_ID_SUBJECT_SECRET: randomBytes(24).toString('hex'),
  });
  const providerUrl = (await waitFor(provider, /ready at (http:\/\/\S+) /, 'nd-id-provider'))[1]!;

  const file = join(workDir, `${recipe!.id}.mts`);
  writeFileSync(file, recipe!.code);
  const app = start(['--import', 'tsx', file], {
    TSX_TSCONFIG_PATH: installedAppTsconfig(workDir),
    PORT: String(port),
    ND_ID_HOSTNAME: providerUrl,
    ND_ID_CLIENT_ID: 'my-app',
    ND_ID_PRIVATE_KEY: rsa.privateKeyPem,
    ND_ID_CLIENT_ASSERTION_KEY: assertionKey,
    ND_ID_ID_TOKEN_KEY: idTokenKey,
    ND_ID_REDIRECT_URI: callback,
    SESSION_SECRET: randomBytes(32).toString('hex'),
  });
  await waitFor(app, new RegExp(`Listening on ${appOrigin}`), 'the guide app');

  const jwks = (await (await fetch(`${appOrigin}/auth/jwks.json`)).json()) as { keys: { use: string }[] };
  expect(jwks.keys.map((k) => k.use)).toEqual(['sig', 'enc']);
  const browser = new Browser(appOrigin);
  const login = await browser.get('/auth/login?returnTo=%2Faccount');
  expect(login.status, app.output()).toBe(302);
  const authorize = new URL(login.location ?? '');
  expect([...authorize.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
  const back = await fetch(authorize, { redirect: 'manual' });
  const done = await browser.get(back.headers.get('location') ?? '');
  expect(done.status, app.output()).toBe(302);
  expect(done.location).toBe('/account');
  const account = JSON.parse((await browser.get('/account')).text) as { user: { name: string } };
  expect(account.user.name).toMatch(/\S/);

  // A login without returnTo lands on / , which shows the person.
  const plain = new Browser(appOrigin);
  const started = await plain.get('/auth/login');
  const landed = await plain.get(
    (await fetch(new URL(started.location ?? ''), { redirect: 'manual' })).headers.get('location') ?? '',
  );
  expect(landed.location).toBe('/');
  expect((await plain.get('/')).text).toContain(`<p>Signed in as ${account.user.name}</p>`);
}, 60_000);
