/**
 * For each person signed out everywhere, the time before which their sessions have ended, read by
 * every instance sharing the store (memory, or `createRedisSignOutStore`).
 */
import { checkOptionNames, ownOptions } from '../options-check.js';

/** Where "signed out everywhere" times are kept, by an opaque key per person (never the `sub` itself). */
export interface SignOutStore {
  /** Records that every session of `key` started at or before `at` (ms since the epoch) has ended; kept for `ttlMs`. */
  signOutBefore(key: string, at: number, ttlMs: number): Promise<void>;
  /** The latest time recorded for `key`, or `undefined`. One read. */
  signedOutBefore(key: string): Promise<number | undefined>;
  /** The times recorded for several keys, in order, in one read (optional: else one `signedOutBefore` each, at once). */
  signedOutBeforeEach?(keys: readonly string[]): Promise<Array<number | undefined>>;
}

/** Options of {@link createMemorySignOutStore}. */
export interface MemorySignOutStoreOptions {
  /**
   * Most entries remembered. A new entry in a full store first clears the expired ones; when every
   * entry is still live, the write is refused (rejects) rather than drop a live cut-off: a
   * back-channel logout then answers 503 and the provider retries. Default 100 000.
   */
  maxEntries?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: () => number;
}

/** Default bound of the in-memory sign-out store. */
export const DEFAULT_SIGN_OUT_STORE_MAX_ENTRIES = 100_000;

/**
 * A {@link SignOutStore} in this process's memory. Entries expire after the longest session; a
 * full store clears its expired entries and otherwise refuses a new one, never dropping a live
 * cut-off (provider logouts write to it too, so traffic must not push one out).
 */
export function createMemorySignOutStore(options: MemorySignOutStoreOptions = {}): SignOutStore {
  checkOptionNames(options, 'createMemorySignOutStore()');
  options = ownOptions(options);
  const maxEntries = options.maxEntries ?? DEFAULT_SIGN_OUT_STORE_MAX_ENTRIES;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new TypeError('createMemorySignOutStore: maxEntries must be a whole number of at least 1.');
  }
  const clock = options.clock ?? Date.now;
  const entries = new Map<string, { at: number; expiresAt: number }>();
  /** No entry expires before this time: a full store of live entries is not walked again until then. */
  let nextExpiry = Infinity;

  /** Clears the expired entries, and notes when the next one expires. */
  function clearExpired(now: number): void {
    if (now < nextExpiry) return;
    nextExpiry = Infinity;
    for (const [key, entry] of entries) {
      if (entry.expiresAt <= now) entries.delete(key);
      else nextExpiry = Math.min(nextExpiry, entry.expiresAt);
    }
  }

  return {
    signOutBefore(key, at, ttlMs) {
      const now = clock();
      const previous = entries.get(key);
      if (previous === undefined && entries.size >= maxEntries) {
        clearExpired(now);
        if (entries.size >= maxEntries)
          return Promise.reject(
            new Error(`createMemorySignOutStore: all ${maxEntries} entries are live; the cut-off was not kept.`),
          );
      }
      const expiresAt = now + Math.max(1, ttlMs);
      const kept = previous !== undefined && previous.expiresAt > now ? previous : undefined;
      entries.set(key, {
        at: Math.max(at, kept?.at ?? at),
        expiresAt: Math.max(expiresAt, kept?.expiresAt ?? expiresAt),
      });
      nextExpiry = Math.min(nextExpiry, expiresAt);
      return Promise.resolve();
    },
    signedOutBefore(key) {
      const entry = entries.get(key);
      if (entry === undefined) return Promise.resolve(undefined);
      if (entry.expiresAt <= clock()) {
        entries.delete(key);
        return Promise.resolve(undefined);
      }
      return Promise.resolve(entry.at);
    },
  };
}

/** The sign-out store of every session policy of this process that was given none. */
export const processSignOutStore: SignOutStore = createMemorySignOutStore();
