/**
 * Packs the repository as `npm publish` would (without running `prepack`: the tests run after
 * `npm run build`), into a fresh temporary folder.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The packed tarball's absolute path, in a new folder under the system's temporary directory. */
export function packTarball(root: string, prefix = 'nd-id-pack-'): string {
  const dest = mkdtempSync(join(tmpdir(), prefix));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dest], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  return join(dest, out.trim().split('\n').pop() ?? '');
}
