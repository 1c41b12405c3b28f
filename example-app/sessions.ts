/**
 * The session store: Redis (connect-redis with the `redis` client) when a URL is given, so any
 * number of app instances share logins; otherwise a {@link BoundedMemoryStore} in this process,
 * which expires sessions by itself and holds a bounded number of them.
 *
 * While Redis is unreachable, commands fail at once instead of queueing (`disableOfflineQueue`),
 * so requests get a clear 503 page quickly; the client keeps reconnecting in the background and
 * pages work again as soon as Redis is back.
 */
import { RedisStore } from 'connect-redis';
import type session from 'express-session';
import { createClient } from 'redis';
import {
  createRedisReplayStore,
  createRedisSignOutStore,
  type ReplayStore,
  type SignOutStore,
} from 'passport-nd-id/client';
import { BoundedMemoryStore, type BoundedMemoryStoreOptions } from './memory-store.js';

/** Longest wait between two reconnection attempts to Redis, in ms. */
export const REDIS_MAX_RECONNECT_DELAY_MS = 2000;
/** How long a command may wait for Redis before it is treated as unavailable, in ms. */
export const REDIS_CONNECT_TIMEOUT_MS = 2000;

/** A session store and its lifecycle. */
export interface SessionStore {
  /** Which store this is. */
  kind: 'redis' | 'memory' | 'custom';
  /** The express-session store. */
  store: session.Store;
  /** True while the store can be used (always true for memory). */
  isAvailable(): boolean;
  /** Resolves once the store is connected or its first connection attempt failed (at once for memory). Never rejects. */
  ready: Promise<void>;
  /** Disconnect (Redis) or stop the expiry sweep (memory). */
  close(): Promise<void>;
  /** With Redis: where completed logins are remembered, so instances never both redeem one callback. */
  replayStore?: ReplayStore;
  /** Where "signed out everywhere" times are shared between instances (Redis only). */
  signOutStore?: SignOutStore;
}

/** Settings of the in-memory store, used when no Redis URL is given. */
export type MemoryStoreSettings = Pick<BoundedMemoryStoreOptions, 'maxSessions' | 'sweepIntervalMs' | 'now'>;

/**
 * Create the session store. `log` receives one line per state change (connected, lost,
 * reconnected; the memory store full); never a URL with its password or any session content.
 */
export function createSessionStore(
  redisUrl: string | undefined,
  log: (line: string) => void,
  memory: MemoryStoreSettings = {},
): SessionStore {
  if (!redisUrl) {
    const store = new BoundedMemoryStore({ ...memory, log });
    return {
      kind: 'memory',
      store,
      isAvailable: () => true,
      ready: Promise.resolve(),
      close: async () => store.close(),
    };
  }

  const client = createClient({
    url: redisUrl,
    // Fail commands at once while disconnected, rather than holding requests in a queue.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      // Retry forever, backing off to at most REDIS_MAX_RECONNECT_DELAY_MS between attempts.
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 5), REDIS_MAX_RECONNECT_DELAY_MS),
    },
  });
  let available = false;
  let reportedDown = false;
  const where = (() => {
    const url = new URL(redisUrl);
    return `${url.protocol}//${url.host}`; // never the password
  })();
  client.on('ready', () => {
    available = true;
    if (reportedDown) log(`Session store: Redis at ${where} is reachable again.`);
    reportedDown = false;
  });
  // An 'error' listener is required: without one, a lost connection would crash the process.
  client.on('error', (err: unknown) => {
    available = false;
    if (!reportedDown) {
      // Socket-level messages ("connect ECONNREFUSED ...", "Socket closed unexpectedly") carry no secret.
      const reason = err instanceof Error ? err.message.slice(0, 120) : 'unknown error';
      log(`Session store: Redis at ${where} is unavailable (${reason}); retrying.`);
      reportedDown = true;
    }
  });

  let closed = false;
  // Settles at the first outcome: connected, or the first failure (the client keeps retrying).
  const ready = new Promise<void>((resolve) => {
    client.once('ready', () => resolve());
    client.once('error', () => resolve());
    client.connect().catch(() => resolve()); // failures are reported through the 'error' event
  });
  return {
    kind: 'redis',
    store: new RedisStore({ client, prefix: 'example-app:sess:' }),
    replayStore: createRedisReplayStore(client, { prefix: 'example-app:used:' }),
    signOutStore: createRedisSignOutStore(client, { prefix: 'example-app:signed-out:' }),
    isAvailable: () => available && client.isReady,
    ready,
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        client.destroy();
      } catch {
        // already closed
      }
    },
  };
}
