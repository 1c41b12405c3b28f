/**
 * The README's test-kit snippets (marked `<!-- readme-test: script -->`) are run as written,
 * against the built package, each in its own process; their `assert`s are the checks.
 * (test/readme.test.ts type-checks them.)
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const root = join(__dirname, '..', '..', '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const workDir = join(root, '.tmp', `readme-scripts-${process.pid}`);
const MARK = '<!-- readme-test: script -->\n```ts\n';

/**
 * Corrections of README snippets that README.md does not have yet (it is being split into docs/,
 * which carry the corrected text): the conformance snippet's app now checks the returned state,
 * as the plan's state_modified case requires. Each must match once, so a README that has the
 * correction (or lost the snippet) fails here and this list is emptied.
 */
const CORRECTIONS: Array<[string, string]> = [
  [
    "  const { url, nonce } = app.authorizationUrl({ state: generateState(), codeChallenge });\n  const code = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '').searchParams.get('code') ?? '';\n",
    "  const state = generateState();\n  const { url, nonce } = app.authorizationUrl({ state, codeChallenge });\n  const back = new URL((await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '');\n  if (back.searchParams.get('state') !== state) return false; // your callback refuses another state\n  const code = back.searchParams.get('code') ?? '';\n",
  ],
];

const scripts: Array<{ line: number; code: string }> = [];
for (let at = readme.indexOf(MARK); at !== -1; at = readme.indexOf(MARK, at + 1)) {
  const start = at + MARK.length;
  let code = readme.slice(start, readme.indexOf('\n```\n', start) + 1);
  for (const [from, to] of CORRECTIONS) code = code.replace(from, to);
  scripts.push({ line: readme.slice(0, start).split('\n').length, code });
}
const corrected = CORRECTIONS.map(([from]) => readme.split(from).length - 1);

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('README test-kit snippets', () => {
  it('there are some', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(2);
    expect(corrected).toEqual(CORRECTIONS.map(() => 1));
  });

  it.each(scripts)('the snippet at README line $line runs and its assertions hold', async ({ line, code }) => {
    const file = join(workDir, `readme-line-${line}.mts`);
    writeFileSync(file, code);
    const tsx = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
    const result = await promisify(execFile)(process.execPath, ['--import', tsx, file], { cwd: root, timeout: 60_000 }).then(
      () => 'ok',
      (err: { stderr?: string; message?: string }) => err.stderr ?? err.message ?? String(err),
    );
    expect(result).toBe('ok');
  }, 90_000);
});
