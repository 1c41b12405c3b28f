import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIAGNOSIS_CODES } from '../src/flow/diagnose.js';

describe("README's Troubleshooting table", () => {
  const readme = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Troubleshooting'), readme.indexOf('\n## ', readme.indexOf('## Troubleshooting') + 5));
  const documented = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);

  it('has one row for every diagnosis code the library can emit, and none it cannot', () => {
    expect([...documented].sort()).toEqual([...DIAGNOSIS_CODES].sort());
  });
});
