/** For tests that start the built CLI through a shell or npx: what was left behind, and whether a port is served. */
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection } from 'node:net';

/** The processes (other than this one) whose command line names `dir`, to end any left behind by pid (Linux). */
export function processesNaming(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** True when something accepts connections on the port. */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
