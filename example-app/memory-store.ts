/**
 * The example app's session store when no Redis is configured: sessions in this process's
 * memory that expire by themselves and whose number is bounded.
 *
 * express-session's own `MemoryStore` drops an expired session only when the same id is read
 * again, so every abandoned login would stay in memory for the life of the process. This store:
 *
 * - removes expired sessions with a periodic sweep (and on every write, at most once a second),
 *   whose cost is the number of sessions it removes, not the number it holds: sessions are kept
 *   in one insertion-ordered "lane" per lifetime (a login-only session's 10 minutes, a signed-in
 *   session's 8 hours...), so within a lane the oldest write is also the first to expire;
 * - holds at most `maxSessions`: when full, it drops the session closest to expiring, so a flood
 *   of abandoned logins pushes out other unfinished logins (whose owners see "Sign-in failed" and
 *   start again), not people who are signed in.
 *
 * Sessions are kept as JSON text, as express-session's store does, so a request never shares
 * objects with the store.
 */
import session from 'express-session';

/** Default of {@link BoundedMemoryStoreOptions.maxSessions}. */
export const DEFAULT_MAX_MEMORY_SESSIONS = 20_000;
/** Default of {@link BoundedMemoryStoreOptions.sweepIntervalMs}: once a minute. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** Lifetime given to a session whose cookie has no expiry (a browser-session cookie): 8 hours. */
export const DEFAULT_UNBOUNDED_SESSION_MS = 8 * 60 * 60 * 1000;
/** Shortest time between two sweeps started by writes. */
const WRITE_SWEEP_GAP_MS = 1000;
/** Shortest time between two "store is full" log lines. */
const FULL_LOG_GAP_MS = 60_000;

/** Options of {@link BoundedMemoryStore}. */
export interface BoundedMemoryStoreOptions {
  /** Most sessions held at once; the one closest to expiring is dropped to make room. Default 20 000. */
  maxSessions?: number;
  /** How often expired sessions are swept, in ms; 0 turns the timer off (writes still sweep). Default 60 000. */
  sweepIntervalMs?: number;
  /** Lifetime of a session whose cookie has no expiry, in ms. Default 8 hours. */
  defaultLifetimeMs?: number;
  /** Clock in ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /** Receives one line when the store becomes full (at most once a minute); never a session id or content. */
  log?: (line: string) => void;
}

interface Entry {
  json: string;
  expires: number;
}

type Callback<T> = (err: unknown, value?: T) => void;

function wholeAtLeast(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new TypeError(`BoundedMemoryStore: ${name} must be a whole number of at least ${min}; got ${String(value)}.`);
  }
  return value;
}

/** An express-session store in memory that expires sessions by itself and holds a bounded number. */
export class BoundedMemoryStore extends session.Store {
  /** Most sessions held at once. */
  readonly maxSessions: number;
  /** Sessions dropped to make room since the store was created. */
  evicted = 0;
  /** Expired sessions removed since the store was created. */
  expired = 0;
  readonly #lanes = new Map<number, Map<string, Entry>>();
  readonly #laneOf = new Map<string, number>();
  readonly #now: () => number;
  readonly #defaultLifetime: number;
  readonly #log: ((line: string) => void) | undefined;
  readonly #timer: NodeJS.Timeout | undefined;
  #lastWriteSweep = -Infinity;
  #lastFullLog = -Infinity;

