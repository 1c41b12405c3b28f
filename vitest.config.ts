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
  },
});
