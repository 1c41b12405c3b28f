/**
 * Every ```ts snippet in README.md is type-checked against the built package, exactly as a user
 * would import it (`passport-nd-id`, `passport-nd-id/provider`), and the complete Express example
 * is run against the provider and signs a person in.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { DEFAULT_PERSONAS, startProvider } from 'passport-nd-id/provider';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { testKeyPair } from './helpers/keys.js';
import { freePort } from './helpers/redis.js';
import { extractSnippets, typeCheckSnippets, writeSnippets, type Snippet } from './helpers/snippets.js';

const root = join(__dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const workDir = join(root, '.tmp', `readme-snippets-${process.pid}`);

const snippets = extractSnippets(readme);
const fileOf = (snippet: Snippet): string => join(workDir, `readme-line-${snippet.line}.mts`);

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  writeSnippets(workDir, 'readme', snippets);
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('README', () => {
  it('keeps the two quick-start commands', () => {
    expect(readme).toContain('npm ci && npm start   # run the example app');
    expect(readme).toContain('npm ci && npm test    # run the whole test suite');
  });

  it('documents every error code the library can raise', () => {
    const source = readFileSync(join(root, 'src', 'errors.ts'), 'utf8');
    const union = /export type IdErrorCode =([\s\S]*?);/.exec(source)?.[1] ?? '';
    const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(20);
    const table = readme.slice(readme.indexOf('## Errors'), readme.indexOf('## Timeouts and limits'));
    expect(codes.filter((code) => !table.includes(`\`${code}\``))).toEqual([]);
  });

  it('has TypeScript snippets, one of them marked to run', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(5);
    expect(snippets.filter((s) => s.run)).toHaveLength(1);
  });

  it('every TypeScript snippet type-checks against the published package', async () => {
    const result = await typeCheckSnippets(root, workDir);
    // Map temp file names back to README lines in the failure message.
    expect(result.replace(/readme-line-(\d+)\.mts/g, 'README.md snippet at line $1')).toBe('');
  });

  describe('the complete Express example', () => {
    let provider: Awaited<ReturnType<typeof startProvider>>;
    let child: ChildProcess | undefined;
    let output = '';

    afterAll(async () => {
      if (child && child.exitCode === null) {
        const gone = new Promise((resolve) => child!.once('exit', resolve));
        child.kill('SIGTERM');
        await gone;
      }
      await provider?.close();
    });

    it('runs, and a person signing in is shown as signed in with their name', async () => {
      const snippet = snippets.find((s) => s.run)!;
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
      while (!output.includes(`Listening on http://localhost:${port}`)) {
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

      const signedIn = await fetch(`${base}/`, { headers: { cookie } });
      const body = (await signedIn.json()) as { signedInAs: { sub: string; name: string } };
      expect(body.signedInAs.name).toBe(persona['profile.name']);
      expect(body.signedInAs.sub).toBe(provider.provider.subjectFor('readme-app', persona.id));
    });
  });
});
