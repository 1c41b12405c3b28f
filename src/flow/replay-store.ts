/** Which logins were redeemed already: `consume` is atomic, the first call for a key wins. */
import { checkOptionNames, ownOptions } from '../options-check.js';

/** Where redeemed logins are remembered. Share one across instances (e.g. Redis) to refuse replays between them. */
export interface ReplayStore {
  /**
   * Marks `key` as used for `ttlMs` milliseconds. Resolves `true` for the first call with this
   * key, `false` when it was already used. Must be atomic: two racing calls never both get `true`.
   */
  consume(key: string, ttlMs: number): Promise<boolean>;
  /**
   * Forgets `key`, so the next `consume` of it gets `true` again: for a use that failed after
   * consuming its key (a back-channel logout whose sessions could not be ended, which the provider
   * retries). Optional: without it, only a retry to the same instance is taken.
   */
  release?(key: string): Promise<void>;
}

/** Options of {@link createMemoryReplayStore}. */
export interface MemoryReplayStoreOptions {
  /**
   * Most keys remembered; past it the oldest go first, so a full store never refuses a sign-in.
   * Safe: a replay still meets the single-use code at the token endpoint, and only callbacks with
   * a pending login in a session reach the store. Default 100 000.
   */
  maxKeys?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: () => number;
}

/** Default bound of the in-memory replay store. */
export const DEFAULT_REPLAY_STORE_MAX_KEYS = 100_000;

/**
 * A {@link ReplayStore} in this process's memory, at most `maxKeys` keys (oldest dropped first).
 * Use a shared store (`createRedisReplayStore`) when several instances serve the app.
 */
export function createMemoryReplayStore(options: MemoryReplayStoreOptions = {}): ReplayStore {
  checkOptionNames(options, 'createMemoryReplayStore()');
  options = ownOptions(options);
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
    release(key: string): Promise<void> {
      used.delete(key);
      return Promise.resolve();
    },
  };
}

/** The replay store shared by every login flow of this process that was given none. */
export const processReplayStore: ReplayStore = createMemoryReplayStore();
