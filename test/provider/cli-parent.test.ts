/**
 * The built `nd-id-provider` (dist/) ends its run, verdict printed, when the process that started
 * it has ended or a signal came, even when that happened before the provider was ready: on a
 * loaded machine the shell and npx above it can be gone, or a harness's SIGTERM sent, between the
 * "ready" line and the provider's next turn. The start-up is held on a FIFO given as `--clients`
 * (the CLI reads it before listening) while the parent is ended or the signal sent, so the order
 * is certain rather than left to the scheduler.
 */
import { spawn } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listening, processesNaming } from '../helpers/cli-processes.js';

const CLI = join(process.cwd(), 'dist', 'cjs', 'provider', 'cli.js');
const dir = mkdtempSync(join(tmpdir(), 'nd-id-parent-'));

afterAll(() => {
  if (process.platform === 'linux') for (const pid of processesNaming(dir)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** The FIFO opened for writing once the provider has opened it for reading (it is then past its start). */
async function writerOnceRead(fifo: string): Promise<number> {
  for (let i = 0; i < 400; i++) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  throw new Error('the provider never opened its clients file');
}

const CLIENTS = JSON.stringify([
  {
    clientId: 'generic-rp',
    clientSecret: 'generic-rp-secret-0123456789',
    redirectUris: ['http://127.0.0.1:3000/callback'],
    userinfo: false,
  },
]);

describe.skipIf(process.platform !== 'linux')('the process that started the provider ends before it is ready', () => {
  it('the run ends once ready: port closed, verdict printed to the output the caller reads', async () => {
    const fifo = join(dir, 'clients.fifo');
    const made = spawn('mkfifo', [fifo]);
    expect(await new Promise((resolve) => made.once('exit', resolve))).toBe(0);
    // `; exit` keeps the shell as the provider's parent (no exec of the last command).
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${CLI}" --clients "${fifo}" --port 0; exit $?`], {
      env: { ...process.env, ND_ID_SUBJECT_SECRET: 'parent-subject-secret-0123' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    shell.stdout.on('data', (c: Buffer) => (out += c.toString()));
    shell.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const closed = new Promise<void>((resolve) => shell.stdout.once('close', () => resolve()));
    const fd = await writerOnceRead(fifo);
    const shellGone = new Promise((resolve) => shell.once('exit', resolve));
    shell.kill('SIGKILL');
    await shellGone;
    writeSync(fd, CLIENTS);
    closeSync(fd);
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not ready: ${out} ${err}`)), 20_000);
      const onData = (): void => {
        const m = /ready at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (!m) return;
        clearTimeout(timer);
        resolve(Number(m[1]));
      };
      shell.stdout.on('data', onData);
      onData();
    });
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    expect(await listening(port)).toBe(false);
    expect(out).toMatch(/Audit: no findings\.\nVerdict: PASSED/);
    expect(err).toContain('the process that started this one has ended; ending the run');
  });

  it('a SIGTERM sent during start-up ends the run once ready, with the verdict (not the default signal death)', async () => {
    const fifo = join(dir, 'clients-term.fifo');
    const made = spawn('mkfifo', [fifo]);
    expect(await new Promise((resolve) => made.once('exit', resolve))).toBe(0);
    const child = spawn(process.execPath, [CLI, '--clients', fifo, '--port', '0'], {
      env: { ...process.env, ND_ID_SUBJECT_SECRET: 'parent-subject-secret-0123' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const fd = await writerOnceRead(fifo);
    child.kill('SIGTERM');
    writeSync(fd, CLIENTS);
    closeSync(fd);
    expect(await exit).toBe(0);
    expect(out).toMatch(/ready at http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toMatch(/Audit: no findings\.\nVerdict: PASSED/);
    expect(err).toContain('nd-id-provider: SIGTERM received; ending the run');
  });
});
