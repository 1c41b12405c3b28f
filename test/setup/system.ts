/**
 * Vitest global setup: makes sure the system programs the end-to-end tests drive are present,
 * and builds the package when `dist/` is missing (the example app imports `passport-nd-id`
 * through the package's own "exports", which point at `dist/`).
 *
 * - `/usr/bin/chromium` (Debian's Chromium) for the real-browser test;
 * - `redis-server` for the multi-instance session test;
 * - `glewlwyd` (Debian's OpenID provider in C) and `sqlite3`, its database's shell, for the
 *   interoperability test against a second provider;
 * - `softhsm2` (a PKCS#11 token in files) for the logins whose keys stay in an HSM.
 *
 * When any is missing and we run as root, they are installed with apt-get. When we are not
 * root, nothing is installed: the tests that need a missing program fail with a sentence saying
 * what to install (`systemPackagesProblem` for the browser and Redis, `glewlwydProblem` for
 * Glewlwyd, `softhsmProblem` for SoftHSM2), and every other test still runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set when a system program the end-to-end tests need is missing: what to install. */
    systemPackagesProblem: string | null;
    /** Set when Glewlwyd or sqlite3 is missing: what to install. */
    glewlwydProblem: string | null;
    /** Set when SoftHSM2 is missing: what to install. */
    softhsmProblem: string | null;
    /** Set when `dist/` was missing and building it failed. */
    buildProblem: string | null;
  }
}

/** Where the browser test expects Debian's Chromium. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Where Debian installs Glewlwyd. */
export const GLEWLWYD_PATH = '/usr/bin/glewlwyd';

/** Where Debian installs SoftHSM2's PKCS#11 module. */
export const SOFTHSM_MODULE_PATH = '/usr/lib/softhsm/libsofthsm2.so';

const root = join(__dirname, '..', '..');

function onPath(program: string): boolean {
  const dirs = (process.env.PATH ?? '').split(delimiter).concat(['/usr/bin', '/usr/sbin', '/usr/local/bin']);
  return dirs.some((dir) => {
    try {
      accessSync(join(dir, program), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The Debian packages whose programs are missing on this machine. */
function missingPackages(): string[] {
  const missing: string[] = [];
  if (!existsSync(CHROMIUM_PATH)) missing.push('chromium');
  if (!onPath('redis-server')) missing.push('redis-server');
  if (!existsSync(GLEWLWYD_PATH)) missing.push('glewlwyd');
  if (!onPath('sqlite3')) missing.push('sqlite3');
  if (!existsSync(SOFTHSM_MODULE_PATH) || !onPath('softhsm2-util')) missing.push('softhsm2');
  return missing;
}

function aptGet(args: string[]): void {
  const result = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    const tail = `${result.stdout ?? ''}${result.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n');
    throw new Error(`apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal}):\n${tail}`);
  }
}

function installSystemPackages(): string | null {
  const missing = missingPackages();
  if (missing.length === 0) return null;
  const command = `apt-get install -y ${missing.join(' ')}`;
  if (process.platform !== 'linux' || !onPath('apt-get')) {
    return `The end-to-end tests need ${missing.join(', ')} (Debian packages); install them, e.g. \`${command}\` on Debian or Ubuntu.`;
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return `The end-to-end tests need ${missing.join(', ')}; run \`sudo ${command}\` once, then run the tests again.`;
  }
  const started = Date.now();
  process.stdout.write(`Installing ${missing.join(', ')} with apt-get for the end-to-end tests...\n`);
  try {
    aptGet(['update']);
    aptGet(['install', '-y', ...missing]);
  } catch (err) {
    // Only the tests that need these programs fail, with this message; the rest still run.
    return `Installing ${missing.join(', ')} failed; run \`${command}\` by hand. ${(err as Error).message}`;
  }
  const still = missingPackages();
  if (still.length > 0) {
    return `apt-get reported success but ${still.join(' and ')} is still missing; install it by hand.`;
  }
  process.stdout.write(`Installed ${missing.join(', ')} in ${Math.round((Date.now() - started) / 1000)} s.\n`);
  return null;
}

/** Every file the package's "exports" point at (types and code, both conditions). */
function exportedFiles(): string[] {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: unknown };
  const files: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') {
      if (value.startsWith('./dist/')) files.push(value);
    } else if (typeof value === 'object' && value !== null) {
      for (const inner of Object.values(value)) walk(inner);
    }
  };
  walk(exports);
  return files;
}

function ensureBuilt(): string | null {
  // Built when every exported file is there: the check follows the build's output names.
  if (exportedFiles().every((p) => existsSync(join(root, p)))) return null;
  try {
    execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
    return null;
  } catch {
    return 'The package could not be built (`npm run build` failed), so the example app cannot load it.';
  }
}

/** The install problem, for the tests that need one of `packages`: null when all of them are there. */
function problemOf(packages: readonly string[], problem: string | null): string | null {
  if (problem === null) return null;
  const missing = missingPackages();
  return packages.some((name) => missing.includes(name)) ? problem : null;
}

/** Vitest globalSetup entry point. */
export default function setup(project: TestProject): void {
  const problem = installSystemPackages();
  project.provide('systemPackagesProblem', problemOf(['chromium', 'redis-server'], problem));
  project.provide('glewlwydProblem', problemOf(['glewlwyd', 'sqlite3'], problem));
  project.provide('softhsmProblem', problemOf(['softhsm2'], problem));
  project.provide('buildProblem', ensureBuilt());
}
