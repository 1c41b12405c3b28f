/**
 * A {@link SignOutStore} in Redis, shared by every instance: a script keeps the later cut-off
 * (a server whose clock is behind never moves it back); one `MGET` per protected request.
 */
import { checkOptionNames, ownOptions } from '../options-check.js';
import type { RedisCommandClient } from './redis-replay-store.js';
import type { SignOutStore } from './sign-out-store.js';

/** Options of {@link createRedisSignOutStore}. */
export interface RedisSignOutStoreOptions {
  /** Prefix of the keys, so several apps can share one Redis. Default `'nd-id:signed-out:'`. */
  prefix?: string;
}

/** Sets KEYS[1] to ARGV[1] for ARGV[2] ms unless it holds a later time; atomic, so racing sign-outs keep the later one. */
const KEEP_LATER_SCRIPT = `local current = tonumber(redis.call('GET', KEYS[1]))
local at = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
if current ~= nil and current >= at then
  if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
return 1`;

/** A stored time from Redis's reply, or undefined for none. */
function timeOf(reply: unknown, command: string): number | undefined {
  if (reply === null || reply === undefined) return undefined;
  const at = Number(typeof reply === 'string' ? reply : String(reply));
  if (!Number.isFinite(at)) throw new Error(`createRedisSignOutStore: unexpected reply to ${command}.`);
  return at;
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
export function createRedisSignOutStore(
  client: RedisCommandClient,
  options: RedisSignOutStoreOptions = {},
): SignOutStore {
  if (typeof client !== 'object' || client === null || typeof client.sendCommand !== 'function') {
    throw new TypeError(
      'createRedisSignOutStore: client must be a connected node-redis client (createClient() from "redis"); for another client, implement SignOutStore yourself.',
    );
  }
  checkOptionNames(options, 'createRedisSignOutStore()');
  options = ownOptions(options);
  const prefix = options.prefix ?? DEFAULT_REDIS_SIGN_OUT_PREFIX;
  if (typeof prefix !== 'string')
    throw new TypeError('createRedisSignOutStore: prefix must be a string, like "myapp:signed-out:".');
  return {
    async signOutBefore(key, at, ttlMs) {
      const ttl = String(Math.max(1, Math.ceil(ttlMs)));
      await client.sendCommand(['EVAL', KEEP_LATER_SCRIPT, '1', `${prefix}${key}`, String(Math.floor(at)), ttl]);
    },
    async signedOutBefore(key) {
      return timeOf(await client.sendCommand(['GET', `${prefix}${key}`]), 'GET');
    },
    async signedOutBeforeEach(keys) {
      if (keys.length === 0) return [];
      const reply = await client.sendCommand(['MGET', ...keys.map((key) => `${prefix}${key}`)]);
      if (!Array.isArray(reply) || reply.length !== keys.length)
        throw new Error('createRedisSignOutStore: unexpected reply to MGET.');
      return reply.map((value) => timeOf(value, 'MGET'));
    },
  };
}
