/**
 * The whole of src/'s import graph, read with the TypeScript compiler's own pre-processor (type-only
 * imports included): no import circle anywhere, and no layer reaching back up — src/flow imports no
 * entry (src/client.ts, src/index.ts, ...), no Passport, adapter or framework module; the adapters
 * import no entry. (test/provider/import-graph.test.ts holds the provider's own rules.)
 */
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circlesOf, importGraph, importsOf, sourceFiles } from './helpers/import-graph.js';

const SRC = resolve(__dirname, '../src');
const ENTRIES = ['index.ts', 'client.ts', 'fetch.ts', 'nest.ts', 'fastify.ts'].map((f) => join(SRC, f));

const files = sourceFiles(SRC);
const graph = importGraph(files);
const circles = (): string[][] => circlesOf(graph, SRC);

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
