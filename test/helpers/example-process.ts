/**
 * Run the example app (`example-app/start.ts`) as a child process, exactly as `npm start` does
 * minus the build, with a controlled environment.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');

/** A started example-app process. */
export interface ExampleProcess {
  readonly child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>;
  /** Still running? */
  isRunning(): boolean;
  /** The exit code or signal name once it has ended. */
  exitStatus(): number | string;
  /** Stop it (SIGTERM, then SIGKILL) and wait for it to end. */
  stop(): Promise<void>;
}

/**
 * Spawn `example-app/start.ts` with only `env` (plus PATH and HOME): no variable leaks in from
 * the test runner's own environment.
 */
export function spawnExampleApp(env: Record<string, string>): ExampleProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'example-app', 'start.ts')], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  // 'close' rather than 'exit': it comes once stdout and stderr are read to the end, so a failure
  // message shows everything the process wrote (a listen error can still be in the pipe at 'exit').
  const exited = new Promise<number | string>((resolve) => {
    child.once('close', (code, signal) => resolve(code ?? signal ?? 'unknown'));
  });
  let running = true;
  let exitStatus: number | string = 'still running';
  void exited.then((status) => {
    running = false;
    exitStatus = status;
  });
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    isRunning: () => running,
    exitStatus: () => exitStatus,
    stop: async () => {
      if (!running) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Wait until the process prints its ready line and return the URL it names, or fail with its
 * output when it exits first.
 */
export async function waitForReady(proc: ExampleProcess): Promise<string> {
  for (;;) {
    const match = /Example app ready: open (\S+)/.exec(proc.stdout());
    if (match) return match[1]!;
    if (!proc.isRunning()) {
      throw new Error(
        `The example app exited (${proc.exitStatus()}) before it was ready.\nstdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
