/**
 * Every recipe runs as written, as a newcomer would run it: for the README's Express app, the
 * Hono, Fastify and NestJS guides and the Next.js route handlers, a fresh folder (`npm init -y`,
 * so `"type": "commonjs"`), the guide's npm lines exactly (from the npm registry, but the packed
 * tarball for this package), the guide's tsconfig.json when it gives one, the guide's app as
 * `app.ts` started with `tsx app.ts` (or its files, started with `next dev`) and the guide's
 * environment variables. A person signs in through the app against
 * the provider with the login the guide links to (no `returnTo`), and the page the login lands on
 * shows them; a replay of the callback with the cookies from before it is refused. The Next.js app
 * also builds with `next build` without the `ND_ID_*` variables, as it is built before deployment.
 * The folders share npm's cache and are installed concurrently.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { docSnippets, installLines } from '../helpers/doc-snippets.js';
import { testKeyPair } from '../helpers/keys.js';
import { packedTarball } from '../helpers/pack.js';
import { freePort } from '../helpers/ports.js';
import { stopChild } from '../helpers/stop-child.js';
import { approve, Browser } from '../helpers/harness.js';

/** The first ```json block of a guide, when it has one (the tsconfig.json it asks for). */
function tsconfigOf(file: string): string | undefined {
  return docSnippets('json').find((s) => s.file === file)?.code;
}

interface Recipe {
  name: string;
  guide: string;
  install: string[][];
  /** The files to write: `app.ts`, or the guide's files by their marked paths. */
  files: Record<string, string>;
  tsconfig: string | undefined;
  /** A build step the guide names, run without the ND_ID_* variables (relative to node_modules/.bin). */
  build?: { bin: string; args: string[] };
  /** How to start it (relative to the folder's node_modules/.bin), and what it prints when ready. */
  start: { bin: string; args: (port: number) => string[]; ready: (port: number) => string };
}

const TSX = { bin: 'tsx', args: () => ['app.ts'], ready: (port: number) => `Listening on http://127.0.0.1:${port}` };

const recipe = (name: string, guide: string, heading: string, kind: string): Recipe => {
  const app = docSnippets('ts').find(
    (s) => (s.file === guide || (kind === 'run' && s.file === 'README.md')) && s.kind === kind,
  );
  if (!app) throw new Error(`${guide} has no snippet marked ${kind}`);
  return {
    name,
    guide,
    install: installLines(guide, heading),
    files: { 'app.ts': app.code },
    tsconfig: tsconfigOf(guide),
    start: TSX,
  };
};

const nextFiles = Object.fromEntries(
  docSnippets('ts')
    .filter((s) => s.file === 'docs/fetch.md' && s.kind === 'file')
    .map((s) => [s.args.path!, s.code]),
);

/** The sessions guide's Express app: installed with the README's lines, as the guide says. */
const sessionsApp = docSnippets('ts').find((s) => s.file === 'docs/sessions.md' && s.kind === 'recipe');

const RECIPES: Recipe[] = [
  recipe('Express (README)', 'docs/express.md', '## Install and configure', 'run'),
  {
    name: 'Express (sessions guide)',
    guide: 'docs/sessions.md',
    install: installLines('README.md', '## Install'),
    files: { 'app.ts': sessionsApp!.code },
    tsconfig: undefined,
    start: TSX,
  },
  recipe('Hono', 'docs/fetch.md', '## Install and configure', 'recipe'),
  recipe('Fastify', 'docs/fastify.md', '## Install and configure', 'recipe'),
  recipe('NestJS', 'docs/nestjs.md', '## Install and configure', 'recipe'),
  {
    name: 'Next.js route handlers',
    guide: 'docs/fetch.md',
    install: installLines('docs/fetch.md', '## Next.js route handlers (App Router)'),
    files: nextFiles,
    tsconfig: undefined,
    build: { bin: 'next', args: ['build'] },
    start: { bin: 'next', args: (port) => ['dev', '-p', String(port), '-H', '127.0.0.1'], ready: () => 'Ready in' },
  },
];

const run = promisify(execFile);

/** The test kit's scripts, saved as the guide says (`.mts`) in one fresh folder with its npm lines. */
const KIT = {
  install: installLines('docs/test-kit.md', '## Run a script'),
  scripts: docSnippets('ts').filter((s) => s.file === 'docs/test-kit.md' && s.kind === 'script'),
};
let kitDir = '';
let kitProblem: string | undefined;
let tarball = '';
const folders = new Map<string, string>();
const installProblems = new Map<string, string>();

beforeAll(async () => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  tarball = packedTarball();
  const kitInstall = (async () => {
    kitDir = mkdtempSync(join(tmpdir(), 'nd-id-kit-'));
    try {
      await run('npm', ['init', '-y'], { cwd: kitDir });
      for (const [npm, command, ...rest] of KIT.install) {
        const args = rest.map((word) => (word === 'passport-nd-id' ? tarball : word));
        await run(npm!, [command!, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...args], {
          cwd: kitDir,
          timeout: 480_000,
        });
      }
    } catch (err) {
      kitProblem = String((err as { stderr?: string }).stderr || err);
    }
  })();
  await Promise.all([
    kitInstall,
    ...RECIPES.map(async (r) => {
      const dir = mkdtempSync(join(tmpdir(), 'nd-id-recipe-'));
      folders.set(r.name, dir);
      try {
        await run('npm', ['init', '-y'], { cwd: dir });
        for (const [npm, command, ...rest] of r.install) {
          const args = rest.map((word) => (word === 'passport-nd-id' ? tarball : word));
          const quiet =
            command === 'install' ? ['--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'] : [];
          await run(npm!, [command!, ...quiet, ...args], { cwd: dir, timeout: 480_000 });
        }
        if (r.tsconfig !== undefined) writeFileSync(join(dir, 'tsconfig.json'), r.tsconfig);
        for (const [path, code] of Object.entries(r.files)) {
          mkdirSync(dirname(join(dir, path)), { recursive: true });
          writeFileSync(join(dir, path), code);
        }
      } catch (err) {
        installProblems.set(r.name, String((err as { stderr?: string }).stderr || err));
      }
    }),
  ]);
}, 600_000);

