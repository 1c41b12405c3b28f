/** The version of the installed `passport-nd-id` package, for `nd-id-provider --version`. */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The package's name in its package.json. */
const PACKAGE_NAME = 'passport-nd-id';

/** The `version` of the nearest package.json named passport-nd-id above `from` (works from dist/ and src/). */
export function packageVersion(from: string = __dirname): string {
  let dir = from;
  for (let i = 0; i < 8; i += 1) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === PACKAGE_NAME && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no readable package.json here: look one level up
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return 'unknown';
}
