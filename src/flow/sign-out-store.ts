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
  /** Most people remembered; past it the oldest entry is dropped. Default 100 000. */
  maxEntries?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: () => number;
}

/** Default bound of the in-memory sign-out store. */
export const DEFAULT_SIGN_OUT_STORE_MAX_ENTRIES = 100_000;

/**
 * A {@link SignOutStore} in this process's memory. Entries expire after the longest session and
 * past `maxEntries` the oldest goes first; only the app writes it, so traffic cannot fill it.
 */
export function createMemorySignOutStore(options: MemorySignOutStoreOptions = {}): SignOutStore {
  checkOptionNames(options, 'createMemorySignOutStore()');
  options = ownOptions(options);
  const maxEntries = options.maxEntries ?? DEFAULT_SIGN_OUT_STORE_MAX_ENTRIES;
  if (!Number.isInteger(maxEntries) || maxEntries < 1) {
    throw new TypeError('createMemorySignOutStore: maxEntries must be a whole number of at least 1.');
  }
  const clock = options.clock ?? Date.now;
  const entries = new Map<string, { at: number; expiresAt: number }>(); // insertion order is age order

  return {
    signOutBefore(key, at, ttlMs) {
      const previous = entries.get(key);
      entries.delete(key);
      entries.set(key, { at: Math.max(at, previous?.at ?? at), expiresAt: clock() + Math.max(1, ttlMs) });
      while (entries.size > maxEntries) {
        const oldest = entries.keys().next().value as string;
        entries.delete(oldest);
      }
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
