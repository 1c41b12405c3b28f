/**
 * The entry points by framework, as their users install them: the packed tarball in a fresh
 * folder with Hono or Fastify and TypeScript, and neither `@types/express` nor `@types/passport`.
 * A Hono app on `passport-nd-id/fetch` and a Fastify app (with `@fastify/session`) on
 * `passport-nd-id/client` compile with `strict`, `module: NodeNext` and no `skipLibCheck`: none
 * of the package's declarations they reach names Express or Passport. The root entry (the
 * Express/Passport layer) still does, which is why the other entries exist.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { packedTarball } from '../helpers/pack.js';

const run = promisify(execFile);
let dir = '';
let tarball = '';

/** docs/fetch.md's Hono app, on the fetch entry. */
const HONO_APP = `
import { Hono } from 'hono';
import { createCookieSession, createFetchLogin, IdClient, isIdError, type FetchLogin } from 'passport-nd-id/fetch';

const auth: FetchLogin = createFetchLogin({
  client: new IdClient({
    hostname: process.env.ND_ID_HOSTNAME ?? '',
    clientId: process.env.ND_ID_CLIENT_ID ?? '',
    clientSecret: process.env.ND_ID_CLIENT_SECRET ?? '',
    privateKey: process.env.ND_ID_PRIVATE_KEY ?? '',
    redirectUri: process.env.ND_ID_REDIRECT_URI ?? 'http://127.0.0.1:3000/auth/callback',
  }),
  session: createCookieSession({ secret: process.env.SESSION_SECRET ?? '' }),
  loginPath: '/auth/login',
});

const app = new Hono();
app.get('/auth/login', (c) => auth.login(c.req.raw));
app.get('/auth/callback', (c) => auth.callback(c.req.raw));
app.post('/auth/logout', (c) => auth.logout(c.req.raw));
app.get('/', async (c) => c.json({ user: (await auth.user(c.req.raw)) ?? null }));
app.onError((err, c) => c.text(isIdError(err) ? err.code : 'error', 500));
export default app;
`;

/** A Fastify app on the framework-neutral login of the client entry, with @fastify/session. */
const FASTIFY_APP = `
import Fastify from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifySession from '@fastify/session';
import { classifyFailure, createLoginFlow, IdClient, type FlowSession, type LoginUser } from 'passport-nd-id/client';

const flow = createLoginFlow({
  client: new IdClient({
    hostname: process.env.ND_ID_HOSTNAME ?? '',
    clientId: process.env.ND_ID_CLIENT_ID ?? '',
    clientSecret: process.env.ND_ID_CLIENT_SECRET ?? '',
    privateKey: process.env.ND_ID_PRIVATE_KEY ?? '',
  }),
  redirectUri: 'http://127.0.0.1:3000/auth/callback',
});

/** @fastify/session's session as the flow's tiny session interface. */
function sessionOf(session: { get(key: string): unknown; set(key: string, value: unknown): void }): FlowSession {
  return { get: (key) => session.get(key), set: (key, value) => session.set(key, value), delete: (key) => session.set(key, undefined) };
}

const app = Fastify();
app.register(fastifyCookie);
app.register(fastifySession, { secret: process.env.SESSION_SECRET ?? '', cookie: { secure: 'auto', sameSite: 'lax' } });
app.get('/auth/login', async (request, reply) => reply.redirect(flow.begin(sessionOf(request.session as never)).redirectUrl));
app.get('/auth/callback', async (request, reply) => {
  try {
    const { user } = await flow.complete(sessionOf(request.session as never), request.query as Record<string, unknown>);
    const me: LoginUser = user;
    return reply.send({ sub: me.sub });
  } catch (err) {
    const { status, message } = classifyFailure(err);
    return reply.code(status).send(message);
  }
});
void app.listen({ port: 3000, host: '127.0.0.1' });
`;

/** The same Hono app on the root entry: what the Hono guide imported before the entries existed. */
const HONO_ON_ROOT = HONO_APP.replace("from 'passport-nd-id/fetch'", "from 'passport-nd-id'");

