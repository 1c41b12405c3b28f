/**
 * Functions short and named by their steps: no function, method, constructor or closure in
 * src/flow, src/passport, src/adapters or src/client is over 100 lines. A function counts whole
 * (its closures included), and each closure is also measured on its own.
 */
import { relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionLengths, tsFilesUnder } from './helpers/function-length.js';

const SRC = resolve(__dirname, '../src');
const FOLDERS = ['flow', 'passport', 'adapters', 'client'];
const LIMIT = 100;

const functions = FOLDERS.flatMap((folder) => tsFilesUnder(resolve(SRC, folder))).flatMap((file) =>
  functionLengths(file, `src/${relative(SRC, file)}`),
);

describe('function length in src/flow, src/passport, src/adapters and src/client', () => {
  it('finds the functions (the walk itself works)', () => {
    expect(functions.length).toBeGreaterThan(300);
    const names = functions.map((f) => `${f.file} ${f.name}`);
    expect(names).toContain('src/client/id-client.ts IdClient.constructor');
    expect(names).toContain('src/passport/router.ts ndIdRouter');
    expect(functions.find((f) => f.name === 'ndIdRouter')?.lines).toBeGreaterThan(10);
  });

  it(`has no function over ${LIMIT} lines`, () => {
    const offenders = functions
      .filter((f) => f.lines > LIMIT)
      .sort((a, b) => b.lines - a.lines)
      .map((f) => `${f.file}:${f.line} ${f.name}: ${f.lines} lines`);
    expect(offenders).toEqual([]);
  });
});
