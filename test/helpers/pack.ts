/**
 * The packed tarball the package tests install: packed once per test run by the `packed`
 * project's global setup (test/setup/pack.ts) and shared read-only by every file that needs it.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Absolute path of the tarball `npm pack` made at the start of the run. */
    packedTarball: string;
  }
}

/**
 * Packs the repository as `npm publish` would (without running `prepack`: the tests run after
 * `npm run build`) into `dest`, and returns the tarball's absolute path.
 */
export function packInto(root: string, dest: string): string {
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dest], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  return join(dest, out.trim().split('\n').pop() ?? '');
}

/** The run's packed tarball. Read it, install it, unpack it elsewhere; never change or remove it. */
export function packedTarball(): string {
  const tarball = inject('packedTarball');
  if (!tarball)
    throw new Error('No packed tarball: this file must belong to the "packed" project of vitest.config.ts.');
  return tarball;
}
