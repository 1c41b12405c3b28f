/**
 * Global setup of the `packed` project (vitest.config.ts): packs the package once per run, after
 * test/setup/system.ts has built dist/, for every file that installs or inspects the tarball.
 * Vitest runs it only when a file of that project is selected.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { packInto } from '../helpers/pack.js';

export default function setup(project: TestProject): () => void {
  const dest = mkdtempSync(join(tmpdir(), 'nd-id-pack-'));
  project.provide('packedTarball', packInto(join(__dirname, '..', '..'), dest));
  return () => rmSync(dest, { recursive: true, force: true });
}
