/**
 * The packed package, installed into a scratch app with only what the README's Install section
 * names: TypeScript compiles it strictly (no skipLibCheck) as ESM and CommonJS under nodenext and
 * under moduleResolution bundler, the install tree holds one Express, and a real sign-in works
 * against Express 4 and Express 5.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTarball } from '../helpers/pack.js';

const work = mkdtempSync(join(tmpdir(), 'nd-id-consumer-'));
let tarball = '';

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
}

/** Exactly the README's Install section, plus the TypeScript packages it tells TypeScript users to add. */
const RUNTIME = ['passport', 'express-session'];
const TYPESCRIPT = ['typescript@5', '@types/node', '@types/express', '@types/express-session', '@types/passport'];

/** Paths of every installed copy of a package in a consumer's tree. */
function copiesOf(dir: string, name: string): string[] {
  return readdirSync(join(dir, 'node_modules'), { recursive: true, encoding: 'utf8' })
    .filter((p) => p === name || p.endsWith(`/node_modules/${name}`))
    .filter((p) => existsSync(join(dir, 'node_modules', p, 'package.json')))
    .map((p) => `node_modules/${p}`);
}

/** The scratch app of each Express major. */
const appDir = (expressMajor: 4 | 5): string => join(work, `express${expressMajor}`);

async function install(expressMajor: 4 | 5): Promise<void> {
  const dir = appDir(expressMajor);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  // The README tells an Express 4 app to take @types/express@4; the latest @types/node, as a new app would get.
  const types = TYPESCRIPT.map((name) => (name === '@types/express' ? `@types/express@${expressMajor}` : name));
  const args = [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--loglevel=error',
    tarball,
    `express@${expressMajor}`,
    ...RUNTIME,
    ...types,
  ];
  await promisify(execFile)('npm', args, { cwd: dir, timeout: 180_000 });
}

const APP_TS = `
import express from 'express';
import session from 'express-session';
import passport from 'passport';
import { NdIdStrategy, ndIdRouter, type NdIdUser } from 'passport-nd-id';
import { IdClient, IdError, createLoginFlow } from 'passport-nd-id/client';
import { startProvider, type StartedProvider } from 'passport-nd-id/provider';

export function wire(p: StartedProvider, privateKey: string, callbackURL: string): express.Express {
  passport.use(new NdIdStrategy({ hostname: p.baseUrl, clientId: 'c', clientSecret: 's', privateKey, callbackURL }, async (user: NdIdUser) => ({ sub: user.sub })));
  const app = express();
  app.use(session({ secret: 'x', resave: false, saveUninitialized: false, cookie: { sameSite: 'lax' } }));
  app.use(passport.session());
  app.use('/auth', ndIdRouter());
  const flow = createLoginFlow({ client: new IdClient({ hostname: p.baseUrl, clientId: 'c', clientSecret: 's', privateKey, redirectUri: callbackURL }) });
  void flow;
  void startProvider;
  const e: unknown = new IdError('state_mismatch', 'x');
  if (e instanceof IdError) void e.code;
  return app;
}
`;

/**
 * Under nodenext, app.mts is an ES module and app.cts CommonJS: one program checks both, each
 * against the declarations its own condition ("import" or "require") resolves, and names the file
 * of any error.
 */
const TSCONFIGS: Record<string, object> = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext', files: ['app.mts', 'app.cts'] },
  bundler: { module: 'esnext', moduleResolution: 'bundler', files: ['app.ts'] },
};

/** A sign-in through the packed strategy and router against the packed provider, with cookies kept by hand. */
const SIGN_IN_CJS = `
const { generateKeyPairSync } = require('node:crypto');
const express = require('express');
const session = require('express-session');
const passport = require('passport');
const { NdIdStrategy, ndIdRouter } = require('passport-nd-id');
const { startProvider } = require('passport-nd-id/provider');

(async () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const app = express();
  app.use(session({ secret: 'x', resave: false, saveUninitialized: false }));
  app.use(passport.session());
  passport.serializeUser((u, done) => done(null, u));
  passport.deserializeUser((u, done) => done(null, u));
  app.use('/auth', ndIdRouter({ successRedirect: '/me' }));
  app.get('/me', (req, res) => res.json({ user: req.user || null }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.on('listening', r));
  const base = 'http://127.0.0.1:' + server.address().port;
  const provider = await startProvider({
    clients: [{ clientId: 'c', clientSecret: 's', redirectUris: [base + '/auth/callback'], publicKey: publicKey.export({ type: 'spki', format: 'pem' }) }],
    autoApprove: true,
  });
  passport.use(new NdIdStrategy({ hostname: provider.baseUrl, clientId: 'c', clientSecret: 's', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }), callbackURL: base + '/auth/callback' }));
  let cookie = '';
  const get = async (url) => {
    const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    const set = res.headers.get('set-cookie');
    if (set) cookie = set.split(';')[0];
    return res;
  };
  const login = await get(base + '/auth/login');
  const authorize = await fetch(login.headers.get('location'), { redirect: 'manual' });
  const callback = await get(authorize.headers.get('location'));
  const me = await (await get(base + callback.headers.get('location'))).json();
  // The person still signed in is sent on (the back button); a browser without the session is refused.
  const replay = await get(authorize.headers.get('location'));
  const strangerReplay = await fetch(authorize.headers.get('location'), { redirect: 'manual' });
  // Repeated parameters (Express 4's query parser makes arrays of them): refused, never a crash.
  const repeated = await fetch(base + '/auth/callback?code=a&code=b&state=x&state=y', { redirect: 'manual' });
  const post = (origin) => fetch(base + '/auth/logout', { method: 'POST', redirect: 'manual', headers: { cookie, origin } });
  const crossSiteLogout = (await post('https://evil.example')).status;
  const logout = (await post(base)).status;
  const afterLogout = await (await get(base + '/me')).json();
  console.log(JSON.stringify({ express: require('express/package.json').version, login: login.status, callback: callback.status, me, replay: replay.status, strangerReplay: strangerReplay.status, repeated: repeated.status, crossSiteLogout, logout, afterLogout }));
  await provider.close();
  server.close();
})().catch((err) => { console.error(err); process.exit(1); });
`;

