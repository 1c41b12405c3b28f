/**
 * The provider's clock, movable forward by tests: every expiry (pending authorizations, codes,
 * access tokens) and every time claim it signs reads it, so a test can make them lapse without
 * waiting. The same function can be handed to a relying party as its `clock` option.
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
