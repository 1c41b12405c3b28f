/**
 * The provider's import graph, read with the TypeScript compiler's own pre-processor (which
 * lists every import and export-from, type-only ones included): no circle inside
 * src/provider, no import of Express, and nothing from the relying-party layers.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../../src/provider');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((f) => f.fileName);
}

const files = sourceFiles(ROOT);
const graph = new Map<string, string[]>(
  files.map((file) => [
    file,
    importsOf(file)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')))
      .filter((target) => target.startsWith(ROOT)),
  ]),
);

/** Every circle, as a list of files relative to src/provider. */
function circles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open')
        found.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(ROOT, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('src/provider import graph', () => {
  it('finds the files and their imports (the walk itself works)', () => {
    expect(files.length).toBeGreaterThan(30);
    expect(graph.get(join(ROOT, 'index.ts'))).toContain(join(ROOT, 'handler.ts'));
    expect(importsOf(join(ROOT, 'provider.ts'))).toContain('./faults/kinds.js');
  });

  it('has no import circle, type-only imports included', () => {
    expect(circles()).toEqual([]);
  });

  it('imports neither Express nor the relying-party layers (flow, passport, adapters, client)', () => {
    const offending = files.flatMap((file) =>
      importsOf(file)
        .filter(
          (spec) =>
            spec === 'express' || spec.startsWith('express/') || /\/(flow|passport|adapters|client)\//.test(spec),
        )
        .map((spec) => `${relative(ROOT, file)} -> ${spec}`),
    );
    expect(offending).toEqual([]);
  });

  it('has no file past 500 lines', () => {
    const long = files
      .filter((file) => readFileSync(file, 'utf8').split('\n').length > 500)
      .map((f) => relative(ROOT, f));
    expect(long).toEqual([]);
  });
});
