/**
 * The whole of src/'s import graph, read with the TypeScript compiler's own pre-processor (type-only
 * imports included): no import circle anywhere, and no layer reaching back up — src/flow imports no
 * entry (src/client.ts, src/index.ts, ...), no Passport, adapter or framework module; the adapters
 * import no entry. (test/provider/import-graph.test.ts holds the provider's own rules.)
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(__dirname, '../src');
const ENTRIES = ['index.ts', 'client.ts', 'fetch.ts', 'nest.ts', 'fastify.ts'].map((f) => join(SRC, f));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

const files = sourceFiles(SRC);
const graph = new Map<string, string[]>(
  files.map((file) => [
    file,
    importsOf(file)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts'))),
  ]),
);

/** Every circle, as a list of files relative to src/. */
function circles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open')
        found.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(SRC, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

/** Imports from files under `dir` that land on one of `targets` (or match `bare`), as "from -> to". */
function reaching(dir: string, targets: (path: string) => boolean, bare: (spec: string) => boolean = () => false) {
  return files
    .filter((file) => file.startsWith(join(SRC, dir)))
    .flatMap((file) =>
      importsOf(file)
        .filter((spec) =>
          spec.startsWith('.') ? targets(resolve(dirname(file), spec.replace(/\.js$/, '.ts'))) : bare(spec),
        )
        .map((spec) => `${relative(SRC, file)} -> ${spec}`),
    );
}

describe('src/ import graph', () => {
  it('finds the files and their imports (the walk itself works)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get(join(SRC, 'fastify.ts'))).toContain(join(SRC, 'adapters', 'fastify.ts'));
  });

  it('has no import circle anywhere in src/, type-only imports included', () => {
    expect(circles()).toEqual([]);
  });

  it('src/flow imports no entry, no Passport or adapter module, and no framework', () => {
    const up = (path: string) =>
      ENTRIES.includes(path) || path.startsWith(join(SRC, 'passport')) || path.startsWith(join(SRC, 'adapters'));
    const framework = (spec: string) => /^(express|passport|fastify|@fastify\/|@nestjs\/|hono)/.test(spec);
    expect(reaching('flow', up, framework)).toEqual([]);
  });

  it('src/client and the adapters import no entry', () => {
    const entry = (path: string) => ENTRIES.includes(path);
    expect([...reaching('client', entry), ...reaching('adapters', entry), ...reaching('passport', entry)]).toEqual([]);
  });
});
