/**
 * The public API's types, as a user's app compiles them against the built package: the type
 * tests of public-api.ts (each `@ts-expect-error` must be an error, every other line must
 * compile) and every ```ts example in the TSDoc of the exported classes.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const root = join(__dirname, '..', '..');
const workDir = join(root, '.tmp', `types-${process.pid}`);

/** The ```ts blocks of the TSDoc comments in `file`, with the comment's leading ` * ` removed. */
function tsdocExamples(file: string): string[] {
  const source = readFileSync(join(root, file), 'utf8');
  const examples: string[] = [];
  for (const comment of source.matchAll(/\/\*\*([\s\S]*?)\*\//g)) {
    const text = comment[1]!
      .split('\n')
      .map((line) => line.replace(/^\s*\* ?/, ''))
      .join('\n');
    for (const block of text.matchAll(/```ts\n([\s\S]*?)```/g)) examples.push(block[1]!);
  }
  return examples;
}

const EXAMPLES = ['src/passport/strategy.ts'].flatMap((file) =>
  tsdocExamples(file).map((code, i) => ({ file, code, name: `${file.replace(/\W+/g, '-')}-${i}.mts` })),
);

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(workDir, { recursive: true });
  copyFileSync(join(__dirname, 'public-api.ts'), join(workDir, 'public-api.mts'));
  for (const example of EXAMPLES) writeFileSync(join(workDir, example.name), example.code);
  writeFileSync(
    join(workDir, 'tsconfig.json'),
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
      include: ['*.mts'],
    }),
  );
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('the public API types', () => {
  it('the NdIdStrategy TSDoc has an example', () => {
    expect(EXAMPLES.map((e) => e.code).join('\n')).toContain('new NdIdStrategy(');
  });

  it('compile as the type tests say, with the TSDoc examples, against the built package', async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await promisify(execFile)(process.execPath, [tsc, '-p', workDir], { cwd: root }).then(
      () => '',
      (err: { stdout?: string }) => err.stdout ?? String(err),
    );
    expect(result).toBe('');
  }, 60_000);
});
