/**
 * `nd-id-provider init --force` over files already there: each secret is written to a new file
 * (mode 0600 whatever the old file's mode) and renamed into place, so a symlink planted where a
 * file goes is replaced, and the file it points to never receives a key.
 */
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/provider/cli.js';
import { INIT_FILES } from '../../src/provider/cli-init.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nd-id-init-force-'));
  dirs.push(dir);
  return dir;
}

async function init(dir: string, ...extra: string[]): Promise<void> {
  const errors: string[] = [];
  const outcome = await runCli(
    ['init', '--redirect-uri', 'http://127.0.0.1:3000/auth/callback', '--dir', dir, '--force', ...extra],
    {
      stdout: () => undefined,
      stderr: (text) => errors.push(text),
      env: {},
    },
  );
  expect(errors.join('')).toBe('');
  expect(outcome).toMatchObject({ exitCode: 0 });
}

const SECRETS = [INIT_FILES.privateKey, INIT_FILES.clients, INIT_FILES.fapiKeys, INIT_FILES.providerSigningKeys];

describe.skipIf(process.platform === 'win32')('nd-id-provider init --force', () => {
  it('leaves every secret at mode 0600 where world-readable files were', async () => {
    const dir = folder();
    for (const name of [...SECRETS, INIT_FILES.publicKey]) {
      writeFileSync(join(dir, name), 'old\n');
      chmodSync(join(dir, name), 0o644);
    }
    await init(dir, '--profile', 'fapi2');
    for (const name of SECRETS) {
      expect(statSync(join(dir, name)).mode & 0o777, name).toBe(0o600);
      expect(readFileSync(join(dir, name), 'utf8'), name).not.toBe('old\n');
    }
    expect(statSync(join(dir, INIT_FILES.publicKey)).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(dir, INIT_FILES.privateKey), 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // No temporary file is left behind.
    expect(readdirSync(dir).sort()).toEqual([...SECRETS, INIT_FILES.publicKey].sort());
  });

  it('replaces a symlink planted where a key goes, and never writes through it', async () => {
    const dir = folder();
    const elsewhere = folder();
    const planted: string[] = [];
    for (const name of [...SECRETS, INIT_FILES.publicKey]) {
      const target = join(elsewhere, `${name}.catch`);
      writeFileSync(target, 'untouched\n');
      chmodSync(target, 0o644);
      symlinkSync(target, join(dir, name));
      planted.push(target);
    }
    // And a dangling one, whose target does not exist yet.
    rmSync(planted[0]!);
    await init(dir, '--profile', 'fapi2');
    for (const name of [...SECRETS, INIT_FILES.publicKey]) {
      const stat = lstatSync(join(dir, name));
      expect(stat.isSymbolicLink(), name).toBe(false);
      expect(stat.isFile(), name).toBe(true);
    }
    for (const name of SECRETS) expect(lstatSync(join(dir, name)).mode & 0o777, name).toBe(0o600);
    expect(() => lstatSync(planted[0]!)).toThrow(/ENOENT/);
    for (const target of planted.slice(1)) expect(readFileSync(target, 'utf8')).toBe('untouched\n');
  });
});