function tsconfig(files: string[]): string {
  return JSON.stringify({
    compilerOptions: {
      strict: true,
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      target: 'ES2022',
      skipLibCheck: false,
      noEmit: true,
      types: ['node'],
    },
    files,
  });
}

/** tsc's output for `project` in the scratch folder ('' when it compiles). */
async function tsc(project: string): Promise<string> {
  return run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], {
    cwd: dir,
    timeout: 180_000,
  }).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
}

/** docs/fastify.md's app, on the Fastify entry: the plugin and its guards. */
const FASTIFY_ENTRY_APP = `
import Fastify from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifySession from '@fastify/session';
import { IdClient, createSessionPolicy, ndIdFastify } from 'passport-nd-id/fastify';

const sessions = createSessionPolicy({ idleTimeout: 30 * 60 * 1000 });
const auth = ndIdFastify({
  client: new IdClient({
    hostname: process.env.ND_ID_HOSTNAME ?? '',
    clientId: process.env.ND_ID_CLIENT_ID ?? '',
    clientSecret: process.env.ND_ID_CLIENT_SECRET ?? '',
    privateKey: process.env.ND_ID_PRIVATE_KEY ?? '',
    redirectUri: process.env.ND_ID_REDIRECT_URI ?? 'http://127.0.0.1:3000/auth/callback',
  }),
  sessions,
  loginPath: '/auth/login',
});
const app = Fastify();
app.register(fastifyCookie);
app.register(fastifySession, { secret: process.env.SESSION_SECRET ?? '', saveUninitialized: false });
app.register(auth.plugin, { prefix: '/auth' });
app.get('/account', { preHandler: auth.requireSignIn() }, async (request) => ({ user: auth.signedIn(request)?.user }));
app.get('/transfer', { preHandler: auth.requireRecentSignIn(300) }, async () => 'ok');
export default app;
`;

beforeAll(async () => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  tarball = packedTarball();
  dir = mkdtempSync(join(tmpdir(), 'nd-id-entries-'));
  await run('npm', ['init', '-y'], { cwd: dir });
  await run(
    'npm',
    [
      'install',
      '--no-audit',
      '--no-fund',
      '--prefer-offline',
      '--loglevel=error',
      tarball,
      'hono@4',
      'fastify@5',
      '@fastify/session@11',
      '@fastify/cookie@11',
      'typescript@5',
      '@types/node',
    ],
    { cwd: dir, timeout: 300_000 },
  );
  writeFileSync(join(dir, 'hono.mts'), HONO_APP);
  writeFileSync(join(dir, 'fastify.mts'), FASTIFY_APP);
  writeFileSync(join(dir, 'fastify-entry.mts'), FASTIFY_ENTRY_APP);
  writeFileSync(join(dir, 'hono-root.mts'), HONO_ON_ROOT);
  writeFileSync(join(dir, 'tsconfig.json'), tsconfig(['hono.mts', 'fastify.mts', 'fastify-entry.mts']));
  writeFileSync(join(dir, 'tsconfig.root.json'), tsconfig(['hono-root.mts']));
}, 400_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('entry points by framework, in apps without Express or Passport types', () => {
  it('has neither @types/express nor @types/passport (nor express or passport) installed', () => {
    for (const name of ['@types/express', '@types/passport', 'express', 'passport'])
      expect(existsSync(join(dir, 'node_modules', name)), name).toBe(false);
  });

  it('compiles a Hono app on passport-nd-id/fetch, and Fastify apps on passport-nd-id/client and passport-nd-id/fastify: strict, NodeNext, no skipLibCheck, 0 errors', async () => {
    expect(await tsc('tsconfig.json')).toBe('');
  }, 180_000);

  it('the root entry is the Express/Passport layer: its declarations need their types', async () => {
    const output = await tsc('tsconfig.root.json');
    expect(output).toMatch(/node_modules\/passport-nd-id\/dist\/.*Cannot find module 'express'/);
  }, 180_000);
});
