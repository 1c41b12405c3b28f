/** Ending a child process a test started, and waiting until it has gone. */
import type { ChildProcess } from 'node:child_process';

/** Sends SIGTERM to `child` when it still runs, and resolves once it has exited. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await gone;
}
