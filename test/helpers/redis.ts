/**
 * A real, throwaway `redis-server` for tests: loopback only, a free port, no persistence.
 * It can be killed and restarted on the same port to simulate an outage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './ports.js';

/** A running (or stopped) test Redis. */
export interface TestRedis {
  /** The port it listens on; kept across {@link TestRedis.kill} and {@link TestRedis.start}. */
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Stop it abruptly (SIGKILL), as a crash would, and wait until the port is closed. */
  kill(): Promise<void>;
  /** Start it again on the same port (empty, since nothing is persisted). */
  start(): Promise<void>;
  /** Stop it for good. */
  close(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Send PING and wait for +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

/**
 * Start `redis-server` on a free loopback port with persistence off
 * (`--save '' --appendonly no`), and resolve once it answers PING.
 */
export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  const start = async (): Promise<void> => {
    output = '';
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = proc;
    proc.stdout?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    proc.stderr?.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
    const exited = new Promise<never>((_, reject) => {
      proc.once('error', (err) => reject(new Error(`redis-server could not be started: ${err.message}`)));
      proc.once('exit', (code) =>
        reject(new Error(`redis-server exited (code ${code}) before it was ready:\n${output}`)),
      );
    });
    exited.catch(() => undefined);
    for (let i = 0; i < 200; i++) {
      const ready = await Promise.race([ping(port), exited]);
      if (ready) return;
      await sleep(25);
    }
    throw new Error(`redis-server did not answer PING on port ${port}:\n${output}`);
  };

  const kill = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGKILL');
    await gone;
    while (await ping(port)) await sleep(25);
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    start,
    close: kill,
  };
}
