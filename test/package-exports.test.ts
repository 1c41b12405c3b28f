/**
 * A consumer can load the built package both ways: `require('passport-nd-id')` and
 * `import('passport-nd-id')` (and every subpath): require() gets the CommonJS build, import the
 * ES module build, and `instanceof IdError` holds across both. Runs against dist/, which `npm test` builds first; node resolves the package name
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
const expected = {
  IdError: 'function',
  generatePkcePair: 'function',
  IdClient: 'function',
  DEFAULT_HOSTNAME: 'https://id.nd-id.example',
};

describe('package exports', () => {
  it('has been built (npm test runs npm run build first)', () => {
    expect(existsSync(join(root, 'dist/cjs/index.js')), 'dist/cjs/index.js is missing: run npm run build').toBe(true);
    expect(existsSync(join(root, 'dist/esm/index.js')), 'dist/esm/index.js is missing: run npm run build').toBe(true);
  });

  it("works with require('passport-nd-id')", () => {
    const code = `const m = require('passport-nd-id'); console.log(JSON.stringify({ ...${probe}, file: require.resolve('passport-nd-id') }));`;
    expect(node(['-e', code])).toEqual({ ...expected, file: join(root, 'dist/cjs/index.js') });
  });

  it("works with import('passport-nd-id')", () => {
    const code = `const m = await import('passport-nd-id'); console.log(JSON.stringify({ ...${probe}, file: import.meta.resolve('passport-nd-id') }));`;
    expect(node(['--input-type=module', '-e', code])).toEqual({
      ...expected,
      file: 'file://' + join(root, 'dist/esm/index.js'),
    });
  });

  it('import loads a real ES module build, not a wrapper of the CommonJS one', () => {
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      "await import('passport-nd-id');",
      "console.log(JSON.stringify({ cjsLoaded: Object.keys(require.cache).some((f) => f.includes('/dist/cjs/')) }));",
    ].join('\n');
    expect(node(['--input-type=module', '-e', code])).toEqual({ cjsLoaded: false });
  });

  it('makes instanceof IdError and NdIdLoginFailure hold across the import and require builds', () => {
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      "const esm = await import('passport-nd-id');",
      "const cjs = require('passport-nd-id');",
      "const err = new esm.IdError('provider_timeout', 'x');",
      "const failure = new cjs.NdIdLoginFailure(403, 'Sign-in failed.', 'state_mismatch');",
      'console.log(JSON.stringify({',
      '  instance: err instanceof cjs.IdError, back: new cjs.IdError("state_mismatch", "x") instanceof esm.IdError,',
      '  isIdError: cjs.isIdError(err, "provider_timeout"), failure: failure instanceof esm.NdIdLoginFailure,',
      '  plain: new Error("x") instanceof esm.IdError, other: err instanceof esm.NdIdLoginFailure, code: err.code,',
      '}));',
    ].join('\n');
    expect(node(['--input-type=module', '-e', code])).toEqual({
      instance: true,
      back: true,
      isIdError: true,
      failure: true,
      plain: false,
      other: false,
      code: 'provider_timeout',
    });
  });

  it("loads 'passport-nd-id/provider' with both require and import", () => {
    const cjs = `const m = require('passport-nd-id/provider'); console.log(JSON.stringify({ type: typeof m, file: require.resolve('passport-nd-id/provider') }));`;
    expect(node(['-e', cjs])).toEqual({ type: 'object', file: join(root, 'dist/cjs/provider/index.js') });
    const esm = `const m = await import('passport-nd-id/provider'); console.log(JSON.stringify({ type: typeof m, file: import.meta.resolve('passport-nd-id/provider') }));`;
    expect(node(['--input-type=module', '-e', esm])).toEqual({
      type: 'object',
      file: 'file://' + join(root, 'dist/esm/provider/index.js'),
    });
  });

  it("loads 'passport-nd-id/fastify' with both require and import, the client's exports the root's own", () => {
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      "const esm = await import('passport-nd-id/fastify');",
      "const esmRoot = await import('passport-nd-id');",
      "const cjs = require('passport-nd-id/fastify');",
      'const names = Object.keys(esm).sort();',
      'console.log(JSON.stringify({',
      '  cjsNames: Object.keys(cjs).filter((n) => n !== "__esModule").sort().join() === names.join(),',
      '  sameClient: esm.IdClient === esmRoot.IdClient,',
      '  plugin: typeof esm.ndIdFastify, guards: typeof cjs.ndIdFastifyGuards,',
      '}));',
    ].join('\n');
    expect(node(['--input-type=module', '-e', code])).toEqual({
      cjsNames: true,
      sameClient: true,
      plugin: 'function',
      guards: 'function',
    });
  });

  it.each(['client', 'fetch', 'nest'])(
    "loads 'passport-nd-id/%s' with both require and import, each export the root's own",
    (entry) => {
      const code = [
        "import { createRequire } from 'node:module';",
        "const require = createRequire(process.cwd() + '/');",
        `const esm = await import('passport-nd-id/${entry}');`,
        "const esmRoot = await import('passport-nd-id');",
        `const cjs = require('passport-nd-id/${entry}');`,
        "const cjsRoot = require('passport-nd-id');",
        'const names = Object.keys(esm).sort();',
        'console.log(JSON.stringify({',
        '  same: names.filter((n) => esm[n] !== esmRoot[n] || cjs[n] !== cjsRoot[n]),',
        '  cjsNames: Object.keys(cjs).filter((n) => n !== "__esModule").sort().join() === names.join(),',
        '  hasClient: typeof esm.IdClient, count: names.length,',
        '}));',
      ].join('\n');
      const result = node(['--input-type=module', '-e', code]) as {
        same: string[];
        cjsNames: boolean;
        hasClient: string;
        count: number;
      };
      expect(result).toMatchObject({ same: [], cjsNames: true, hasClient: 'function' });
      expect(result.count).toBeGreaterThan(20);
    },
  );
});
