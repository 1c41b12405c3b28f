/**
 * A clock tests move forward, so expiries and signed time claims lapse without waiting; it can be
 * the relying party's `clock` too.
 */
import type { Clock } from '../../clock.js';

/** A clock that reads `base` plus an offset that only grows. */
export interface MovableClock {
  /** The current time, in ms since the epoch. */
  readonly now: Clock;
  /** Moves the clock forward by `ms` (a positive number of milliseconds). */
  advance(ms: number): void;
}

/** A {@link MovableClock} over `base`. */
export function movableClock(base: Clock): MovableClock {
  let offset = 0;
  return {
    now: () => base() + offset,
    advance(ms: number): void {
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
        throw new TypeError(`advanceClock: ms must be a positive number of milliseconds; got ${String(ms)}.`);
      }
      offset += ms;
    },
  };
}
