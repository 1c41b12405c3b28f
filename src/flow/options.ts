/** Checks of the login flow's options; each mistake is a TypeError naming the option and the fix. */

import { systemClock, type Clock } from '../clock.js';
import { optionError } from '../options-check.js';

export { optionError };

/** `scope` when it is a space-separated string or an array of names that includes `openid`. */
export function checkScope(scope: unknown, who: string, option: string): string | string[] {
  const list =
    typeof scope === 'string'
      ? scope.split(' ').filter(Boolean)
      : Array.isArray(scope) && scope.every((s) => typeof s === 'string')
        ? (scope as string[])
        : undefined;
  if (list === undefined) {
    throw optionError(
      who,
      option,
      'must be a space-separated string or an array of scope names, like "openid profile.name".',
    );
  }
  if (!list.includes('openid')) throw optionError(who, option, 'must include "openid", like "openid profile.name".');
  return scope as string | string[];
}

/** `value` when it is an absolute http(s) URL. */
export function checkAbsoluteUrl(value: unknown, who: string, option: string): string {
  let url: URL | undefined;
  if (typeof value === 'string') {
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
  }
  if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw optionError(
      who,
      option,
      'must be the absolute http(s) URL registered with the service, like "https://app.example/auth/callback".',
    );
  }
  return value as string;
}

/** A whole number from `min` to `max`, else a TypeError saying `what`. */
export function checkInteger(
  value: unknown,
  min: number,
  max: number,
  who: string,
  option: string,
  what: string,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw optionError(who, option, what);
  }
  return value;
}

/** A duration in ms of at least 1000, else a TypeError that says the unit. */
export function checkMilliseconds(value: unknown, who: string, option: string, example: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 1000) {
    throw optionError(who, option, `is in milliseconds and must be at least 1000; got ${String(value)} (${example}).`);
  }
  return value;
}

/** The `clock` option: a function returning ms since the epoch, or the system clock when left out. */
export function checkClock(value: unknown, who: string): Clock {
  if (value === undefined) return systemClock;
  if (typeof value !== 'function') {
    throw optionError(who, 'clock', 'must be a function returning the time in ms since the epoch.');
  }
  return value as Clock;
}
