/**
 * One example-app instance of the soak (perf/soak.ts), in its own process: configured from
 * its environment exactly as `npm start` reads it (`loadConfig`), served by
 * `startExampleServer`. Driven over IPC:
 *
 * - at start it answers `{ type: 'ready', port }`, or `{ type: 'failed', reason }`;
 * - `{ type: 'stats' }`: run a full GC and answer `{ type: 'stats', rss, heapUsed }`, with the
 *   number of sessions held when they are in memory (no `REDIS_URL`).
 *
 * Started with `--expose-gc`. Log lines go to stderr prefixed with `SOAK_INSTANCE`; they carry
 * codes and state changes only, never a value.
 */
import { loadConfig } from '../example-app/config.js';
import { BoundedMemoryStore } from '../example-app/memory-store.js';
import { startExampleServer } from '../example-app/server.js';

/** Messages to the soak. */
export type SoakRpReply =
  | { type: 'ready'; port: number }
  | { type: 'stats'; rss: number; heapUsed: number; sessions?: number }
  | { type: 'failed'; reason: string };

const name = process.env.SOAK_INSTANCE ?? 'rp';
const log = (line: string): void => {
  process.stderr.write(`[${name}] ${line}\n`);
};
const send = (reply: SoakRpReply): void => {
  process.send?.(reply);
};

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (config.mode !== 'provider') throw new Error('the soak instance needs the ND_ID_* variables');
  const running = await startExampleServer(
    {
      provider: config.provider,
      sessionSecrets: config.site.sessionSecrets,
      redisUrl: config.site.redisUrl,
      trustProxy: config.site.trustProxy,
      ...(config.site.loginTtlMs !== undefined ? { loginTtlMs: config.site.loginTtlMs } : {}),
      ...(config.site.sessionMaxAgeMs !== undefined ? { sessionMaxAgeMs: config.site.sessionMaxAgeMs } : {}),
      ...(config.site.maxMemorySessions !== undefined
        ? { memoryStore: { maxSessions: config.site.maxMemorySessions } }
        : {}),
      log,
    },
    { port: config.site.port, host: config.site.host },
  );
  process.on('message', (message: { type: string }) => {
    if (message.type !== 'stats') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    gc?.();
    gc?.();
    const { rss, heapUsed } = process.memoryUsage();
    const store = running.example.sessions.store;
    send({ type: 'stats', rss, heapUsed, ...(store instanceof BoundedMemoryStore ? { sessions: store.size } : {}) });
  });
  send({ type: 'ready', port: running.port });
}

main().catch((err: unknown) => {
  send({ type: 'failed', reason: err instanceof Error ? err.message.slice(0, 300) : 'unknown error' });
  process.exitCode = 1;
});
process.on('disconnect', () => process.exit(0));
