import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Installs Chromium and redis-server when missing, and builds dist/ when absent.
    globalSetup: ['test/setup/system.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
    server: {
      deps: {
        // The built package (what `import 'passport-nd-id'` resolves to through its own "exports")
        // is loaded by Node itself, as a consumer would load it, not transformed by Vite.
        external: [/\/dist\/(esm|cjs)\//],
      },
    },
  },
});
