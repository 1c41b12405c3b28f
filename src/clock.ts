/** Milliseconds since the epoch; everything that reads the time takes one, so tests move time instead of waiting. */
export type Clock = () => number;

/** The wall clock. */
export const systemClock: Clock = () => Date.now();

/** Seconds since the epoch, as JWT claims count them. */
export function epochSeconds(clock: Clock): number {
  return Math.floor(clock() / 1000);
}
