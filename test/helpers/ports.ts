/**
 * Ports for servers a test starts later (a child process, Redis, an app restarted on the same
 * port). Asking the OS for port 0 and closing it is not enough: every in-process provider and
 * app in the suite listens on port 0, and the kernel may hand that very port to one of them
 * before the later listen, which then fails (or, worse, reaches the wrong server).
 *
 * So these ports come from below the kernel's ephemeral range, which port-0 listens never use,
 * and each vitest worker takes its own block, so two workers never hand out the same port.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const BLOCK = 400;
const FIRST = 10_000;

function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return Number(low) || 32_768;
  } catch {
    return 32_768;
  }
}

// VITEST_POOL_ID is 1..maxWorkers inside a worker; the global setup (outside workers) takes block 0.
// TEST_PORT_BLOCK_OFFSET moves a whole run to other blocks, for two checkouts testing at once.
const worker = Number(process.env.VITEST_POOL_ID ?? 0) + Number(process.env.TEST_PORT_BLOCK_OFFSET ?? 0);
const blockStart = FIRST + (worker % 50) * BLOCK;
if (blockStart + BLOCK > ephemeralStart()) {
  throw new Error(
    `Test ports ${blockStart}-${blockStart + BLOCK - 1} would overlap the ephemeral range starting at ${ephemeralStart()}: lower FIRST in test/helpers/ports.ts.`,
  );
}
let next = 0;

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A loopback TCP port nothing listens on, that no port-0 listen in this suite can be given. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < BLOCK; tried++) {
    const port = blockStart + (next++ % BLOCK);
    if (await canListen(port)) return port;
  }
  throw new Error(`No free loopback port in ${blockStart}-${blockStart + BLOCK - 1}.`);
}