afterAll(() => {
  for (const dir of folders.values()) rmSync(dir, { recursive: true, force: true });
  if (kitDir) rmSync(kitDir, { recursive: true, force: true });
});

describe.each(RECIPES)('the $name recipe in a fresh folder', (r) => {
  let provider: StartedProvider | undefined;
  let child: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    await stopChild(child);
    await provider?.close();
  });

  it("installs with exactly the guide's npm lines, in a fresh npm init -y folder", () => {
    expect(installProblems.get(r.name)).toBeUndefined();
    expect(r.install.flat()).toContain('passport-nd-id');
    expect(Object.keys(r.files).length).toBeGreaterThan(0);
  });

  it.runIf(r.build !== undefined)(
    'builds without the ND_ID_* variables',
    async () => {
      const dir = folders.get(r.name)!;
      const env = {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? dir,
        NEXT_TELEMETRY_DISABLED: '1',
      };
      const built = await run(join(dir, 'node_modules', '.bin', r.build!.bin), r.build!.args, {
        cwd: dir,
        env,
        timeout: 480_000,
      }).then(
        () => 'built',
        (err: { stdout?: string; stderr?: string }) =>
          `${err.stdout ?? ''}${err.stderr ?? ''}`.replace(/^\s+at .*\n?/gm, ''),
      );
      expect(built).toBe('built');
    },
    600_000,
  );

  it('runs, signs a person in through the provider, lands on a page showing them, and refuses a replayed callback', async () => {
    const dir = folders.get(r.name)!;
    const port = await freePort();
    const callback = `http://127.0.0.1:${port}/auth/callback`;
    const keys = testKeyPair('recipes');
    const persona = DEFAULT_PERSONAS[1]!;
    const clientSecret = randomBytes(24).toString('base64url');
    provider = await startProvider({
      clients: [{ clientId: 'recipe-app', clientSecret, redirectUris: [callback], publicKey: keys.publicKeyPem }],
      autoApprove: persona.id,
    });
    child = spawn(join(dir, 'node_modules', '.bin', r.start.bin), r.start.args(port), {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? dir,
        PORT: String(port),
        ND_ID_HOSTNAME: provider.baseUrl,
        ND_ID_CLIENT_ID: 'recipe-app',
        ND_ID_CLIENT_SECRET: clientSecret,
        ND_ID_PRIVATE_KEY: keys.privateKeyPem,
        ND_ID_REDIRECT_URI: callback,
        SESSION_SECRET: randomBytes(32).toString('hex'),
        NEXT_TELEMETRY_DISABLED: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    while (!output.includes(r.start.ready(port))) {
      // Stack lines left out: they name files of the scratch folder that the reporter would try to map.
      if (child.exitCode !== null)
        throw new Error(`The ${r.name} recipe exited:\n${output.replace(/^\s+at .*\n?/gm, '')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    const browser = new Browser(`http://127.0.0.1:${port}`);
    const login = await browser.get('/auth/login');
    expect(login.status).toBe(302);
    const callbackUrl = await approve(new URL(login.location as string));
    const before = browser.snapshot();
    const back = await browser.get(callbackUrl.href);
    expect(back.status, back.text).toBe(302);
    // Where the login lands (the guide's login has no returnTo): a page of the app, showing the person.
    const landing = await browser.get(back.location as string);
    expect(landing.status, landing.text).toBe(200);
    expect(landing.text).toContain(persona['profile.name']);

    // The same callback again, with the cookies the browser had before it: refused.
    const replay = new Browser(`http://127.0.0.1:${port}`);
    for (const [name, value] of before) replay.jar.set(name, value);
    expect((await replay.get(callbackUrl.href)).status).toBe(403);

    // A callback with a state this app never issued: the failure page, 403 (not a framework's generic 401).
    const stranger = await new Browser(`http://127.0.0.1:${port}`).get(
      '/auth/callback?code=some-code&state=a-state-this-app-never-issued-0000',
    );
    expect(stranger.status).toBe(403);
    expect(stranger.text).toContain('not started in this browser');
  }, 240_000);
});

describe("the test kit's scripts in a fresh folder", () => {
  it("install with the guide's npm lines", () => {
    expect(kitProblem).toBeUndefined();
    expect(KIT.install.flat()).toContain('passport-nd-id');
    expect(KIT.scripts.length).toBeGreaterThanOrEqual(4);
  });

  it.each(KIT.scripts.map((s, i) => ({ ...s, name: `script-${i + 1}.mts` })))(
    'the script at $file line $line, saved as $name, runs with npx tsx and its checks hold',
    async ({ code, name }) => {
      writeFileSync(join(kitDir, name), code);
      const result = await run(join(kitDir, 'node_modules', '.bin', 'tsx'), [name], {
        cwd: kitDir,
        timeout: 120_000,
      }).then(
        () => 'ok',
        (err: { stderr?: string }) => (err.stderr ?? String(err)).replace(/^\s+at .*\n?/gm, ''),
      );
      expect(result).toBe('ok');
    },
    180_000,
  );
});