// Both apps install at once: the two installs wait mostly on the registry and share npm's cache.
beforeAll(async () => {
  tarball = packedTarball();
  await Promise.all([install(4), install(5)]);
}, 240_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the build and no source maps pointing at files it does not ship, and builds before packing', () => {
    const listing = run('tar', ['-tzf', tarball], work).split('\n').filter(Boolean);
    expect(listing).toContain('package/dist/cjs/index.js');
    expect(listing).toContain('package/dist/cjs/index.d.ts');
    expect(listing.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(listing.filter((f) => f.startsWith('package/src/') || f.startsWith('package/test/'))).toEqual([]);
    const pkg = JSON.parse(run('tar', ['-xOzf', tarball, 'package/package.json'], work)) as {
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
    };
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(Object.keys(pkg.dependencies)).not.toContain('express');
    expect(pkg.peerDependencies.express).toBe('^4.21.0 || ^5.0.0');
  });

  for (const major of [4, 5] as const) {
    describe(`in an Express ${major} app`, () => {
      const dir = appDir(major);

      it("installs one Express, the app's own, and one @types/express of the app's major", () => {
        expect(copiesOf(dir, 'express')).toEqual(['node_modules/express']);
        expect(copiesOf(dir, '@types/express')).toEqual(['node_modules/@types/express']);
        expect(JSON.parse(readFileSync(join(dir, 'node_modules/@types/express/package.json'), 'utf8')).version).toMatch(
          new RegExp(`^${major}\\.`),
        );
        expect(existsSync(join(dir, 'node_modules', 'passport-nd-id', 'node_modules', 'express'))).toBe(false);
        const nested = existsSync(join(dir, 'node_modules', 'passport-nd-id', 'node_modules'))
          ? readdirSync(join(dir, 'node_modules', 'passport-nd-id', 'node_modules'))
          : [];
        expect(nested).not.toContain('express');
      });

      it('type-checks strictly, without skipLibCheck, as ESM and CommonJS (nodenext) and with bundler resolution', () => {
        for (const ext of ['mts', 'cts', 'ts']) writeFileSync(join(dir, `app.${ext}`), APP_TS);
        for (const [name, { files, ...options }] of Object.entries(TSCONFIGS) as Array<[string, { files: string[] }]>) {
          writeFileSync(
            join(dir, `tsconfig.${name}.json`),
            JSON.stringify({
              compilerOptions: {
                strict: true,
                skipLibCheck: false,
                noEmit: true,
                target: 'es2022',
                esModuleInterop: true,
                types: ['node'],
                ...options,
              },
              files,
            }),
          );
          let output = '';
          try {
            output = run(
              process.execPath,
              [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', `tsconfig.${name}.json`],
              dir,
            );
          } catch (err) {
            output = String((err as { stdout?: string }).stdout ?? err);
          }
          expect(output, name).toBe('');
        }
      }, 300_000);

      it('signs a person in through the strategy and router, and refuses the replayed callback', () => {
        writeFileSync(join(dir, 'sign-in.cjs'), SIGN_IN_CJS);
        const result = JSON.parse(run(process.execPath, ['sign-in.cjs'], dir).trim()) as Record<string, unknown>;
        expect(String(result.express).split('.')[0]).toBe(String(major));
        expect(result).toMatchObject({ login: 302, callback: 302, replay: 302, strangerReplay: 403, repeated: 403 });
        expect((result.me as { user: { sub: string } | null }).user?.sub).toMatch(/.+/);
        // Sign-out: a cross-site post is refused, a same-origin one (Origin with the port) ends the session.
        expect(result).toMatchObject({ crossSiteLogout: 403, logout: 303, afterLogout: { user: null } });
      });
    });
  }
});
