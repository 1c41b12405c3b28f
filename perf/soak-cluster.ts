/**
 * The deployment the soak (perf/soak.ts) runs against, all on loopback: example-app
 * instances in their own processes (perf/soak-rp.ts), a small round-robin balancer in front
 * of them as one public origin, and figures from Redis.
 */
import { fork, type ChildProcess } from 'node:child_process';
// biome-ignore lint/correctness/noUnusedImports: Agent is used (new Agent below); the rule misreads it here
import { Agent, createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createClient } from 'redis';
import type { SoakRpReply } from './soak-rp.js';

/** Memory of one process after a full GC, in bytes. */
export interface ProcessMemory {
  rss: number;
  heapUsed: number;
  /** Sessions held in the process (in-memory store only). */
  sessions?: number;
}

/** One example-app instance: a child process that can be killed and started again on its port. */
export class Instance {
  #child: ChildProcess | undefined;
  #killing = false;
  /** Exits this soak did not cause (a crash). */
  unexpectedExits = 0;
  /** How many times the process was started. */
  starts = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  /** Start the process and wait for its ready message. */
  start(): Promise<void> {
    const child = fork(join(__dirname, 'soak-rp.ts'), [], {
      execArgv: ['--expose-gc', '--import', 'tsx'],
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        ...this.env,
        SOAK_INSTANCE: this.name,
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    this.#child = child;
    this.#killing = false;
    this.starts += 1;
    child.on('exit', () => {
      if (!this.#killing) this.unexpectedExits += 1;
    });
    return new Promise((resolve, reject) => {
      child.once('message', (reply: SoakRpReply) => {
        if (reply.type === 'ready') resolve();
        else reject(new Error(`${this.name} did not start: ${reply.type === 'failed' ? reply.reason : reply.type}`));
      });
      child.once('exit', (code) => reject(new Error(`${this.name} exited (${code}) before it was ready`)));
    });
  }

  /** Is the process running? */
  isRunning(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Kill it abruptly (SIGKILL), as a crash or an OOM kill would, and wait for the exit. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || !this.isRunning()) return;
    this.#killing = true;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  }

  /** RSS and heap after a full GC in the instance. */
  memory(): Promise<ProcessMemory> {
    const child = this.#child;
    if (!child || !this.isRunning()) return Promise.reject(new Error(`${this.name} is not running`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} did not report its memory`)), 10_000);
      const onMessage = (reply: SoakRpReply): void => {
        if (reply.type !== 'stats') return;
        clearTimeout(timer);
        child.off('message', onMessage);
        resolve({
          rss: reply.rss,
          heapUsed: reply.heapUsed,
          ...(reply.sessions !== undefined ? { sessions: reply.sessions } : {}),
        });
      };
      child.on('message', onMessage);
      child.send({ type: 'stats' });
    });
  }

  /** Stop for good. */
  async stop(): Promise<void> {
    await this.kill();
  }
}

/** What the balancer saw. */
export interface BalancerCounts {
  /** Requests sent to the other instance because the first refused the connection (or reset a reused one). */
  retried: number;
  /** Requests answered by the balancer's own 502 page: no instance could take them. */
  badGateway: number;
  /** Why, by error code ('cut' when an answer ended before its end). */
  reasons: Map<string, number>;
}

/** A running balancer. */
export interface Balancer {
  origin: string;
  counts: BalancerCounts;
  close(): Promise<void>;
}

const backendAgent = new Agent({ keepAlive: true, maxSockets: 200 });

const BAD_GATEWAY_PAGE =
  '<!doctype html><title>Bad gateway</title><h1>Bad gateway</h1><p>No instance of the site could answer. Please try again.</p>';

function badGateway(res: ServerResponse, counts: BalancerCounts, reason: string): void {
  if (res.headersSent) return;
  counts.badGateway += 1;
  counts.reasons.set(reason, (counts.reasons.get(reason) ?? 0) + 1);
  res.writeHead(502, { 'content-type': 'text/html; charset=utf-8' }).end(BAD_GATEWAY_PAGE);
}

function proxy(
  req: IncomingMessage,
  res: ServerResponse,
  ports: number[],
  attempt: number,
  counts: BalancerCounts,
): void {
  const port = ports[attempt % ports.length]!;
  const upstream = request(
    { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers, agent: backendAgent },
    (answer) => {
      // Buffered, as a buffering proxy does: an answer cut short by a dying instance becomes
      // the balancer's 502 page instead of a truncated one.
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(Buffer.concat(chunks));
      });
      answer.on('error', () => badGateway(res, counts, 'cut'));
      answer.on('aborted', () => badGateway(res, counts, 'cut'));
    },
  );
  upstream.setTimeout(30_000, () => upstream.destroy(new Error('timeout')));
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    if (res.headersSent) return;
    // As a proxy's "next upstream on error": a refused connection, or a reused keep-alive socket
    // that the dead instance had closed, goes once to the other instance.
    const retryable = err.code === 'ECONNREFUSED' || (upstream.reusedSocket && err.code === 'ECONNRESET');
    if (retryable && attempt === 0 && ports.length > 1) {
      counts.retried += 1;
      proxy(req, res, ports, 1, counts);
      return;
    }
    badGateway(res, counts, `${err.code ?? err.message}${attempt > 0 ? ' on the retry' : ''}`);
  });
  upstream.end();
}

/** A round-robin balancer on a free loopback port in front of `ports` (GET only: the soak's browsers only GET). */
export async function startBalancer(server: Server, ports: readonly number[]): Promise<Balancer> {
  const counts: BalancerCounts = { retried: 0, badGateway: 0, reasons: new Map() };
  let next = 0;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const first = next++ % ports.length;
    const order = [...ports.slice(first), ...ports.slice(0, first)];
    req.resume(); // GET: no body
    proxy(req, res, order, 0, counts);
  });
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    close: async () => {
      backendAgent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Redis's memory and key count. */
export interface RedisFigures {
  usedMemory: number;
  keys: number;
}

/** A client that reads {@link RedisFigures}; it reconnects by itself after a Redis restart. */
export async function redisFigures(url: string): Promise<{ read(): Promise<RedisFigures>; close(): void }> {
  const client = createClient({ url, socket: { reconnectStrategy: () => 200 } });
  client.on('error', () => undefined); // a restart mid-run is expected; read() fails while it lasts
  await client.connect();
  return {
    read: async () => {
      const info = await client.info('memory');
      const used = /used_memory:(\d+)/.exec(info)?.[1];
      return { usedMemory: Number(used ?? NaN), keys: await client.dbSize() };
    },
    close: () => client.destroy(),
  };
}
