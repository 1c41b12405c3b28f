/**
 * A {@link SignOutStore} in Redis, shared by every instance of the app: `SET key time PX ttl` when
 * a person is signed out everywhere, one `GET key` per protected request. Any client with
 * node-redis's `sendCommand` works; `redis` itself is not a dependency of this package.
 */
import { checkOptionNames } from '../options-check.js';
import type { RedisCommandClient } from './redis-replay-store.js';
import type { SignOutStore } from './sign-out-store.js';

/** Options of {@link createRedisSignOutStore}. */
export interface RedisSignOutStoreOptions {
  /** Prefix of the keys, so several apps can share one Redis. Default `'nd-id:signed-out:'`. */
  prefix?: string;
}

/** Default key prefix of {@link createRedisSignOutStore}. */
export const DEFAULT_REDIS_SIGN_OUT_PREFIX = 'nd-id:signed-out:';

/**
 * A sign-out store on a connected node-redis client (`createClient()` from `redis`):
 *
 * ```ts
 * const sessions = createSessionPolicy({ signOutStore: createRedisSignOutStore(redis) });
 * ```
 * A failed command rejects; the guards answer it as `session_store_unavailable` (503).
 * @throws TypeError when `client` has no `sendCommand` or the prefix is not a string.
 */
export function createRedisSignOutStore(client: RedisCommandClient, options: RedisSignOutStoreOptions = {}): SignOutStore {
  if (typeof client !== 'object' || client === null || typeof client.sendCommand !== 'function') {
    throw new TypeError(
      'createRedisSignOutStore: client must be a connected node-redis client (createClient() from "redis"); for another client, implement SignOutStore yourself.',
    );
  }
  checkOptionNames(options, 'createRedisSignOutStore()');
  const prefix = options.prefix ?? DEFAULT_REDIS_SIGN_OUT_PREFIX;
  if (typeof prefix !== 'string') throw new TypeError('createRedisSignOutStore: prefix must be a string, like "myapp:signed-out:".');
  return {
    async signOutBefore(key, at, ttlMs) {
      const ttl = String(Math.max(1, Math.ceil(ttlMs)));
      await client.sendCommand(['SET', `${prefix}${key}`, String(Math.floor(at)), 'PX', ttl]);
    },
    async signedOutBefore(key) {
      const reply = await client.sendCommand(['GET', `${prefix}${key}`]);
      if (reply === null || reply === undefined) return undefined;
      const at = Number(typeof reply === 'string' ? reply : String(reply));
      if (!Number.isFinite(at)) throw new Error('createRedisSignOutStore: unexpected reply to GET.');
      return at;
    },
  };
}
