/**
 * A consumer can load the built package both ways: `require('passport-nd-id')` and
 * `import('passport-nd-id')` (and the `/provider` subpath), and gets one IdError class from
 * both. Runs against dist/, which `npm test` builds first; node resolves the package name
 * through its own "exports" (self-reference) from the repository root.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '..');

function node(args: string[]): unknown {
  const out = execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(out.trim().split('\n').at(-1)!);
}

const probe = `({
  IdError: typeof m.IdError,
  generatePkcePair: typeof m.generatePkcePair,
  IdClient: typeof m.IdClient,
  DEFAULT_HOSTNAME: m.DEFAULT_HOSTNAME,
})`;
const expected = { IdError: 'function', generatePkcePair: 'function', IdClient: 'function', DEFAULT_HOSTNAME: 'https://id.nd-id.example' };

describe('package exports', () => {
  it('has been built (npm test runs npm run build first)', () => {
    expect(existsSync(join(root, 'dist/cjs/index.js')), 'dist/cjs/index.js is missing: run npm run build').toBe(true);
    expect(existsSync(join(root, 'dist/esm/index.mjs')), 'dist/esm/index.mjs is missing: run npm run build').toBe(true);
  });

  it("works with require('passport-nd-id')", () => {
    const code = `const m = require('passport-nd-id'); console.log(JSON.stringify({ ...${probe}, file: require.resolve('passport-nd-id') }));`;
    expect(node(['-e', code])).toEqual({ ...expected, file: join(root, 'dist/cjs/index.js') });
  });

  it("works with import('passport-nd-id')", () => {
    const code = `const m = await import('passport-nd-id'); console.log(JSON.stringify({ ...${probe}, file: import.meta.resolve('passport-nd-id') }));`;
    expect(node(['--input-type=module', '-e', code])).toEqual({
      ...expected,
      file: 'file://' + join(root, 'dist/esm/index.mjs'),
    });
  });

  it('gives the same IdError class to import and require, so instanceof holds across both', () => {
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      "const esm = await import('passport-nd-id');",
      "const cjs = require('passport-nd-id');",
      "const err = new esm.IdError('provider_timeout', 'x');",
      'console.log(JSON.stringify({ same: esm.IdError === cjs.IdError, instance: err instanceof cjs.IdError, code: err.code }));',
    ].join('\n');
    expect(node(['--input-type=module', '-e', code])).toEqual({ same: true, instance: true, code: 'provider_timeout' });
  });

  it("loads 'passport-nd-id/provider' with both require and import", () => {
    const cjs = `const m = require('passport-nd-id/provider'); console.log(JSON.stringify({ type: typeof m, file: require.resolve('passport-nd-id/provider') }));`;
    expect(node(['-e', cjs])).toEqual({ type: 'object', file: join(root, 'dist/cjs/provider/index.js') });
    const esm = `const m = await import('passport-nd-id/provider'); console.log(JSON.stringify({ type: typeof m, file: import.meta.resolve('passport-nd-id/provider') }));`;
    expect(node(['--input-type=module', '-e', esm])).toEqual({
      type: 'object',
      file: 'file://' + join(root, 'dist/esm/provider/index.mjs'),
    });
  });
});
