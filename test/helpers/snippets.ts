/**
 * The TypeScript snippets of a Markdown guide, and a type-check of them against the built
 * package as a user imports it (`passport-nd-id`, `passport-nd-id/provider`). Shared by the
 * README and docs/ tests.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** One ```ts block. */
export interface Snippet {
  /** 1-based line of the opening fence, for messages. */
  line: number;
  code: string;
  /** Marked `<!-- readme-test: run -->` just above: a test runs it, not only type-checks it. */
  run: boolean;
}

/** Every ```ts block of `markdown`. */
export function extractSnippets(markdown: string): Snippet[] {
  const snippets: Snippet[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) body.push(lines[i]!);
    const before = lines.slice(Math.max(0, start - 2), start).join('\n');
    snippets.push({ line: start + 1, code: `${body.join('\n')}\n`, run: before.includes('<!-- readme-test: run -->') });
  }
  return snippets;
}

/** Writes each snippet to `<dir>/<prefix>-line-<line>.mts` with a strict NodeNext tsconfig beside them. */
export function writeSnippets(dir: string, prefix: string, snippets: Snippet[], lib: string[] = ['ES2023']): void {
  mkdirSync(dir, { recursive: true });
  for (const snippet of snippets) writeFileSync(join(dir, `${prefix}-line-${snippet.line}.mts`), snippet.code);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        // The NestJS recipes use Nest's (legacy) decorators, as Nest apps compile them.
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
}

/** tsc's complaints about the snippets in `dir` ('' when they type-check). */
export async function typeCheckSnippets(root: string, dir: string): Promise<string> {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  return promisify(execFile)(process.execPath, [tsc, '-p', dir], { cwd: root }).then(
    () => '',
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
}
