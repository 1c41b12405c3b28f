/**
 * docs/migrating-from-sgid-client.md: its app written with the official `@opengovsg/sgid-client`,
 * the same app after the page's two-line change to `IdClient`, and the Passport version, each run
 * as written (the environment only differs) against the bundled provider and against MockPass's
 * sgID v2 mock, run as people run it (its own process, a key of the app's in
 * SERVICE_PROVIDER_PUB_KEY). A person signs in and the app shows who they are; a callback with a
 * state the app never issued is refused. (test/readme.test.ts type-checks the page's snippets;
 * the app after the change is type-checked here.)
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from './helpers/provider.js';
import { docSnippets, installedAppTsconfig, pointAtDocs, readDoc, repoRoot } from './helpers/doc-snippets.js';
import { testKeyPair } from './helpers/keys.js';
import { freePort } from './helpers/ports.js';
import { stopChild } from './helpers/stop-child.js';
import { Browser } from './helpers/harness.js';

const PAGE = 'docs/migrating-from-sgid-client.md';
const workDir = join(repoRoot, '.tmp', `migrating-${process.pid}`);
const keys = testKeyPair('migrating');

/** The page's snippet marked `<!-- readme-test: migration name=NAME -->`. */
function snippet(name: string): string {
  const found = docSnippets().filter((s) => s.file === PAGE && s.kind === 'migration' && s.args.name === name);
  if (found.length !== 1) throw new Error(`${PAGE} should have one snippet marked migration name=${name}`);
  return found[0]!.code;
}

/** `before` with the diff's `-` lines replaced by its `+` lines, in order; each `-` line must occur exactly once. */
function applyDiff(before: string, diff: string): { after: string; changed: number } {
  const lines = diff.split('\n').filter((l) => l !== '');
  let after = before;
  let changed = 0;
  for (let i = 0; i < lines.length; i += 2) {
    const [minus, plus] = [lines[i]!, lines[i + 1] ?? ''];
    if (!minus.startsWith('-') || !plus.startsWith('+')) throw new Error(`The diff pairs - and + lines: ${minus}`);
    const old = `${minus.slice(1)}\n`;
    if (after.split(old).length !== 2) throw new Error(`"${minus.slice(1)}" is not once in the app`);
    after = after.replace(old, `${plus.slice(1)}\n`);
    changed += 1;
  }
  return { after, changed };
}

const before = snippet('before');
const { after, changed } = applyDiff(before, snippet('diff'));
const APPS = [
  { name: 'the official client app (before)', file: 'before.mts', code: before, filtersAttributes: false },
  { name: 'the IdClient app (after the two-line change)', file: 'after.mts', code: after, filtersAttributes: false },
  { name: 'the Passport version', file: 'passport.mts', code: snippet('passport'), filtersAttributes: true },
];

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
  installedAppTsconfig(workDir);
  for (const app of APPS) writeFileSync(join(workDir, app.file), app.code);
  writeFileSync(join(workDir, 'app-key.pub.pem'), keys.publicKeyPem);
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

interface Running {
  child: ChildProcess;
  base: string;
  output: () => string;
}

/** Starts one of the page's apps with `env` on a free port, as `tsx app.mts` starts it. */
async function startApp(file: string, env: Record<string, string>, port?: number): Promise<Running> {
  port ??= await freePort();
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', join(workDir, file)], {
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TSX_TSCONFIG_PATH: join(workDir, 'tsconfig.json'),
      PORT: String(port),
      SESSION_SECRET: randomBytes(32).toString('hex'),
      ...env,
      SGID_REDIRECT_URI: `http://127.0.0.1:${port}/callback`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  while (!output.includes(`Listening on http://127.0.0.1:${port}`)) {
    if (child.exitCode !== null) throw new Error(`${file} exited:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { child, base: `http://127.0.0.1:${port}`, output: () => output };
}

/** Signs a person in through the app (the provider approves at once) and returns what `/` shows. */
async function signIn(app: Running): Promise<{ sub: string; data: Record<string, string> } | null> {
  const browser = new Browser(app.base);
  const login = await browser.get('/login');
  expect(login.status, login.text).toBe(302);
  const authorize = await fetch(login.location as string, { redirect: 'manual' });
  expect([302, 303], `the provider's answer to ${new URL(login.location as string).pathname}`).toContain(
    authorize.status,
  );
  const back = await browser.get(authorize.headers.get('location') as string);
  expect(back.status, `${back.text}\n${app.output()}`).toBe(302);
  expect(back.location).toBe('/');
  const home = await browser.get('/');
  return (JSON.parse(home.text) as { user: { sub: string; data: Record<string, string> } | null }).user;
}

/** A callback with a state the app never issued is refused, before any call to the provider. */
async function expectStrangerRefused(app: Running): Promise<void> {
  const stranger = await new Browser(app.base).get('/callback?code=some-code&state=a-state-this-app-never-issued-0');
  expect(stranger.status).toBe(403);
}

describe(PAGE, () => {
  it('changes two lines to move the app to IdClient, the import and the constructor', () => {
    expect(changed).toBe(2);
    expect(after).toContain("from 'passport-nd-id/client'");
    expect(after).toContain('new IdClient({');
    expect(after).not.toContain('sgid-client');
  });

  it('the app after the change type-checks against the published package', async () => {
    const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
    const config = join(workDir, 'typecheck.json');
    writeFileSync(
      config,
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2023'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
          types: ['node'],
          noEmit: true,
        },
        files: ['after.mts'],
      }),
    );
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', config], { cwd: repoRoot }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(pointAtDocs(result)).toBe('');
  }, 120_000);

  it('is linked from the README, the docs index and the IdClient guide', () => {
    for (const [page, link] of [
      ['README.md', '(docs/migrating-from-sgid-client.md)'],
      ['docs/README.md', '(migrating-from-sgid-client.md)'],
      ['docs/idclient.md', '(migrating-from-sgid-client.md)'],
    ] as const) {
      expect(readDoc(page), page).toContain(link);
    }
  });

  it("maps the official client's errors to IdError codes the library has", () => {
    const page = readDoc(PAGE);
    const section = page.slice(page.indexOf('\n## Errors\n'), page.indexOf('\n## What has no counterpart\n'));
    const rightColumn = [...section.matchAll(/^\|.*\| (.*) \|$/gm)].map((m) => m[1]!).join(' ');
    const named = [...rightColumn.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]!);
    const source = readFileSync(join(repoRoot, 'src', 'errors.ts'), 'utf8');
    const union = /export type IdErrorCode =([\s\S]*?);/.exec(source)?.[1] ?? '';
    const codes = new Set([...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!));
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((code) => !codes.has(code))).toEqual([]);
  });

  it('names every method and helper of the official client', () => {
    const page = readDoc(PAGE);
    for (const name of [
      'authorizationUrl',
      'callback',
      'userinfo',
      'parseData',
      'generatePkcePair',
      'generateCodeVerifier',
      'generateCodeChallenge',
      'generateNonce',
      'convertPkcs1ToPkcs8',
      'isStringifiedArrayOrObject',
      'isNonEmptyString',
      'safeJsonParse',
      'isSgidUserinfoObject',
    ]) {
      expect(page, name).toContain(`\`${name}`);
    }
  });
});

