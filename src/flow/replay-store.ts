/**
 * Replay store: remembers which logins were already redeemed, so one callback URL completes at
 * most one login. `consume(key, ttl)` is the single atomic operation: the first call for a key
 * wins, every later one (concurrent or not, within its time to live) loses.
 */
import { checkOptionNames } from '../options-check.js';

/** Where redeemed logins are remembered. Share one across instances (e.g. Redis) to refuse replays between them. */
export interface ReplayStore {
  /**
   * Marks `key` as used for `ttlMs` milliseconds. Resolves `true` for the first call with this
   * key, `false` when it was already used. Must be atomic: two racing calls never both get `true`.
   */
  consume(key: string, ttlMs: number): Promise<boolean>;
}

/** Options of {@link createMemoryReplayStore}. */
export interface MemoryReplayStoreOptions {
  /**
   * Most keys remembered. When full, the oldest keys are forgotten first (expired or not), so a
   * full store never refuses a sign-in. Forgetting a key is safe: a replay of that callback still
   * meets the service's single-use authorization code at the token endpoint, and only callbacks
   * whose pending login is still in a session can reach this store at all. Default 100 000.
   */
  maxKeys?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: () => number;
}

/** Default bound of the in-memory replay store. */
export const DEFAULT_REPLAY_STORE_MAX_KEYS = 100_000;

/**
 * A {@link ReplayStore} in this process's memory: refuses replays within one process. Use a
 * shared store (see `createRedisReplayStore`) when several instances serve the same app.
 *
 * Bound and eviction: at most `maxKeys` keys; a new key past the bound drops the oldest one
 * (insertion order is age order). It never refuses a login because strangers filled it.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): ReplayStore {
  checkOptionNames(options, 'createMemoryReplayStore()');
  const maxKeys = options.maxKeys ?? DEFAULT_REPLAY_STORE_MAX_KEYS;
  if (!Number.isInteger(maxKeys) || maxKeys < 1) {
    throw new TypeError('createMemoryReplayStore: maxKeys must be a whole number of at least 1.');
  }
  const clock = options.clock ?? Date.now;
  const used = new Map<string, number>(); // key → expires at; insertion order is age order.

  return {
    consume(key: string, ttlMs: number): Promise<boolean> {
      const now = clock();
      const expiresAt = used.get(key);
      if (expiresAt !== undefined && expiresAt > now) return Promise.resolve(false);
      used.delete(key);
      // Oldest first: expired keys go before live ones whenever keys share one lifetime.
      for (const oldest of used.keys()) {
        if (used.size < maxKeys) break;
        used.delete(oldest);
      }
      used.set(key, now + Math.max(1, ttlMs));
      return Promise.resolve(true);
    },
  };
}

/** The replay store shared by every login flow of this process that was given none. */
export const processReplayStore: ReplayStore = createMemoryReplayStore();
