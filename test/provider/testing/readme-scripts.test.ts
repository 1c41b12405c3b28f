/**
 * The documentation's test-kit snippets (marked `<!-- readme-test: script -->`) are run as written,
 * against the built package, each in its own process; their `assert`s are the checks.
 * (test/readme.test.ts type-checks them.)
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { docSnippets, installedAppTsconfig } from '../../helpers/doc-snippets.js';

const root = join(__dirname, '..', '..', '..');
const workDir = join(root, '.tmp', `readme-scripts-${process.pid}`);
const scripts = docSnippets('ts').filter((snippet) => snippet.kind === 'script');

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('test-kit snippets of the documentation', () => {
  it('there are some', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(2);
  });

  it.each(scripts)(
    'the snippet at $file line $line runs and its assertions hold',
    async ({ id, code }) => {
      const file = join(workDir, `${id}.mts`);
      writeFileSync(file, code);
      const tsx = join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs');
      const result = await promisify(execFile)(process.execPath, ['--import', tsx, file], {
        cwd: root,
        env: { ...process.env, TSX_TSCONFIG_PATH: installedAppTsconfig(workDir) },
        timeout: 60_000,
      }).then(
        () => 'ok',
        (err: { stderr?: string; message?: string }) => err.stderr ?? err.message ?? String(err),
      );
      expect(result).toBe('ok');
    },
    90_000,
  );
});
