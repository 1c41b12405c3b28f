/**
 * The provider's import graph, read with the TypeScript compiler's own pre-processor (which
 * lists every import and export-from, type-only ones included): no circle inside
 * src/provider, no import of Express, and nothing from the relying-party layers.
 */
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circlesOf, importGraph, importsOf, sourceFiles } from '../helpers/import-graph.js';

const ROOT = resolve(__dirname, '../../src/provider');

const files = sourceFiles(ROOT);
const graph = importGraph(files, (target) => target.startsWith(ROOT));
const circles = (): string[][] => circlesOf(graph, ROOT);

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
