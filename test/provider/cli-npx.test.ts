/**
 * `npx nd-id-provider …` stopped with SIGTERM, as a Python or shell harness does it
 * (`Popen(["npx", "nd-id-provider", …]).terminate()`): npx and the shell it starts end at once,
 * and the provider, two levels down, must end too, closing its port and printing its verdict to
 * the output the harness still reads. Runs the built CLI (dist/) through a local `.bin` link,
 * with npm offline.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listening, processesNaming } from '../helpers/cli-processes.js';

const root = process.cwd();
const dir = mkdtempSync(join(tmpdir(), 'nd-id-npx-'));

afterAll(() => {
  if (process.platform === 'linux') for (const pid of processesNaming(dir)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform !== 'linux')('npx nd-id-provider, then SIGTERM to npx', () => {
  it('ends the provider: its port closes and the verdict reaches the output the caller reads', async () => {
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(join(dir, 'package.json'), '{ "name": "npx-harness", "private": true }\n');
    symlinkSync(root, join(dir, 'node_modules', 'passport-nd-id'));
    symlinkSync('../passport-nd-id/dist/cjs/provider/cli.js', join(dir, 'node_modules', '.bin', 'nd-id-provider'));
    const clients = join(dir, 'clients.json');
    writeFileSync(
      clients,
      JSON.stringify([
        {
          clientId: 'generic-rp',
          clientSecret: 'generic-rp-secret-0123456789',
          redirectUris: ['http://127.0.0.1:3000/callback'],
          userinfo: false,
        },
      ]),
    );
    const npx = spawn('npx', ['--offline', 'nd-id-provider', '--clients', clients, '--port', '0'], {
      cwd: dir,
      env: { ...process.env, ND_ID_SUBJECT_SECRET: 'npx-subject-secret-0123', npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    npx.stdout.on('data', (c: Buffer) => (out += c.toString()));
    npx.stderr.on('data', (c: Buffer) => (err += c.toString()));
    // 'close' comes once every process holding the pipes (npx, the shell, the provider) is gone.
    const closed = new Promise<void>((resolve) => npx.stdout.once('close', () => resolve()));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not ready: ${out} ${err}`)), 20_000);
      npx.stdout.on('data', () => {
        const m = /ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
    });
    expect(await listening(port)).toBe(true);

    npx.kill('SIGTERM');
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    expect(await listening(port)).toBe(false);
    expect(out).toMatch(/Audit: no findings\.\nVerdict: PASSED/);
    expect(err).toContain('the process that started this one has ended; ending the run');
  });
});
