import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * The files that install or inspect the packed tarball. They form the `packed` project, whose
 * global setup packs the package once for all of them; its name sorts before `unit`, so these
 * long files (npm installs, builds, type checks in scratch apps) start first and the rest of the
 * suite runs beside them.
 */
const PACKED = [
  'test/consumers/**/*.test.ts',
  'test/packaging/docs-links.test.ts',
  'test/packaging/tarball-lint.test.ts',
  'test/types/framework-entries.test.ts',
];

// Installs Chromium and redis-server when missing, and builds dist/ when absent; then makes the
// run's pool of RSA keys, which the test helpers hand out instead of making one per provider.
const SYSTEM = ['test/setup/system.ts', 'test/setup/keys.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Much of the suite waits on child processes, npm and sockets rather than on the CPU: two
    // files at a time even on a 2-core machine (Vitest's default there is one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default'],
    server: {
      deps: {
        // The built package (what `import 'passport-nd-id'` resolves to through its own "exports")
        // is loaded by Node itself, as a consumer would load it, not transformed by Vite.
        external: [/\/dist\/(esm|cjs)\//],
      },
    },
    projects: [
      { extends: true, test: { name: 'packed', include: PACKED, globalSetup: [...SYSTEM, 'test/setup/pack.ts'] } },
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: PACKED, globalSetup: SYSTEM } },
    ],
  },
});
