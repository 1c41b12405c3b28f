// Builds the package: TypeScript to CommonJS in dist/cjs, then a thin ESM entry per public
// subpath in dist/esm that re-exports the CommonJS build, with ESM declarations (.d.mts) beside
// it so that TypeScript reads the import condition's types as ESM. One implementation is loaded
// whether a consumer uses import or require(), so `instanceof IdError` holds across both.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

rmSync(join(root, 'dist'), { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

const entries = [
  ['dist/cjs/index.js', 'dist/esm/index.mjs'],
  ['dist/cjs/provider/index.js', 'dist/esm/provider/index.mjs'],
];
for (const [cjs, esm] of entries) {
  const cjsPath = join(root, cjs);
  if (!existsSync(cjsPath)) throw new Error(`build: ${cjs} was not produced`);
  const names = Object.keys(require(cjsPath)).filter((n) => n !== 'default' && n !== '__esModule');
  const esmPath = join(root, esm);
  mkdirSync(dirname(esmPath), { recursive: true });
  const spec = relative(dirname(esmPath), cjsPath).split('\\').join('/');
  writeFileSync(
    esmPath,
    `import cjs from '${spec.startsWith('.') ? spec : './' + spec}';\n` +
      `export const { ${names.join(', ')} } = cjs;\n` +
      'export default cjs;\n',
  );
  const dtsSpec = spec.startsWith('.') ? spec : './' + spec;
  writeFileSync(
    esmPath.replace(/\.mjs$/, '.d.mts'),
    `export * from '${dtsSpec}';\n` + `import * as cjs from '${dtsSpec}';\n` + 'export default cjs;\n',
  );
}
const cli = join(root, 'dist/cjs/provider/cli.js');
if (existsSync(cli)) chmodSync(cli, 0o755);
