/**
 * A consumer can load the built package both ways: `require('passport-nd-id')` and
 * `import('passport-nd-id')` (and every subpath): require() gets the CommonJS build, import the
 * ES module build, and `instanceof IdError` holds across both. The root is the Express and
 * Passport layer only; a name two entries export is the same object in both. Runs against dist/, which `npm test` builds first; node resolves the package name
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
  NdIdStrategy: typeof m.NdIdStrategy,
  ndIdRouter: typeof m.ndIdRouter,
  createSessionPolicy: typeof m.createSessionPolicy,
  ND_ID_STRATEGY_NAME: m.ND_ID_STRATEGY_NAME,
})`;
const expected = {
  NdIdStrategy: 'function',
  ndIdRouter: 'function',
  createSessionPolicy: 'function',
  ND_ID_STRATEGY_NAME: 'nd-id',
};

/** The root's values: the Express and Passport layer, and the session rules its guide configures it with. */
const ROOT_VALUES = [
  'DEFAULT_LOGIN_TTL_MS',
  'DEFAULT_MAX_PENDING_LOGINS',
  'DEFAULT_SESSION_KEY',
  'DEFAULT_STRATEGY_SCOPE',
  'DEFAULT_VERIFY_TIMEOUT_MS',
  'ND_ID_STRATEGY_NAME',
  'NdIdStrategy',
  'createSessionPolicy',
  'ndIdRouter',
  'ndIdSession',
  'requireRecentSignIn',
  'requireSignIn',
];

/** The entries that share code: the root and the framework entries (the provider shares none of their names). */
const ENTRIES = [
  'passport-nd-id',
  'passport-nd-id/client',
  'passport-nd-id/fetch',
  'passport-nd-id/nest',
  'passport-nd-id/fastify',
];

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
      "const esm = await import('passport-nd-id/nest');",
      "const cjs = require('passport-nd-id/nest');",
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

  it("loads 'passport-nd-id/fastify' with both require and import, the client's exports the client entry's own", () => {
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      "const esm = await import('passport-nd-id/fastify');",
      "const esmClient = await import('passport-nd-id/client');",
      "const cjs = require('passport-nd-id/fastify');",
      'const names = Object.keys(esm).sort();',
      'console.log(JSON.stringify({',
      '  cjsNames: Object.keys(cjs).filter((n) => n !== "__esModule").sort().join() === names.join(),',
      '  sameClient: esm.IdClient === esmClient.IdClient,',
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

  it('the root exports the Express and Passport layer only: IdClient and the framework-neutral names are in passport-nd-id/client', () => {
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      "const esm = await import('passport-nd-id');",
      "const cjs = require('passport-nd-id');",
      'console.log(JSON.stringify({',
      '  esm: Object.keys(esm).sort(), cjs: Object.keys(cjs).filter((n) => n !== "__esModule").sort(),',
      '}));',
    ].join('\n');
    expect(node(['--input-type=module', '-e', code])).toEqual({ esm: ROOT_VALUES, cjs: ROOT_VALUES });
  });

  it.each(['client', 'fetch', 'nest'])(
    "loads 'passport-nd-id/%s' with both require and import, the same names both ways",
    (entry) => {
      const code = [
        "import { createRequire } from 'node:module';",
        "const require = createRequire(process.cwd() + '/');",
        `const esm = await import('passport-nd-id/${entry}');`,
        `const cjs = require('passport-nd-id/${entry}');`,
        'const names = Object.keys(esm).sort();',
        'console.log(JSON.stringify({',
        '  cjsNames: Object.keys(cjs).filter((n) => n !== "__esModule").sort().join() === names.join(),',
        '  hasClient: typeof esm.IdClient, count: names.length,',
        '}));',
      ].join('\n');
      const result = node(['--input-type=module', '-e', code]) as {
        cjsNames: boolean;
        hasClient: string;
        count: number;
      };
      expect(result).toMatchObject({ cjsNames: true, hasClient: 'function' });
      expect(result.count).toBeGreaterThan(20);
    },
  );

  it.each(['import', 'require'])('a name two entries export is the same object in both (%s)', (how) => {
    const load = how === 'import' ? 'await import(name)' : 'require(name)';
    const code = [
      "import { createRequire } from 'node:module';",
      "const require = createRequire(process.cwd() + '/');",
      `const entries = ${JSON.stringify(ENTRIES)};`,
      `const loaded = []; for (const name of entries) loaded.push([name, ${load}]);`,
      'const first = new Map(); const differ = []; let shared = 0;',
      'for (const [entry, m] of loaded) for (const [key, value] of Object.entries(m)) {',
      '  if (key === "__esModule") continue;',
      '  if (!first.has(key)) first.set(key, value); else { shared++; if (first.get(key) !== value) differ.push(entry + ":" + key); }',
      '}',
      'console.log(JSON.stringify({ differ, shared }));',
    ].join('\n');
    const result = node(['--input-type=module', '-e', code]) as { differ: string[]; shared: number };
    expect(result.differ).toEqual([]);
    expect(result.shared).toBeGreaterThan(100);
  });
});
