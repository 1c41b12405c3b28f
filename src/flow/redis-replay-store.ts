/**
 * A {@link ReplayStore} in Redis: `SET key 1 PX ttl NX` is atomic, so of several instances racing
 * one callback exactly one gets `OK`. Works on any client with node-redis's `sendCommand`.
 */
import { checkOptionNames, ownOptions } from '../options-check.js';
import type { ReplayStore } from './replay-store.js';

/** What the Redis replay store needs from a client: node-redis's (v4 and v5) `sendCommand`. */
export interface RedisCommandClient {
  /** Sends one command with string arguments and resolves with Redis's reply. */
  sendCommand(args: string[]): Promise<unknown>;
}

/** Options of {@link createRedisReplayStore}. */
export interface RedisReplayStoreOptions {
  /** Prefix of the keys, so several apps can share one Redis. Default `'nd-id:used:'`. */
  prefix?: string;
}

/** Default key prefix of {@link createRedisReplayStore}. */
export const DEFAULT_REDIS_REPLAY_PREFIX = 'nd-id:used:';

/**
 * A replay store on a connected node-redis client (`createClient()` from `redis`):
 *
 * ```ts
 * const redis = createClient({ url: process.env.REDIS_URL });
 * await redis.connect();
 * new NdIdStrategy({ ..., replayStore: createRedisReplayStore(redis) });
 * ```
 * A failed command rejects; the login flow reports it as `session_store_unavailable` (503).
 * @throws TypeError when `client` has no `sendCommand` or the prefix is not a string.
 */
export function createRedisReplayStore(client: RedisCommandClient, options: RedisReplayStoreOptions = {}): ReplayStore {
  if (typeof client !== 'object' || client === null || typeof client.sendCommand !== 'function') {
    throw new TypeError(
      'createRedisReplayStore: client must be a connected node-redis client (createClient() from "redis"); for another client, implement ReplayStore.consume yourself.',
    );
  }
  checkOptionNames(options, 'createRedisReplayStore()');
  options = ownOptions(options);
  const prefix = options.prefix ?? DEFAULT_REDIS_REPLAY_PREFIX;
  if (typeof prefix !== 'string')
    throw new TypeError('createRedisReplayStore: prefix must be a string, like "myapp:used:".');
  return {
    async consume(key: string, ttlMs: number): Promise<boolean> {
      const ttl = String(Math.max(1, Math.ceil(ttlMs)));
      const reply = await client.sendCommand(['SET', `${prefix}${key}`, '1', 'PX', ttl, 'NX']);
      if (reply === 'OK') return true;
      if (reply === null || reply === undefined) return false;
      throw new Error(`createRedisReplayStore: unexpected reply to SET NX (${typeof reply}).`);
    },
    async release(key: string): Promise<void> {
      await client.sendCommand(['DEL', `${prefix}${key}`]);
    },
  };
}
