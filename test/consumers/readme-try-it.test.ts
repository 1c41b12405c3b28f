/**
 * The README's npm path, as a newcomer follows it: the two shell blocks of "Try it against the
 * bundled provider in five minutes" run with bash, as written, from an empty folder (the
 * package's npm word is the packed tarball, npm installs are quiet and prefer the cache, and the
 * ports 4000 and 3000 are free ports of the test's, the app's given in PORT): `npm init -y`, the install lines, the key
 * pair, clients.json, `npx nd-id-provider`; the README's app saved as `app.ts` beside them and
 * started by the second block's lines (`npx tsx app.ts`). A person then signs in through the QR
 * page and the phone page as the README's four steps say, and the app shows them.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { docSnippets, readDoc } from '../helpers/doc-snippets.js';
import { packedTarball } from '../helpers/pack.js';
import { freePort } from '../helpers/ports.js';
import { Browser } from '../helpers/harness.js';

const HEADING = '## Try it against the bundled provider in five minutes';
const QUIET = '--no-audit --no-fund --prefer-offline --loglevel=error';
/** The scripts this file started, each the leader of its process group. */
const children: ChildProcess[] = [];

/** The ```sh blocks of the README's try-it section, in order. */
function tryItBlocks(): string[] {
  const readme = readDoc('README.md');
  const start = readme.indexOf(`\n${HEADING}\n`);
  const end = readme.indexOf('\n## ', start + 1);
  const startLine = readme.slice(0, start).split('\n').length;
  const endLine = readme.slice(0, end).split('\n').length;
  return docSnippets('sh')
    .filter((s) => s.file === 'README.md' && s.line > startLine && s.line < endLine)
    .map((s) => s.code);
}

/** A block as run here: the tarball for the package, quiet installs, the test's ports. */
function adapt(block: string, tarball: string, ports: { provider: number; app: number }): string {
  return block
    .split('\n')
    .map((line) =>
      line.startsWith('npm install ')
        ? line.replace(/^npm install /, `npm install ${QUIET} `).replace(/ passport-nd-id(?= |$)/, ` ${tarball}`)
        : line,
    )
    .join('\n')
    .replace(/127\.0\.0\.1:4000|--port 4000/g, (m) => m.replace('4000', String(ports.provider)))
    .replace(/127\.0\.0\.1:3000/g, `127.0.0.1:${ports.app}`);
}

/**
 * Runs `script` with bash in its own process group (kept in `children`, stopped after the tests),
 * and resolves once `ready` is printed.
 */
async function startScript(
  script: string,
  cwd: string,
  ready: string,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; output: () => string }> {
  let output = '';
  const child = spawn('bash', ['-ec', script], {
    cwd,
    detached: true,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const deadline = Date.now() + 120_000;
  while (!output.includes(ready)) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`Never printed "${ready}":\n${output.replace(/^\s+at .*\n?/gm, '')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, output: () => output };
}

/** Stops a script and everything it started (npx runs its command in a process of its own). */
async function stopGroup(child: ChildProcess | undefined): Promise<void> {
  if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  await gone;
}

let parent = '';
let ports = { provider: 0, app: 0 };
let setupProblem: string | undefined;

beforeAll(async () => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  parent = mkdtempSync(join(tmpdir(), 'nd-id-try-it-'));
  ports = { provider: await freePort(), app: await freePort() };
  const [first = ''] = tryItBlocks();
  // The block up to its last line, which starts the provider and keeps running.
  const lines = adapt(first, packedTarball(), ports).trimEnd().split('\n');
  const setup = lines.slice(0, -1).join('\n');
  try {
    await promisify(execFile)('bash', ['-ec', setup], { cwd: parent, timeout: 480_000 });
  } catch (err) {
    setupProblem = String((err as { stderr?: string }).stderr || err);
  }
}, 600_000);

afterAll(async () => {
  for (const child of children) await stopGroup(child);
  if (parent) rmSync(parent, { recursive: true, force: true });
});

describe("the README's try-it path from an empty folder", () => {
  it('has two shell blocks: the folder, install, keys, registration and provider; then the app', () => {
    const blocks = tryItBlocks();
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(/^mkdir try-nd-id && cd try-nd-id && npm init -y/);
    expect(blocks[0]!.trimEnd().split('\n').pop()).toBe('npx nd-id-provider --clients clients.json --port 4000');
    expect(blocks[1]).toContain('npx tsx app.ts');
  });

  it('sets up with the first block, starts the provider and the app, and a person signs in through the QR and phone pages', async () => {
    expect(setupProblem).toBeUndefined();
    const folder = join(parent, 'try-nd-id');
    const [first = '', second = ''] = tryItBlocks().map((b) => adapt(b, packedTarball(), ports));
    await startScript(
      first.trimEnd().split('\n').pop()!,
      folder,
      `nd-id-provider ready at http://127.0.0.1:${ports.provider}`,
    );

    // "Save the app above as app.ts, then:" the second block (PORT: the app's port, 3000 unless set).
    const app = docSnippets('ts').find((s) => s.file === 'README.md' && s.kind === 'run')!;
    writeFileSync(join(folder, 'app.ts'), app.code);
    const started = await startScript(second, folder, `Listening on http://127.0.0.1:${ports.app}`, {
      PORT: String(ports.app),
    });

    const browser = new Browser(`http://127.0.0.1:${ports.app}`);
    expect((await browser.get('/')).text).toContain('<a href="/auth/login">Log in</a>');
    const login = await browser.get('/auth/login');
    expect(login.status).toBe(302);
    const qrPage = await (await fetch(login.location as string)).text();
    expect(qrPage).toContain('<h1>Sign in to Try app</h1>');
    const matchCode = /data-match-code="(\d\d)"/.exec(qrPage)?.[1] ?? '';
    const phoneUrl = /id="cant-scan" class="app-link" href="([^"]+)"/.exec(qrPage)?.[1]?.replace(/&amp;/g, '&') ?? '';
    const statusUrl = new URL(
      (JSON.parse(/id="qr-config">([^<]*)</.exec(qrPage)?.[1] ?? '{}') as { statusUrl: string }).statusUrl,
      login.location as string,
    );
    const approved = await fetch(phoneUrl, {
      method: 'POST',
      body: new URLSearchParams({ decision: 'approve', persona: 'ada', match: matchCode }),
    });
    expect(approved.status).toBe(200);
    const decided = (await (await fetch(statusUrl)).json()) as { status: string; redirectTo: string };
    expect(decided.status).toBe('approved');
    const back = await browser.get(decided.redirectTo);
    expect(back.status, started.output()).toBe(302);
    const signedIn = await browser.get(back.location as string);
    expect(signedIn.text).toMatch(
      /Signed in as <strong>Ada Testperson<\/strong> \(pairwise id <code>[\w-]{16,}<\/code>\)/,
    );
  }, 240_000);
});
