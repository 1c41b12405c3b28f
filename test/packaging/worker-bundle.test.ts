/**
 * The ES module build tree-shakes: a small Hono worker on `passport-nd-id/fetch`, bundled the way
 * a worker deployment bundles it (perf/bundle-size.mjs: esbuild, minified, platform neutral,
 * node:* external), stays within 172 KiB minified and carries none of the Passport strategy,
 * the NestJS helpers, the provider or the proxy agent it never imports. (A size, not a time.)
 */
import { describe, expect, inject, it } from 'vitest';
// @ts-expect-error: a plain ES module script without declarations
import { bundleWorker, GOAL_KIB } from '../../perf/bundle-size.mjs';

describe('a Hono worker on the fetch handlers, bundled', () => {
  it('is at most 172 KiB minified and holds only what it imports', async () => {
    const problem = inject('buildProblem');
    if (problem) throw new Error(problem);
    const { code, bytes } = (await bundleWorker()) as { code: string; bytes: number };
    expect(GOAL_KIB).toBe(172);
    expect(bytes).toBeLessThanOrEqual(172 * 1024);
    // Code only the unused parts hold (not messages, which may name other entries to help): the
    // Passport strategy base, the Nest guard's call, the provider's method, the proxy variable.
    const unusedCode = ['Strategy#authenticate must be overridden', '.switchToHttp(', '.subjectFor(', 'HTTPS_PROXY'];
    for (const unused of unusedCode) expect(code, unused).not.toContain(unused);
    expect(code).toContain('passport-nd-id');
  }, 120_000);
});
