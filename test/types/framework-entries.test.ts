/**
 * Each entry's declarations stand alone, as its users install them: for the root
 * (`docs/express.md`) and `/client`, `/fetch`, `/nest`, `/fastify` and `/provider` (their
 * guides), a fresh folder (`npm init -y`) installs exactly the guide's npm lines (the packed
 * tarball for this package, the rest from npm's cache), and the guide's own app compiles there
 * with `strict`, `module: NodeNext` and no `skipLibCheck`: no declaration the entry reaches names
 * a module its guide does not install. Guides with the same npm lines share a folder; the folders
 * are installed, and the apps type-checked, concurrently.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { docSnippets, installLines, type DocSnippet } from '../helpers/doc-snippets.js';
import { packedTarball } from '../helpers/pack.js';

const run = promisify(execFile);

/** One entry, the guide that says what to install for it, and the guide's app on it. */
interface EntryApp {
  entry: string;
  guide: string;
  /** The npm lines of the guide, split into words. */
  install: string[][];
  /** The app: the guide's complete app, or its first snippet on the entry. */
  app: DocSnippet;
  /** Compiler options the guide's own tsconfig.json adds (Nest's decorators). */
  compilerOptions: Record<string, unknown>;
}

/** The snippet of `guide` marked `kind`, or else its first ```ts snippet importing `entry`. */
function appOf(guide: string, entry: string, kind?: string): DocSnippet {
  const snippets = docSnippets('ts').filter((s) => s.file === guide);
  const app = kind ? snippets.find((s) => s.kind === kind) : snippets.find((s) => s.code.includes(`from '${entry}'`));
  if (!app) throw new Error(`${guide} has no ${kind ? `snippet marked ${kind}` : `snippet importing ${entry}`}`);
  return app;
}

/** The first ```json block of a guide (the tsconfig.json it asks for), without what the test sets. */
function guideCompilerOptions(guide: string): Record<string, unknown> {
  const json = docSnippets('json').find((s) => s.file === guide)?.code;
  return json ? (JSON.parse(json) as { compilerOptions: Record<string, unknown> }).compilerOptions : {};
}

const entry = (name: string, guide: string, heading: string | undefined, app: DocSnippet): EntryApp => ({
  entry: name,
  guide,
  install: installLines(guide, heading),
  app,
  compilerOptions: guideCompilerOptions(guide),
});

const ENTRIES: EntryApp[] = [
  entry('passport-nd-id', 'docs/express.md', '## Install and configure', appOf('README.md', 'passport-nd-id', 'run')),
  entry('passport-nd-id/client', 'docs/idclient.md', undefined, appOf('docs/idclient.md', 'passport-nd-id/client')),
  entry(
    'passport-nd-id/fetch',
    'docs/fetch.md',
    '## Install and configure',
    appOf('docs/fetch.md', 'passport-nd-id/fetch', 'recipe'),
  ),
  entry(
    'passport-nd-id/nest',
    'docs/nestjs.md',
    '## Install and configure',
    appOf('docs/nestjs.md', 'passport-nd-id/nest', 'recipe'),
  ),
  entry(
    'passport-nd-id/fastify',
    'docs/fastify.md',
    '## Install and configure',
    appOf('docs/fastify.md', 'passport-nd-id/fastify', 'recipe'),
  ),
  entry(
    'passport-nd-id/provider',
    'docs/provider.md',
    '## In your tests',
    appOf('docs/provider.md', 'passport-nd-id/provider'),
  ),
];

/** The frameworks' modules an entry's declarations could name; each folder has only those its guide installs. */
const FOREIGN = ['express', 'passport', '@types/express', '@types/passport', '@nestjs/common', 'fastify', 'hono'];

/** The words of a folder's npm lines: guides with the same lines share one folder. */
const installKey = (app: EntryApp): string => JSON.stringify(app.install);
const installed = (app: EntryApp): string[] => app.install.flat();

let tarball = '';
const folders = new Map<string, string>();

