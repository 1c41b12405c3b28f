/**
 * The Host header as it may be shown or kept: the requester writes it, so it is length-checked
 * first and matched with fixed-size patterns (no backtracking); anything else is a placeholder.
 */

/** Longest host kept or shown: a 253-character name, `:` and a 5-digit port, or a bracketed IPv6 address with its port. */
export const MAX_DISPLAY_HOST_LENGTH = 260;

/** What is shown in place of a Host header that is not a well-formed host. */
export const UNRECOGNISED_HOST = 'an unrecognised host';

const LABEL = /^[A-Za-z0-9-]{1,63}$/;
const PORT = /^[0-9]{1,5}$/;
const IPV6 = /^\[[0-9A-Fa-f:.]{2,45}\]$/;

/** True when `name` is labels of `[A-Za-z0-9-]{1,63}` joined by dots (one trailing dot allowed). */
function isHostName(name: string): boolean {
  const labels = name.split('.');
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop();
  return labels.every((label) => LABEL.test(label));
}

/**
 * `host` when it is a host name, IPv4 or bracketed IPv6 address with an optional port, at most
 * {@link MAX_DISPLAY_HOST_LENGTH} characters; otherwise `undefined`.
 */
export function wellFormedHost(host: string | undefined): string | undefined {
  if (typeof host !== 'string' || host.length === 0 || host.length > MAX_DISPLAY_HOST_LENGTH) return undefined;
  let name = host;
  const bracket = host.lastIndexOf(']');
  const colon = host.lastIndexOf(':');
  if (colon > bracket) {
    if (!PORT.test(host.slice(colon + 1))) return undefined;
    name = host.slice(0, colon);
  }
  if (name.startsWith('[')) return IPV6.test(name) ? host : undefined;
  return isHostName(name) ? host : undefined;
}

/** A host as it may be shown: a well-formed host (see {@link wellFormedHost}), else a placeholder. */
export function displayHost(host: string | undefined): string {
  return wellFormedHost(host) ?? UNRECOGNISED_HOST;
}
