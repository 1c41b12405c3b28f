/**
 * The fetch-handler login (`createFetchLogin` with `IdClient` and the cookie session) on the
 * runtimes besides Node: Bun, Deno and workerd (through miniflare, the local Cloudflare Workers
 * runtime, with `nodejs_compat`), each against the provider running in Node on 127.0.0.1. The app
 * imports the built package by its name; for workerd it is bundled first, as a worker deployment
 * does (esbuild, the `workerd`/`worker`/`browser` conditions, Node's modules left to the runtime).
 * Without `nodejs_compat` the worker refuses to start with a sentence that names the flag: the
 * bundle that imports Node's modules is refused by the runtime's loader, and a bundle whose
 * bundler put empty stand-ins in their place is refused by the package as it loads.
 * The runtimes come from the registry's `bun`, `deno` and `miniflare` packages (dev dependencies).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_PERSONAS, startProvider, type StartedProvider } from '../helpers/provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { freePort } from '../helpers/ports.js';
import { stopChild } from '../helpers/stop-child.js';
import { approve, Browser } from '../helpers/harness.js';

const root = join(__dirname, '..', '..');
const workDir = join(root, '.tmp', `runtimes-${process.pid}`);
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

/** The app, the same on every runtime: the fetch handlers and a page that shows the person. */
const APP = `
import { createCookieSession, createFetchLogin, IdClient } from 'passport-nd-id/fetch';
import * as provider from 'passport-nd-id/provider';

let auth;
export async function handle(request, env) {
  auth ??= createFetchLogin({
    client: new IdClient({
      hostname: env.ND_ID_HOSTNAME,
      clientId: env.ND_ID_CLIENT_ID,
      clientSecret: env.ND_ID_CLIENT_SECRET,
      privateKey: env.ND_ID_PRIVATE_KEY,
      redirectUri: env.ND_ID_REDIRECT_URI,
    }),
    session: createCookieSession({ secret: env.SESSION_SECRET }),
    loginPath: '/auth/login',
  });
  const { pathname } = new URL(request.url);
  if (pathname === '/auth/login') return auth.login(request);
  if (pathname === '/auth/callback') return auth.callback(request);
  if (pathname === '/') return Response.json({ user: (await auth.user(request)) ?? null, provider: typeof provider.startProvider });
  return new Response('Not found', { status: 404 });
}
`;

const BUN = `
import { handle } from './app.mjs';
const port = Number(process.env.PORT);
Bun.serve({ port, hostname: '127.0.0.1', fetch: (request) => handle(request, process.env) });
console.log('Listening on http://127.0.0.1:' + port);
`;

const DENO = `
import { handle } from './app.mjs';
const env = Deno.env.toObject();
const port = Number(env.PORT);
Deno.serve({ port, hostname: '127.0.0.1', onListen: () => console.log('Listening on http://127.0.0.1:' + port) }, (request) => handle(request, env));
`;

const WORKER = `
import { handle } from './app.mjs';
export default { fetch: (request, env) => handle(request, env) };
`;

/** Node's modules, which a worker bundle leaves to the runtime (nodejs_compat provides them). */
const nodeModules = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));

/**
 * The worker bundled as a worker deployment bundles it: one ES module, the workers' export
 * conditions, Node's modules left as imports, and a `require()` of one of them (from a CommonJS
 * file) turned into an import of it.
 */