describe.each(APPS)('$name against the bundled provider', ({ file }) => {
  let provider: StartedProvider | undefined;
  let app: Running | undefined;

  afterAll(async () => {
    await stopChild(app?.child);
    await provider?.close();
  });

  it('signs a person in and shows their pairwise id and name; refuses a state it never issued', async () => {
    const persona = DEFAULT_PERSONAS[3]!;
    const clientSecret = randomBytes(24).toString('base64url');
    const port = await freePort();
    provider = await startProvider({
      clients: [
        {
          clientId: 'migrating-app',
          clientSecret,
          redirectUris: [`http://127.0.0.1:${port}/callback`],
          publicKey: keys.publicKeyPem,
        },
      ],
      autoApprove: persona.id,
    });
    const env = {
      SGID_CLIENT_ID: 'migrating-app',
      SGID_CLIENT_SECRET: clientSecret,
      SGID_PRIVATE_KEY: keys.privateKeyPem,
      SGID_HOSTNAME: provider.baseUrl,
      SGID_SCOPE: 'openid profile.name',
    };
    app = await startApp(file, env, port);
    const user = await signIn(app);
    expect(user).toEqual({
      sub: provider.provider.subjectFor('migrating-app', persona.id),
      data: { 'profile.name': persona['profile.name'] },
    });
    await expectStrangerRefused(app);
  }, 60_000);
});

describe('against MockPass (sgID v2)', () => {
  let mockpass: ChildProcess | undefined;
  let hostname = '';

  beforeAll(async () => {
    const port = await freePort();
    let output = '';
    mockpass = spawn(process.execPath, [join(repoRoot, 'node_modules', '@opengovsg', 'mockpass', 'index.js')], {
      cwd: workDir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        MOCKPASS_PORT: String(port),
        MOCKPASS_NRIC: 'S9812379B',
        SHOW_LOGIN_PAGE: 'false',
        SERVICE_PROVIDER_PUB_KEY: join(workDir, 'app-key.pub.pem'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    mockpass.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    mockpass.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    while (!output.includes(`MockPass listening on ${port}`)) {
      if (mockpass.exitCode !== null) throw new Error(`MockPass exited:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    hostname = `http://127.0.0.1:${port}`;
  }, 60_000);

  afterAll(async () => {
    await stopChild(mockpass);
  });

  describe.each(APPS)('$name', ({ file, filtersAttributes }) => {
    let app: Running | undefined;

    afterAll(async () => {
      await stopChild(app?.child);
    });

    it('signs the person in and shows the name MockPass holds for them; refuses a state it never issued', async () => {
      app = await startApp(file, {
        SGID_CLIENT_ID: 'migrating-app',
        SGID_CLIENT_SECRET: randomBytes(24).toString('base64url'),
        SGID_PRIVATE_KEY: keys.privateKeyPem,
        SGID_HOSTNAME: hostname,
        SGID_SCOPE: 'openid myinfo.name',
      });
      const user = await signIn(app);
      expect(user?.sub).toMatch(/^u=[0-9a-f-]{36}$/);
      // MockPass sends the identity number unasked: IdClient returns it as the official client
      // does; the strategy keeps only the scopes asked for.
      expect(user?.data).toEqual(
        filtersAttributes
          ? { 'myinfo.name': 'LIM YONG XIANG' }
          : { 'myinfo.name': 'LIM YONG XIANG', 'myinfo.nric_number': 'S9812379B' },
      );
      await expectStrangerRefused(app);
    }, 60_000);
  });
});

describe('without SGID_HOSTNAME', () => {
  it('the official client app starts (it would use https://api.id.gov.sg); the IdClient app stops, asking for hostname', async () => {
    const env = {
      SGID_CLIENT_ID: 'migrating-app',
      SGID_CLIENT_SECRET: 'migrating-secret',
      SGID_PRIVATE_KEY: keys.privateKeyPem,
    };
    const started = await startApp('before.mts', env);
    await stopChild(started.child);
    await expect(startApp('after.mts', env)).rejects.toThrow(/TypeError: IdClient: hostname is required/);
  }, 60_000);
});
