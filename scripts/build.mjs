// Builds the package twice from the same sources:
// - dist/cjs: TypeScript (tsc) to CommonJS, with the declarations (.d.ts);
// - dist/esm: the same sources as ES modules (esbuild), one file per public entry plus shared
//   chunks, marked `"type": "module"` by dist/esm/package.json, with the same declarations
//   copied beside them so that TypeScript reads the import condition's types as ESM.
// A bundler given the ESM build keeps only the modules an app imports (package.json says
// `"sideEffects": false`). The two builds hold two copies of each class; `IdError` and
// `NdIdLoginFailure` recognise instances of either copy (`instanceof` holds across both).
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const { build } = require('esbuild');

/** Every file under `dir` (relative paths, forward slashes). */
function walk(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) =>
      relative(dir, join(d.parentPath ?? d.path, d.name))
        .split('\\')
        .join('/'),
    );
}

rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

// One ES module per public entry, modules shared between entries in common chunks: Node then
// reads a handful of files rather than one per source file (most of the import time of an ES
// module graph is spent per file). Dependencies and Node's modules stay imports.
const ENTRIES = ['index', 'client', 'fetch', 'nest', 'fastify', 'provider/index'];
await build({
  absWorkingDir: root,
  entryPoints: ENTRIES.map((e) => ({ in: `src/${e}.ts`, out: e })),
  outdir: 'dist/esm',
  bundle: true,
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  packages: 'external',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: 'tsconfig.build.json',
  logLevel: 'warning',
  // The two CommonJS-only names in the sources, as their ES module equivalents (Node 20.11+).
  define: { __filename: 'import.meta.filename', __dirname: 'import.meta.dirname' },
});
writeFileSync(
  join(root, 'dist/esm/package.json'),
  JSON.stringify({ type: 'module', sideEffects: false }, null, 2) + '\n',
);

for (const file of walk(join(root, 'dist/cjs')).filter((f) => f.endsWith('.d.ts'))) {
  const to = join(root, 'dist/esm', file);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(join(root, 'dist/cjs', file), to);
}

// The ESM build must not lean on CommonJS: no require(), module.exports or exports.x left.
for (const file of walk(join(root, 'dist/esm')).filter((f) => f.endsWith('.js'))) {
  const code = readFileSync(join(root, 'dist/esm', file), 'utf8');
  if (/\brequire\(|\bmodule\.exports\b|\bexports\.\w+\s*=|\b__dirname\b|\b__filename\b/.test(code)) {
    throw new Error(`build: dist/esm/${file} still uses a CommonJS name`);
  }
}

const cli = join(root, 'dist/cjs/provider/cli.js');
if (!existsSync(join(root, 'dist/cjs/index.js'))) throw new Error('build: dist/cjs/index.js was not produced');
if (existsSync(cli)) chmodSync(cli, 0o755);
