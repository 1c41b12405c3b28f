/**
 * The message for an unregistered `redirect_uri`: the URI sent, the registered ones, and the likely
 * slip (`localhost` for `127.0.0.1`, a trailing slash, the scheme, the port). Escaped by the page.
 */

import { withoutTrailingSlashes } from './trailing-slashes.js';

/** Longest part of a URI repeated back; longer ones are cut with an ellipsis. */
const MAX_SHOWN = 200;
/** Most registered URIs listed. */
const MAX_LISTED = 5;

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function shown(uri: string): string {
  return uri.length > MAX_SHOWN ? `${uri.slice(0, MAX_SHOWN)}…` : uri;
}

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** The one difference between `sent` and `registered` worth pointing at, if there is one. */
function slipBetween(sent: URL, registered: URL): string | undefined {
  const same = (a: URL, b: URL, ...parts: Array<'protocol' | 'hostname' | 'port' | 'pathname' | 'search'>): boolean =>
    parts.every((p) => a[p] === b[p]);
  if (sent.hostname !== registered.hostname && same(sent, registered, 'protocol', 'port', 'pathname', 'search')) {
    const both = LOOPBACK_NAMES.has(sent.hostname) && LOOPBACK_NAMES.has(registered.hostname);
    return both
      ? `the host differs: ${sent.hostname} was sent, ${registered.hostname} is registered (they are different origins; use the same name in the app's callback URL and in the registration)`
      : `the host differs: ${sent.hostname} was sent, ${registered.hostname} is registered`;
  }
  if (sent.port !== registered.port && same(sent, registered, 'protocol', 'hostname', 'pathname', 'search')) {
    return `the port differs: ${sent.port || '(default)'} was sent, ${registered.port || '(default)'} is registered`;
  }
  if (sent.protocol !== registered.protocol && same(sent, registered, 'hostname', 'port', 'pathname', 'search')) {
    return `the scheme differs: ${sent.protocol.slice(0, -1)} was sent, ${registered.protocol.slice(0, -1)} is registered`;
  }
  if (
    sent.pathname !== registered.pathname &&
    withoutTrailingSlashes(sent.pathname) === withoutTrailingSlashes(registered.pathname) &&
    same(sent, registered, 'protocol', 'hostname', 'port', 'search')
  ) {
    return 'only a trailing slash differs (the match is exact)';
  }
  return undefined;
}

/** The sentence for an unregistered `sent` URI, given the client's registered ones. */
export function describeRedirectUriMismatch(sent: string, registered: Iterable<string>): string {
  const list = [...registered];
  const listed =
    list.slice(0, MAX_LISTED).map(shown).join(', ') +
    (list.length > MAX_LISTED ? `, and ${list.length - MAX_LISTED} more` : '');
  const sentUrl = parse(sent);
  let slip: string | undefined;
  if (sentUrl) {
    for (const uri of list) {
      const url = parse(uri);
      slip = url ? slipBetween(sentUrl, url) : undefined;
      if (slip) break;
    }
  }
  return (
    `The redirect_uri is not registered for this client (it must match exactly). Sent: ${shown(sent)}. ` +
    `Registered: ${listed}.${slip ? ` Likely cause: ${slip}.` : ''}`
  );
}