async function bundleWorker(entry = 'worker.mjs'): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [join(workDir, entry)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'node-modules-to-runtime',
        setup(build) {
          build.onResolve({ filter: /.*/ }, (args) => {
            if (!nodeModules.has(args.path)) return undefined;
            const path = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
            return args.kind === 'require-call' ? { path, namespace: 'node-require' } : { path, external: true };
          });
          build.onLoad({ filter: /.*/, namespace: 'node-require' }, (args) => ({
            contents: `import all from '${args.path}'; module.exports = all;`,
            loader: 'js',
          }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}

/** The worker bundled with an empty stand-in for each of Node's modules (a bundler's polyfill without them). */
async function bundleWorkerWithStandIns(entry: string): Promise<string> {
  const result = await esbuild.build({
    entryPoints: [join(workDir, entry)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    write: false,
    logLevel: 'silent',
    plugins: [
      {
        name: 'node-modules-empty',
        setup(build) {
          build.onResolve({ filter: /.*/ }, (args) =>
            nodeModules.has(args.path) ? { path: args.path, namespace: 'node-empty' } : undefined,
          );
          build.onLoad({ filter: /.*/, namespace: 'node-empty' }, () => ({
            contents: 'module.exports = {};',
            loader: 'js',
          }));
        },
      },
    ],
  });
  return result.outputFiles[0]!.text;
}

/** A worker that creates its login at the top of the module, as the guides' apps do. */
const WORKER_AT_START = `
import { createCookieSession, createFetchLogin, IdClient } from 'passport-nd-id/fetch';
const auth = createFetchLogin({
  client: new IdClient({ hostname: 'http://127.0.0.1:4000', clientId: 'app', clientSecret: 'secret', privateKey: 'key', redirectUri: 'http://127.0.0.1:3000/auth/callback' }),
  session: createCookieSession({ secret: 'a session secret of at least thirty-two characters' }),
});
export default { fetch: (request) => auth.login(request) };
`;

let provider: StartedProvider;
let clientSecret = '';
const keys = testKeyPair('runtimes');
const persona = DEFAULT_PERSONAS[3]!;
const callbacks: string[] = [];

beforeAll(async () => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  mkdirSync(join(workDir, 'node_modules'), { recursive: true });
  symlinkSync(root, join(workDir, 'node_modules', 'passport-nd-id'), 'dir');
  writeFileSync(
    join(workDir, 'package.json'),
    JSON.stringify({ type: 'module', dependencies: { 'passport-nd-id': '*' } }),
  );
  writeFileSync(join(workDir, 'app.mjs'), APP);
  writeFileSync(join(workDir, 'bun.mjs'), BUN);
  writeFileSync(join(workDir, 'deno.mjs'), DENO);
  writeFileSync(join(workDir, 'worker.mjs'), WORKER);
  writeFileSync(join(workDir, 'worker-at-start.mjs'), WORKER_AT_START);
  clientSecret = randomBytes(24).toString('base64url');
  // The ports are taken first, so that one provider registers every app's callback.
  for (let i = 0; i < 3; i++) callbacks.push(`http://127.0.0.1:${await freePort()}/auth/callback`);
  provider = await startProvider({
    clients: [{ clientId: 'runtime-app', clientSecret, redirectUris: callbacks, publicKey: keys.publicKeyPem }],
    autoApprove: persona.id,
  });
});

afterAll(async () => {
  await provider?.close();
  rmSync(workDir, { recursive: true, force: true });
});

function envFor(callback: string): Record<string, string> {
  return {
    PORT: new URL(callback).port,
    ND_ID_HOSTNAME: provider.baseUrl,
    ND_ID_CLIENT_ID: 'runtime-app',
    ND_ID_CLIENT_SECRET: clientSecret,
    ND_ID_PRIVATE_KEY: keys.privateKeyPem,
    ND_ID_REDIRECT_URI: callback,
    SESSION_SECRET: randomBytes(32).toString('hex'),
  };
}

/** Signs the persona in through the app at `origin` and returns what its page shows. */
async function signIn(origin: string): Promise<void> {
  const browser = new Browser(origin);
  const login = await browser.get('/auth/login');
  expect(login.status, login.text).toBe(302);
  const callbackUrl = await approve(new URL(login.location as string));
  const back = await browser.get(callbackUrl.href);
  expect(back.status, back.text).toBe(302);
  const page = JSON.parse((await browser.get('/')).text) as {
    user: { data: Record<string, string> } | null;
    provider: string;
  };
  expect(page.provider).toBe('function');
  expect(page.user?.data['profile.name']).toBe(persona['profile.name']);
  // A callback replayed from another browser: refused.
  expect((await new Browser(origin).get(callbackUrl.href)).status).toBe(403);
}

/** Starts `command` and waits until it says it listens (or exits, which fails). */
const spawned: ChildProcess[] = [];
afterAll(() => Promise.all(spawned.map((child) => stopChild(child))));

async function startProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; output: () => string }> {
  let output = '';
  // Kept at once, so the file's afterAll stops it even if it never says it is listening.
  const child = spawn(command, args, {
    cwd: workDir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? workDir,
      NO_COLOR: '1',
      DENO_NO_UPDATE_CHECK: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.push(child);
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  while (!output.includes('Listening on http://127.0.0.1:')) {
    if (child.exitCode !== null) throw new Error(`${command} exited:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return { child, output: () => output };
}

describe('Bun', () => {
  it('signs a person in through the fetch handlers', async () => {
    const env = envFor(callbacks[0]!);
    await startProcess(bin('bun'), ['run', 'bun.mjs'], env);
    await signIn(new URL(callbacks[0]!).origin);
  }, 60_000);
});

describe('Deno', () => {
  it('signs a person in through the fetch handlers', async () => {
    const env = envFor(callbacks[1]!);
    await startProcess(bin('deno'), ['run', '--allow-all', '--no-prompt', 'deno.mjs'], env);
    await signIn(new URL(callbacks[1]!).origin);
  }, 60_000);
});

describe('workerd (miniflare)', () => {
  let mf: Miniflare | undefined;
  afterAll(() => mf?.dispose());

  it('signs a person in through the fetch handlers with nodejs_compat', async () => {
    const env = envFor(callbacks[2]!);
    mf = new Miniflare({
      modules: true,
      script: await bundleWorker(),
      scriptPath: join(workDir, 'worker.bundle.mjs'),
      compatibilityDate: '2026-04-01',
      compatibilityFlags: ['nodejs_compat'],
      bindings: env,
      host: '127.0.0.1',
      port: Number(env.PORT),
    });
    await mf.ready;
    await signIn(new URL(callbacks[2]!).origin);
  }, 60_000);
});

describe('workerd (miniflare) without nodejs_compat', () => {
  /** Starts `script` without the flag; resolves to the runtime's output once the start has failed. */
  async function startWithoutFlag(script: string): Promise<{ error: Error; output: string }> {
    let output = '';
    const mf = new Miniflare({
      modules: true,
      script,
      scriptPath: join(workDir, 'worker.bundle.mjs'),
      compatibilityDate: '2026-04-01',
      handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
        stdout.on('data', (c: Buffer) => (output += c.toString()));
        stderr.on('data', (c: Buffer) => (output += c.toString()));
      },
    });
    try {
      await mf.ready;
    } catch (error) {
      return { error: error as Error, output };
    } finally {
      await mf.dispose().catch(() => undefined);
    }
    throw new Error('The worker started without nodejs_compat');
  }

  it("a bundle that imports Node's modules fails at start, naming the flag", async () => {
    const { error } = await startWithoutFlag(await bundleWorker('worker-at-start.mjs'));
    expect(error.message).toContain('nodejs_compat');
  }, 60_000);

  it("a bundle with empty stand-ins for Node's modules fails at start with the package's sentence naming the flag, not a ReferenceError", async () => {
    const { output } = await startWithoutFlag(await bundleWorkerWithStandIns('worker-at-start.mjs'));
    const first = output.split('\n').find((line) => line.includes('Uncaught')) ?? output;
    expect(first).toContain("Uncaught Error: passport-nd-id: this runtime does not provide Node's built-in modules");
    expect(first).toContain('add the nodejs_compat compatibility flag');
    expect(output).not.toContain('ReferenceError');
  }, 60_000);
});
