/**
 * Every ```ts snippet in README.md and docs/*.md is type-checked against the built package,
 * exactly as a user would import it (`passport-nd-id`, `passport-nd-id/provider`), and the
 * README's complete Express example is run against the provider and signs a person in.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { DEFAULT_PERSONAS, startProvider } from 'passport-nd-id/provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { docSnippets, pointAtDocs, readDoc, repoRoot, type DocSnippet } from './helpers/doc-snippets.js';
import { testKeyPair } from './helpers/keys.js';
import { freePort } from './helpers/ports.js';
import { stopChild } from './helpers/stop-child.js';

const root = repoRoot;
const readme = readDoc('README.md');
const workDir = join(root, '.tmp', `readme-snippets-${process.pid}`);

// Snippets marked `file` are files of a multi-file app (Next.js), run together by
// test/consumers/recipes-fresh.test.ts rather than type-checked one by one here.
const snippets = docSnippets('ts').filter((s) => s.kind !== 'file');
const fileOf = (snippet: DocSnippet): string => join(workDir, `${snippet.id}.mts`);

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
  for (const snippet of snippets) writeFileSync(fileOf(snippet), snippet.code);
  writeFileSync(
    join(workDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        // The NestJS recipe uses Nest's (legacy) decorators, as Nest apps compile them.
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
        esModuleInterop: true,
        skipLibCheck: true,
        isolatedModules: true,
        types: ['node'],
        noEmit: true,
      },
      include: ['*.mts'],
    }),
  );
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('README and docs/', () => {
  it('keeps the two quick-start commands', () => {
    expect(readme).toContain('npm ci && npm start   # run the example app');
    expect(readme).toContain('npm ci && npm test    # run the whole test suite');
  });

  it('opens with the npm path; the repository commands come last, under their own heading', () => {
    const firstCommand = readme.indexOf('```sh\n');
    expect(readme.slice(firstCommand, firstCommand + 40)).toContain('npm install passport-nd-id');
    const headings = [...readme.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings.slice(0, 3)).toEqual([
      'Install',
      'Use it in an Express app',
      'Try it against the bundled provider in five minutes',
    ]);
    expect(headings.at(-1)).toBe('Working on this repository');
    const repository = readme.slice(readme.indexOf('## Working on this repository'));
    expect(repository).toContain('npm ci && npm start');
    expect(repository).toContain('npm ci && npm test');
    expect(readme.indexOf('npm ci')).toBe(readme.indexOf('npm ci', readme.indexOf('## Working on this repository')));
  });

  it('stays short: what it is, install, the flow, the Express app, the local try-out, links', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(260);
  });

  it('has TypeScript snippets across README and docs/, one of them marked to run', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(15);
    expect(snippets.filter((s) => s.kind === 'run').map((s) => s.file)).toEqual(['README.md']);
  });

  it('every TypeScript snippet type-checks against the published package', async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', workDir], { cwd: root }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    // Map temp file names back to the pages and lines in the failure message.
    expect(pointAtDocs(result)).toBe('');
  }, 120_000);

  describe('the complete Express example', () => {
    let provider: Awaited<ReturnType<typeof startProvider>>;
    let child: ChildProcess | undefined;
    let output = '';

    afterAll(async () => {
      await stopChild(child);
      await provider?.close();
    });

    it('runs, and a person signing in is shown as signed in with their name', async () => {
      const snippet = snippets.find((s) => s.kind === 'run')!;
      const port = await freePort();
      const callback = `http://127.0.0.1:${port}/auth/callback`;
      const keys = testKeyPair('readme');
      const persona = DEFAULT_PERSONAS[4]!;
      const clientSecret = randomBytes(24).toString('base64url');
      provider = await startProvider({
        clients: [{ clientId: 'readme-app', clientSecret, redirectUris: [callback], publicKey: keys.publicKeyPem }],
        autoApprove: persona.id,
      });
      child = spawn(process.execPath, ['--import', 'tsx', fileOf(snippet)], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          // The snippets' own settings, without the repository's source paths: the app loads the
          // built package through its "exports", as an app that installed it from npm does.
          TSX_TSCONFIG_PATH: join(workDir, 'tsconfig.json'),
          PORT: String(port),
          ND_ID_HOSTNAME: provider.baseUrl,
          ND_ID_CLIENT_ID: 'readme-app',
          ND_ID_CLIENT_SECRET: clientSecret,
          ND_ID_PRIVATE_KEY: keys.privateKeyPem,
          ND_ID_REDIRECT_URI: callback,
          SESSION_SECRET: randomBytes(32).toString('hex'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      while (!output.includes(`Listening on http://127.0.0.1:${port}`)) {
        if (child.exitCode !== null) throw new Error(`The README example exited:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }

      const base = `http://127.0.0.1:${port}`;
      const home = await fetch(`${base}/`);
      expect(await home.text()).toContain('<a href="/auth/login">Log in</a>');

      let cookie = '';
      const keep = (res: Response): Response => {
        const set = res.headers.getSetCookie()[0];
        if (set) cookie = set.split(';')[0]!;
        return res;
      };
      const login = keep(await fetch(`${base}/auth/login`, { redirect: 'manual' }));
      const approved = await fetch(login.headers.get('location')!, { redirect: 'manual' });
      const back = keep(await fetch(approved.headers.get('location')!, { redirect: 'manual', headers: { cookie } }));
      expect(back.status).toBe(302);
      expect(back.headers.get('location')).toBe('/');

      const signedIn = await (await fetch(`${base}/`, { headers: { cookie } })).text();
      expect(signedIn).toContain(
        `Signed in as <strong>${persona['profile.name']}</strong> (pairwise id <code>${provider.provider.subjectFor('readme-app', persona.id)}</code>)`,
      );
      expect(signedIn).toContain('<form method="post" action="/auth/logout">');
      const account = await fetch(`${base}/account`, { headers: { cookie } });
      expect(await account.text()).toContain(`<p>Hello ${persona['profile.name']}</p>`);
      const stranger = await fetch(`${base}/account`, { redirect: 'manual' });
      expect(stranger.status).toBe(303);
      expect(stranger.headers.get('location')).toContain('/auth/login');
    });
  });
});
