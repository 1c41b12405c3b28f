// `npm run size`: how big a small Hono worker using the fetch handlers is once bundled the way a
// worker deployment bundles it (esbuild: --bundle --minify --format=esm --platform=neutral, the
// worker conditions, Node's modules left to the runtime as workerd's nodejs_compat provides
// them). Prints the minified and gzipped sizes, and how much of it is this package's own code.
// Goal: at most 172 KiB minified. Run `npm run build` first. Exits 1 over the goal. (It was 150 KiB
// until the round that added the owned JOSE module's key checks, keys by reference, traces,
// back-channel logout, the stricter discovery and the one sign-in core: about 15 KiB in all; and
// 3.3 KiB when the long sign-in functions became named steps sharing a context object, whose
// property names a minifier keeps where it shortened a closure's variables. The
// FAPI 2.0 profile, about 12 KiB, is the one part a base-profile worker could leave out; that
// needs it to be imported explicitly, an API change not made yet. `--modules` lists the rest.)
// `npm run size -- --modules` also bundles the same worker from the sources (src/fetch.ts, no
// build needed) and lists the bytes each source module adds, to see what the fetch entry pulls in.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { build } = createRequire(import.meta.url)('esbuild');
/** The goal, in KiB of minified output. */
export const GOAL_KIB = 172;

/** How a worker deployment bundles: one minified ES module, the worker conditions, Node's modules external. */
const WORKER_BUILD = {
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['workerd', 'worker', 'browser'],
  mainFields: ['browser', 'module', 'main'],
  external: ['node:*'],
};

/** The worker: login, callback, sign-out and a page with the signed-in person. */
const WORKER = `
import { Hono } from 'hono';
import { createCookieSession, createFetchLogin, IdClient } from 'passport-nd-id/fetch';

let auth;
function login(env) {
  auth ??= createFetchLogin({
    client: new IdClient({ hostname: env.ND_ID_HOSTNAME, clientId: env.ND_ID_CLIENT_ID, clientSecret: env.ND_ID_CLIENT_SECRET, privateKey: env.ND_ID_PRIVATE_KEY, redirectUri: env.ND_ID_REDIRECT_URI }),
    session: createCookieSession({ secret: env.SESSION_SECRET }),
    loginPath: '/auth/login',
  });
  return auth;
}
const app = new Hono();
app.get('/auth/login', (c) => login(c.env).login(c.req.raw));
app.get('/auth/callback', (c) => login(c.env).callback(c.req.raw));
app.post('/auth/logout', (c) => login(c.env).logout(c.req.raw));
app.get('/', async (c) => c.json({ user: (await login(c.env).user(c.req.raw)) ?? null }));
export default app;
`;

/**
 * Bundles the worker; resolves its minified code and sizes (bytes): the whole, gzipped, and the
 * parts from this package, jose and hono.
 */
export async function bundleWorker() {
  const work = join(root, '.tmp', `size-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    writeFileSync(join(work, 'worker.mjs'), WORKER);
    const result = await build({
      absWorkingDir: root,
      entryPoints: [join(work, 'worker.mjs')],
      ...WORKER_BUILD,
      // As an app's own build resolves it: through the package's "exports" (the ES module build),
      // not through this repository's tsconfig paths to the sources.
      tsconfigRaw: {},
      metafile: true,
      write: false,
      logLevel: 'error',
    });
    const code = result.outputFiles[0].text;
    const inputs = Object.entries(result.metafile.outputs[Object.keys(result.metafile.outputs)[0]].inputs);
    const bytesOf = (test) =>
      inputs.filter(([file]) => test(file)).reduce((sum, [, { bytesInOutput }]) => sum + bytesInOutput, 0);
    return {
      code,
      bytes: result.outputFiles[0].contents.length,
      gzip: gzipSync(result.outputFiles[0].contents).length,
      ours: bytesOf((file) => file.startsWith('dist/')),
      jose: bytesOf((file) => file.includes('node_modules/jose/')),
      hono: bytesOf((file) => file.includes('node_modules/hono/')),
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The same worker bundled from the sources (dist/esm is chunked, so its inputs do not name the
 * modules); resolves the minified bytes each module of src/ adds, largest first, and the whole.
 */
export async function moduleBytes() {
  const work = join(root, '.tmp', `size-modules-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    const entry = join(root, 'src', 'fetch.ts').split('\\').join('/');
    writeFileSync(join(work, 'worker.mjs'), WORKER.replace("'passport-nd-id/fetch'", JSON.stringify(entry)));
    const result = await build({
      absWorkingDir: root,
      entryPoints: [join(work, 'worker.mjs')],
      ...WORKER_BUILD,
      tsconfig: join(root, 'tsconfig.build.json'),
      // As scripts/build.mjs builds dist/esm.
      define: { __filename: 'import.meta.filename', __dirname: 'import.meta.dirname' },
      metafile: true,
      write: false,
      logLevel: 'error',
    });
    const output = result.metafile.outputs[Object.keys(result.metafile.outputs)[0]];
    const modules = Object.entries(output.inputs)
      .filter(([file]) => file.startsWith('src/'))
      .map(([file, { bytesInOutput }]) => ({ file, bytes: bytesInOutput }))
      .sort((a, b) => b.bytes - a.bytes);
    return { bytes: output.bytes, modules };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { bytes, gzip, ours, jose, hono } = await bundleWorker();
  const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(
    'Hono worker with passport-nd-id/fetch, esbuild --bundle --minify --format=esm --platform=neutral (node:* external):',
  );
  console.log(`  minified ${kib(bytes)}, gzipped ${kib(gzip)}`);
  console.log(`  of which passport-nd-id ${kib(ours)}, jose ${kib(jose)}, hono ${kib(hono)}`);
  console.log(`Goal: at most ${GOAL_KIB} KiB minified: ${bytes <= GOAL_KIB * 1024 ? 'met' : 'NOT met'}.`);
  if (bytes > GOAL_KIB * 1024) process.exitCode = 1;
  if (process.argv.includes('--modules')) {
    const breakdown = await moduleBytes();
    console.log(`From the sources (${kib(breakdown.bytes)} in all), bytes per module of src/:`);
    for (const { file, bytes: b } of breakdown.modules) console.log(`  ${String(b).padStart(6)}  ${file}`);
  }
}
