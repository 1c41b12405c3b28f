/**
 * The guides' framework recipes (marked `<!-- readme-test: recipe mePath=... -->` in docs/:
 * Hono, Fastify, NestJS, the sessions guide's Express app) run as written, against the built
 * package, and sign a person in through the provider: each is started as its own process with
 * the configuration in its environment, and a browser walks login → service → callback.
 * (test/readme.test.ts type-checks them.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';
import { docSnippets, installedAppTsconfig } from '../helpers/doc-snippets.js';
import { stopChild } from '../helpers/stop-child.js';
import { approve, Browser } from '../helpers/harness.js';

const root = join(__dirname, '..', '..');
const workDir = join(root, '.tmp', `readme-recipes-${process.pid}`);

const RECIPES = docSnippets('ts')
  .filter((snippet) => snippet.kind === 'recipe')
  .map((snippet) => ({
    heading: `${snippet.file}:${snippet.line}`,
    id: snippet.id,
    code: snippet.code,
    mePath: snippet.args.mePath ?? '/',
  }));

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
  // Nest apps compile decorators the legacy way; tsx reads this option from this file.
  installedAppTsconfig(workDir, { experimentalDecorators: true });
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

it('the Hono, Fastify, NestJS and sessions guides each have a recipe', () => {
  expect(RECIPES.map((r) => r.heading.replace(/:\d+$/, '')).sort()).toEqual([
    'docs/fastify.md',
    'docs/fetch.md',
    'docs/nestjs.md',
    'docs/sessions.md',
  ]);
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

    // The login the guide links to (no returnTo) lands on a page of the app that shows the person.
    const plain = new Browser(`http://127.0.0.1:${port}`);
    const started = await plain.get('/auth/login');
    expect(started.status).toBe(302);
    const landedAt = await plain.get((await approve(new URL(started.location as string))).href);
    expect(landedAt.status).toBe(302);
    const landing = await plain.get(landedAt.location as string);
    expect(landing.status, landing.text).toBe(200);
    expect(landing.text).toContain(persona['profile.name']);
  }, 60_000);
});

/**
 * The README's five-minute path, walked as a person does it: the README's app and the provider
 * with the README's registration (no auto-approve), and at each step the page shows what the
 * README says it shows, in the README's words.
 */