function folderOf(app: EntryApp): string {
  const dir = folders.get(installKey(app));
  if (!dir) throw new Error(`no folder for ${app.guide}`);
  return dir;
}

/** `npm init -y`, then the guide's npm lines, quiet and from the cache when it has them. */
async function installGuide(app: EntryApp): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'nd-id-entry-'));
  folders.set(installKey(app), dir);
  await run('npm', ['init', '-y'], { cwd: dir });
  for (const [npm, command, ...rest] of app.install) {
    const args = rest.map((word) => (word === 'passport-nd-id' ? tarball : word));
    await run(npm!, [command!, '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...args], {
      cwd: dir,
      timeout: 300_000,
    });
  }
}

/** Writes `file` and its tsconfig into `dir`; tsc's output for it ('' when it compiles). */
async function typeCheck(dir: string, name: string, code: string, options: Record<string, unknown>): Promise<string> {
  writeFileSync(join(dir, `${name}.mts`), code);
  const compilerOptions = {
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    target: 'ES2022',
    types: ['node'],
    ...options,
    strict: true,
    skipLibCheck: false,
    noEmit: true,
  };
  writeFileSync(join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: [`${name}.mts`] }));
  return run(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${name}.json`], {
    cwd: dir,
    timeout: 180_000,
  }).then(
    ({ stdout }) => stdout,
    (err: { stdout?: string }) => err.stdout ?? String(err),
  );
}

const nameOf = (app: EntryApp): string => app.entry.replace(/\W+/g, '-');

beforeAll(async () => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  tarball = packedTarball();
  const firsts = [...new Map(ENTRIES.map((app) => [installKey(app), app])).values()];
  await Promise.all(firsts.map(installGuide));
}, 400_000);

afterAll(() => {
  for (const dir of folders.values()) rmSync(dir, { recursive: true, force: true });
});

describe.concurrent('each entry compiles in a fresh strict app that installs only what its guide installs', () => {
  it('each guide app imports from its entry, and each folder has no framework its guide does not install', () => {
    for (const app of ENTRIES) {
      expect(app.app.code, app.guide).toContain(`from '${app.entry}'`);
      for (const name of FOREIGN.filter((n) => !installed(app).includes(n)))
        expect(existsSync(join(folderOf(app), 'node_modules', name)), `${name} in ${app.guide}'s folder`).toBe(false);
    }
  });

  it.each(ENTRIES)(
    '$entry: the app of $guide compiles with strict, NodeNext and no skipLibCheck, 0 errors',
    async (app) => {
      expect(await typeCheck(folderOf(app), nameOf(app), app.app.code, app.compilerOptions)).toBe('');
    },
    180_000,
  );

  it('a Fastify app on the login flow of passport-nd-id/client compiles with the Fastify guide’s installs', async () => {
    const fastify = ENTRIES.find((app) => app.entry === 'passport-nd-id/fastify')!;
    expect(await typeCheck(folderOf(fastify), 'fastify-on-client', FASTIFY_ON_CLIENT, {})).toBe('');
  }, 180_000);

  it('the root is the Express and Passport layer: in an app without their types it names what is missing', async () => {
    const client = ENTRIES.find((app) => app.entry === 'passport-nd-id/client')!;
    const output = await typeCheck(folderOf(client), 'root-without-express', ROOT_WITHOUT_EXPRESS, {});
    expect(output).toMatch(/node_modules\/passport-nd-id\/dist\/.*Cannot find module 'express'/);
    expect(output).toMatch(/has no exported member 'IdClient'/);
  }, 180_000);
});

/** A Fastify app on the framework-neutral login of the client entry, with @fastify/session. */
const FASTIFY_ON_CLIENT = `
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

/** What docs/idclient.md showed before the client entry: IdClient from the root. */
const ROOT_WITHOUT_EXPRESS = `
import { IdClient } from 'passport-nd-id';
console.log(new IdClient({ hostname: 'https://id.example', clientId: 'app', clientSecret: 'secret' }));
`;
