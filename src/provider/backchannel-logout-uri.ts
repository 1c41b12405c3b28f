/** The check of a client's registered `backchannelLogoutUri` (Back-Channel Logout 1.0, 2.2). */

/** A client's `backchannelLogoutUri` as registered: an absolute `https` URL (or `http` on loopback) without a fragment. */
export function checkBackchannelLogoutUri(
  value: unknown,
  where: string,
  mistakes: string[],
  isLoopbackHost: (host: string) => boolean,
): string | undefined {
  if (value === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    url.hash !== '' ||
    !(url.protocol === 'https:' || (url.protocol === 'http:' && isLoopbackHost(url.hostname)))
  ) {
    mistakes.push(
      `${where}.backchannelLogoutUri must be an absolute https URL (http on a loopback host) without a fragment`,
    );
    return undefined;
  }
  return value as string;
}
