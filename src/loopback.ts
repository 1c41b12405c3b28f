/**
 * The one loopback test of the package: the relying party's `hostname`, the provider's
 * callback URLs and FAPI `jwksUri`, and `nd-id-provider init` all ask it whether plain `http:`
 * may be used for a host. Only a host that cannot leave this machine counts: `localhost`, a
 * whole dotted quad `127.x.y.z`, and `::1`. A name that merely starts like one
 * (`127.0.0.1.attacker.example`) is a remote host.
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