  /** @throws TypeError when an option is unusable. */
  constructor(options: BoundedMemoryStoreOptions = {}) {
    super();
    this.maxSessions = wholeAtLeast('maxSessions', options.maxSessions ?? DEFAULT_MAX_MEMORY_SESSIONS, 1);
    this.#defaultLifetime = wholeAtLeast(
      'defaultLifetimeMs',
      options.defaultLifetimeMs ?? DEFAULT_UNBOUNDED_SESSION_MS,
      1,
    );
    const interval = wholeAtLeast('sweepIntervalMs', options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS, 0);
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new TypeError('BoundedMemoryStore: now must be a function returning the time in ms since the epoch.');
    }
    this.#now = options.now ?? Date.now;
    this.#log = options.log;
    if (interval > 0) {
      this.#timer = setInterval(() => this.sweep(), interval);
      this.#timer.unref(); // never keeps the process alive
    }
  }

  /** How many sessions are held right now, expired ones not yet swept included. */
  get size(): number {
    return this.#laneOf.size;
  }

  /** Remove every expired session; returns how many were removed. */
  sweep(): number {
    const now = this.#now();
    let removed = 0;
    for (const [lifetime, lane] of this.#lanes) {
      for (const [sid, entry] of lane) {
        if (entry.expires > now) break; // the rest of this lane was written later
        lane.delete(sid);
        this.#laneOf.delete(sid);
        removed += 1;
      }
      if (lane.size === 0) this.#lanes.delete(lifetime);
    }
    this.expired += removed;
    return removed;
  }

  /** Stop the sweep timer. */
  close(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  #find(sid: string): Entry | undefined {
    const lifetime = this.#laneOf.get(sid);
    return lifetime === undefined ? undefined : this.#lanes.get(lifetime)?.get(sid);
  }

  #remove(sid: string): void {
    const lifetime = this.#laneOf.get(sid);
    if (lifetime === undefined) return;
    const lane = this.#lanes.get(lifetime);
    lane?.delete(sid);
    if (lane?.size === 0) this.#lanes.delete(lifetime);
    this.#laneOf.delete(sid);
  }

  /** Lifetime (the lane) and absolute expiry of a session, from its cookie. */
  #expiry(data: session.SessionData): { lifetime: number; expires: number } {
    const now = this.#now();
    const cookie = data.cookie as (session.Cookie & { originalMaxAge?: number | null }) | undefined;
    const expiresAt = cookie?.expires ? new Date(cookie.expires).getTime() : NaN;
    const lifetime =
      typeof cookie?.originalMaxAge === 'number' && cookie.originalMaxAge > 0
        ? cookie.originalMaxAge
        : this.#defaultLifetime;
    return { lifetime, expires: Number.isFinite(expiresAt) ? expiresAt : now + lifetime };
  }

  /** Drop the session closest to expiring: the oldest entry of the lane whose oldest expires first. */
  #evictOne(): void {
    let victim: string | undefined;
    let soonest = Infinity;
    for (const lane of this.#lanes.values()) {
      const first = lane.entries().next();
      if (!first.done && first.value[1].expires < soonest) {
        soonest = first.value[1].expires;
        victim = first.value[0];
      }
    }
    if (victim === undefined) return;
    this.#remove(victim);
    this.evicted += 1;
    const now = this.#now();
    if (this.#log && now - this.#lastFullLog >= FULL_LOG_GAP_MS) {
      this.#lastFullLog = now;
      this.#log(
        `Session store: the in-memory limit of ${this.maxSessions} sessions is reached; the sessions closest to expiring are dropped to make room.`,
      );
    }
  }

  #write(sid: string, data: session.SessionData): void {
    const { lifetime, expires } = this.#expiry(data);
    const isNew = !this.#laneOf.has(sid);
    this.#remove(sid); // re-inserted at the end of its lane: the lane stays in expiry order
    if (expires <= this.#now()) return;
    const now = this.#now();
    if (now - this.#lastWriteSweep >= WRITE_SWEEP_GAP_MS) {
      this.#lastWriteSweep = now;
      this.sweep();
    }
    if (isNew) while (this.#laneOf.size >= this.maxSessions) this.#evictOne();
    let lane = this.#lanes.get(lifetime);
    if (!lane) {
      lane = new Map();
      this.#lanes.set(lifetime, lane);
    }
    lane.set(sid, { json: JSON.stringify(data), expires });
    this.#laneOf.set(sid, lifetime);
  }

  override get(sid: string, cb: Callback<session.SessionData | null>): void {
    const entry = this.#find(sid);
    if (entry && entry.expires <= this.#now()) {
      this.#remove(sid);
      this.expired += 1;
    }
    const live = entry && entry.expires > this.#now() ? entry : undefined;
    let data: session.SessionData | null = null;
    try {
      data = live ? (JSON.parse(live.json) as session.SessionData) : null;
    } catch (err) {
      setImmediate(cb, err);
      return;
    }
    setImmediate(cb, null, data);
  }

  override set(sid: string, data: session.SessionData, cb?: (err?: unknown) => void): void {
    try {
      this.#write(sid, data);
    } catch (err) {
      if (cb) setImmediate(cb, err);
      return;
    }
    if (cb) setImmediate(cb);
  }

  override touch(sid: string, data: session.SessionData, cb?: (err?: unknown) => void): void {
    const entry = this.#find(sid);
    if (entry && entry.expires > this.#now()) {
      try {
        const stored = JSON.parse(entry.json) as session.SessionData;
        stored.cookie = data.cookie;
        this.#write(sid, stored);
      } catch (err) {
        if (cb) setImmediate(cb, err);
        return;
      }
    }
    if (cb) setImmediate(cb);
  }

  override destroy(sid: string, cb?: (err?: unknown) => void): void {
    this.#remove(sid);
    if (cb) setImmediate(cb);
  }

  override all(cb: Callback<session.SessionData[] | { [sid: string]: session.SessionData } | null>): void {
    this.sweep();
    const all: Record<string, session.SessionData> = {};
    for (const lane of this.#lanes.values()) {
      for (const [sid, entry] of lane) all[sid] = JSON.parse(entry.json) as session.SessionData;
    }
    setImmediate(cb, null, all);
  }

  override length(cb: Callback<number>): void {
    this.sweep();
    setImmediate(cb, null, this.#laneOf.size);
  }

  override clear(cb?: (err?: unknown) => void): void {
    this.#lanes.clear();
    this.#laneOf.clear();
    if (cb) setImmediate(cb);
  }
}