describe("the README's five-minute path", () => {
  let provider: StartedProvider | undefined;
  let child: ChildProcess | undefined;

  afterAll(async () => {
    await stopChild(child);
    await provider?.close();
  });

  it('shows at each step what the README says, from Log in to the signed-in page', async () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8').replace(/\s+/g, ' ');
    const app = docSnippets('ts').find((s) => s.file === 'README.md' && s.kind === 'run');
    const file = join(workDir, 'five-minutes.mts');
    writeFileSync(file, app!.code);
    const port = await freePort();
    const callback = `http://127.0.0.1:${port}/auth/callback`;
    const keys = testKeyPair('five-minutes');
    provider = await startProvider({
      clients: [
        {
          clientId: 'try-app',
          clientSecret: 'try-app-secret',
          name: 'Try app',
          redirectUris: [callback],
          publicKey: keys.publicKeyPem,
        },
      ],
    });
    let output = '';
    child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        TSX_TSCONFIG_PATH: join(workDir, 'tsconfig.json'),
        PORT: String(port),
        ND_ID_HOSTNAME: provider.baseUrl,
        ND_ID_CLIENT_ID: 'try-app',
        ND_ID_CLIENT_SECRET: 'try-app-secret',
        ND_ID_PRIVATE_KEY: keys.privateKeyPem,
        ND_ID_REDIRECT_URI: callback,
        SESSION_SECRET: randomBytes(32).toString('hex'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    while (!output.includes(`Listening on http://127.0.0.1:${port}`)) {
      if (child.exitCode !== null) throw new Error(`The README app exited:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const browser = new Browser(`http://127.0.0.1:${port}`);

    // 1. The app's page: a Log in link, on a whole page (language, title, viewport).
    const home = await browser.get('/');
    expect(home.text).toContain('<a href="/auth/login">Log in</a>');
    expect(home.text).toMatch(/^<!doctype html><html lang="en"><head>/);
    expect(home.text).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(home.text).toMatch(/<title>[^<]+<\/title>/);
    expect(readme).toContain("The app's page: a **Log in** link.");

    // 2. The provider's page: the QR code, the number to pick, and the link to the phone app.
    const login = await browser.get('/auth/login');
    const qr = await fetch(login.location as string);
    const qrPage = await qr.text();
    expect(qrPage).toContain('<h1>Sign in to Try app</h1>');
    expect(readme).toContain('"Sign in to Try app"');
    expect(qrPage).toContain('When the app asks, pick this number: <strong id="match-code"');
    expect(readme).toContain('"When the app asks, pick this number: **42**"');
    expect(qrPage).toMatch(/Can't scan\? <\/span><a id="cant-scan"[^>]*>Open the identity app<\/a>/);
    expect(readme).toContain('click **Open the identity app** (after "Can\'t scan?")');
    const matchCode = /data-match-code="(\d\d)"/.exec(qrPage)?.[1] ?? '';
    const phoneUrl = /id="cant-scan" class="app-link" href="([^"]+)"/.exec(qrPage)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const statusUrl = new URL(
      (JSON.parse(/id="qr-config">([^<]*)</.exec(qrPage)?.[1] ?? '{}') as { statusUrl: string }).statusUrl,
      login.location as string,
    );

    // 3. The phone page: who asks, what it will receive, the twelve numbers (one must be picked), the person, Approve.
    const phonePage = await (await fetch(phoneUrl)).text();
    expect(phonePage).toContain('<h1>Try app wants you to sign in</h1>');
    expect(readme).toContain('"Try app wants you to sign in"');
    expect(phonePage).toContain('<li data-scope="profile.name">Full name</li>');
    expect(readme).toContain('receive (Full name)');
    expect(phonePage).toContain('Pick the number shown on the screen where you scanned the code');
    expect(readme).toContain('"Pick the number shown on the screen where you scanned the code"');
    expect(phonePage.match(/<input type="radio" name="match"/g)).toHaveLength(12);
    // A required radio group: a browser refuses Approve without a pick with "Please select one of these options".
    expect(phonePage).toMatch(/<input type="radio" name="match" value="\d\d" required>/);
    expect(readme).toContain('"Please select one of these options"');
    expect(
      /<select id="persona" name="persona">\s*<option value="([^"]+)">([^<]+)<\/option>/.exec(phonePage)?.slice(1),
    ).toEqual(['ada', 'Ada Testperson']);
    expect(readme).toContain('leave **Sign in as** on Ada Testperson');
    const answered = await fetch(phoneUrl, {
      method: 'POST',
      body: new URLSearchParams({ decision: 'approve', persona: 'ada', match: matchCode }),
    });
    expect(answered.status).toBe(200);

    // 4. The first tab moves on (its status poll) through the callback to the app's page, which shows the name and the pairwise id.
    const decided = (await (await fetch(statusUrl)).json()) as { status: string; redirectTo: string };
    expect(decided.status).toBe('approved');
    const back = await browser.get(decided.redirectTo);
    expect(back.status).toBe(302);
    const signedIn = await browser.get(back.location as string);
    expect(signedIn.text).toMatch(
      /Signed in as <strong>Ada Testperson<\/strong> \(pairwise id <code>[A-Za-z0-9_-]{16,}<\/code>\)/,
    );
    expect(readme).toContain('now shows "Signed in as **Ada Testperson** (pairwise id `...`)"');
    expect((await browser.get('/account')).text).toContain('Hello Ada Testperson');
    expect(readme).toContain('("Hello Ada Testperson")');
  }, 60_000);

  it('on a port that is taken, stops with the listen error instead of printing "Listening on"', async () => {
    const app = docSnippets('ts').find((s) => s.file === 'README.md' && s.kind === 'run');
    const file = join(workDir, 'five-minutes-taken.mts');
    writeFileSync(file, app!.code);
    const taken = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => taken.listen(port, '127.0.0.1', resolve));
    try {
      const keys = testKeyPair('five-minutes');
      const run = spawn(process.execPath, ['--import', 'tsx', file], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          TSX_TSCONFIG_PATH: join(workDir, 'tsconfig.json'),
          PORT: String(port),
          ND_ID_HOSTNAME: 'http://127.0.0.1:4000',
          ND_ID_CLIENT_ID: 'try-app',
          ND_ID_CLIENT_SECRET: 'try-app-secret',
          ND_ID_PRIVATE_KEY: keys.privateKeyPem,
          ND_ID_REDIRECT_URI: `http://127.0.0.1:${port}/auth/callback`,
          SESSION_SECRET: randomBytes(32).toString('hex'),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      run.stdout!.on('data', (c: Buffer) => (output += c.toString()));
      run.stderr!.on('data', (c: Buffer) => (output += c.toString()));
      // 'close', not 'exit': the output may still be arriving when the process has exited.
      const code = await new Promise<number | null>((resolve) => run.once('close', resolve));
      expect(code, output).not.toBe(0);
      expect(output).toContain(`EADDRINUSE`);
      expect(output).not.toContain('Listening on');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 30_000);
});
