/**
 * How a run of `nd-id-provider` ends as a process: on a signal (taken from the start), or once the
 * process that started it (npx, a shell, a harness) is gone.
 */
/* c8 ignore start */
/** How often the run checks that the process that started it is still there (ms). */
const PARENT_CHECK_MS = 250;

/**
 * Ends the run (verdict printed, port closed) once the process that started it is gone. Under
 * `npx nd-id-provider` or `npm exec` the provider is a grandchild: a SIGTERM to npx ends npx and
 * the shell between them, never this process, which would be left serving with its verdict lost.
 * `startedBy` is the parent read as the process starts, not once it is ready: on a loaded machine
 * the parent can end between the "ready" line and the next turn of this process, and a parent
 * read after that would already be the reaper this one was handed to, so it would never change.
 * A parent that ended during start-up ends the run at the first check.
 */
export function endWithParent(startedBy: number, outcome: { stop(): Promise<number>; ended: Promise<number> }): void {
  const check = setInterval(() => {
    if (process.ppid === startedBy) return;
    clearInterval(check);
    process.stderr.write('nd-id-provider: the process that started this one has ended; ending the run\n');
    outcome.stop().catch(() => process.exit(1));
  }, PARENT_CHECK_MS);
  check.unref();
  void outcome.ended.finally(() => clearInterval(check));
}

/**
 * Takes SIGINT, SIGTERM and SIGHUP from the start, so a signal sent the moment `ready` is printed
 * (or during start-up) is not the default one that kills the process with its verdict unprinted:
 * it ends the run once it is running. The returned function hands over the running outcome.
 */
export function endOnSignals(): (outcome: { stop(): Promise<number> }) => void {
  let running: { stop(): Promise<number> } | undefined;
  let received: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (running === undefined) {
      received ??= signal;
      return;
    }
    process.stderr.write(`nd-id-provider: ${signal} received; ending the run\n`);
    running.stop().catch(() => process.exit(1));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, onSignal);
  return (outcome) => {
    running = outcome;
    if (received !== undefined) onSignal(received);
  };
}
/* c8 ignore stop */
