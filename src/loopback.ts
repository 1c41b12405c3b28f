/**
 * The package's one loopback test, for whether plain `http:` may be used: only `localhost`, a whole
 * `127.x.y.z` and `::1`; `127.0.0.1.attacker.example` is remote.
 */

/** `127.` and three decimal octets, each 0 to 255 without leading zeros. */
const LOOPBACK_IPV4 = /^127(?:\.(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}$/;

/**
 * True for `localhost` (any case), a whole dotted quad in 127.0.0.0/8, and `[::1]` or `::1`:
 * the hostname as the URL parser writes it (`new URL(u).hostname`).
 */
export function isLoopbackHost(hostname: string): boolean {
  if (typeof hostname !== 'string') return false;
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host === '::1' || LOOPBACK_IPV4.test(host);
}
