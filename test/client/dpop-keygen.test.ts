/**
 * Node 20: exporting a key object that came straight from `generateKeyPairSync` can deadlock the
 * whole process when a garbage collection runs during the export. A FAPI app makes one DPoP key
 * per login, so the keys are made in a child process under GC pressure, with a watchdog.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const WATCHDOG_MS = 90_000;

it(
  '5 000 login DPoP keys made under garbage-collection pressure: the process finishes (no deadlock)',
  async () => {
    const script = join(__dirname, 'fixtures', 'dpop-keys-under-gc.ts');
    const child = spawn(process.execPath, ['--max-semi-space-size=1', '--import', 'tsx', script, '5000'], {
      cwd: join(__dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    let killedByWatchdog = false;
    const watchdog = setTimeout(() => {
      killedByWatchdog = true;
      child.kill('SIGKILL');
    }, WATCHDOG_MS);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(watchdog);
    expect({ killedByWatchdog, code, err: err.trim() }).toEqual({ killedByWatchdog: false, code: 0, err: '' });
    expect(out.trim()).toBe('made 5000');
  },
  WATCHDOG_MS + 10_000,
);
