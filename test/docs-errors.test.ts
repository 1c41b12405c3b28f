/**
 * docs/errors.md has one row for every code the library can emit, and none it cannot: each
 * `IdError` code (the `IdErrorCode` union of src/errors.ts), each diagnosis (`DIAGNOSIS_CODES`)
 * and each log event (`LOG_EVENTS`), with the kind the row says it is.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIAGNOSIS_CODES } from '../src/flow/diagnose.js';
import { LOG_EVENTS } from '../src/log.js';
import { readDoc } from './helpers/doc-snippets.js';

const page = readDoc('docs/errors.md');
/** Codes named in the first cell of rows whose second cell starts with `kind`. */
function documented(kind: string): string[] {
  const rows = [...page.matchAll(/^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \| ([^|]+) \|/gm)];
  return rows
    .filter((row) => row[2]!.trim().startsWith(kind))
    .flatMap((row) => [...row[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
}

describe('docs/errors.md', () => {
  it('has one row for every IdError code, and none the library cannot raise', () => {
    const source = readFileSync(join(__dirname, '..', 'src', 'errors.ts'), 'utf8');
    const union = /export type IdErrorCode =([\s\S]*?);/.exec(source)?.[1] ?? '';
    const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
    expect(codes.length).toBeGreaterThan(20);
    expect(documented('error').sort()).toEqual([...codes].sort());
  });

  it('has one row for every diagnosis code, and none the library cannot emit', () => {
    expect(documented('diagnosis').sort()).toEqual([...DIAGNOSIS_CODES].sort());
  });

  it('has one row for every log event, and none the library does not log', () => {
    expect(documented('log event').sort()).toEqual(Object.values(LOG_EVENTS).sort());
  });

  it('gives every row a cause, and every error and diagnosis a fix', () => {
    const rows = [...page.matchAll(/^\| `[a-z_]+`.*\|$/gm)].map((m) => m[0].split(' | '));
    expect(rows.length).toBeGreaterThan(40);
    for (const cells of rows) {
      expect(cells[2]!.trim(), cells[0]).not.toBe('');
      if (!cells[1]!.startsWith('log event')) expect(cells[3]!.replace(/\|$/, '').trim(), cells[0]).not.toBe('');
    }
  });
});
