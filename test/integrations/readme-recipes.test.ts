/**
 * The guides' framework recipes (marked `<!-- readme-test: recipe mePath=... -->` in docs/:
 * Hono, Fastify, NestJS) run as written, against the built
 * package, and sign a person in through the provider: each is started as its own process with
 * the configuration in its environment, and a browser walks login → service → callback.
 * (test/readme.test.ts type-checks them.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/redis.js';
import { docSnippets } from '../helpers/doc-snippets.js';
import { stopChild } from '../helpers/stop-child.js';
import { approve, Browser } from '../helpers/harness.js';

const root = join(__dirname, '..', '..');
const workDir = join(root, '.tmp', `readme-recipes-${process.pid}`);

const RECIPES = docSnippets('ts')
  .filter((snippet) => snippet.kind === 'recipe')
  .map((snippet) => ({ heading: `${snippet.file}:${snippet.line}`, id: snippet.id, code: snippet.code, mePath: snippet.args.mePath ?? '/' }));

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
  // Nest apps compile decorators the legacy way; tsx reads these options from this file.
  writeFileSync(join(workDir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { experimentalDecorators: true, target: 'ES2022' } }));
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

it('the Hono, Fastify and NestJS guides each have a recipe', () => {
  expect(RECIPES.map((r) => r.heading.replace(/:\d+$/, '')).sort()).toEqual(['docs/fastify.md', 'docs/fetch.md', 'docs/nestjs.md']);
});

describe.each(RECIPES)('recipe at $heading', ({ heading, id, code, mePath }) => {
  let provider: StartedProvider | undefined;
  let child: ChildProcess | undefined;
  let output = '';

  afterAll(async () => {
    await stopChild(child);
    await provider?.close();
  });

  it('runs and signs a person in', async () => {
    const file = join(workDir, `${id}.mts`);
    writeFileSync(file, code);
    const port = await freePort();
    const callback = `http://127.0.0.1:${port}/auth/callback`;
    const keys = testKeyPair('readme');
    const persona = DEFAULT_PERSONAS[2]!;
    const clientSecret = randomBytes(24).toString('base64url');
    provider = await startProvider({
      clients: [{ clientId: 'recipe-app', clientSecret, redirectUris: [callback], publicKey: keys.publicKeyPem }],
      autoApprove: persona.id,
    });
    child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        TSX_TSCONFIG_PATH: join(workDir, 'tsconfig.json'),
        PORT: String(port),
        ND_ID_HOSTNAME: provider.baseUrl,
        ND_ID_CLIENT_ID: 'recipe-app',
        ND_ID_CLIENT_SECRET: clientSecret,
        ND_ID_PRIVATE_KEY: keys.privateKeyPem,
        ND_ID_REDIRECT_URI: callback,
        SESSION_SECRET: randomBytes(32).toString('hex'),
        SESSION_KEY: randomBytes(32).toString('hex'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    while (!output.includes(`Listening on http://127.0.0.1:${port}`)) {
      if (child.exitCode !== null) throw new Error(`The ${heading} recipe exited:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }

    const browser = new Browser(`http://127.0.0.1:${port}`);
    const login = await browser.get('/auth/login?returnTo=%2Faccount');
    expect(login.status).toBe(302);
    const callbackUrl = await approve(new URL(login.location as string));
    const back = await browser.get(callbackUrl.href);
    expect(back.status).toBe(302);
    expect(back.location).toBe('/account');
    const me = JSON.parse((await browser.get(mePath)).text) as { user: { data: Record<string, string> } | null };
    expect(me.user?.data['profile.name']).toBe(persona['profile.name']);
    // A replay by the person still signed in (the back button) sends them on; anyone else's is refused with the strategy's status.
    const replay = await browser.get(callbackUrl.href);
    expect(replay.status).toBe(302);
    expect(replay.location).toBe('/account');
    expect((await new Browser(`http://127.0.0.1:${port}`).get(callbackUrl.href)).status).toBe(403);
  }, 60_000);
});
