/**
 * One top-level navigation as a browser sends it, for `signIn`. Node's fetch always sends
 * `Sec-Fetch-Mode: cors`, and relying parties that tell a page load from a script's request by
 * the Fetch Metadata headers (mod_auth_openidc, among others) answer such a request 401 instead
 * of starting a login: so the request goes out through node:http, with a navigation's headers.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';

/** The `Accept` of a browser's document request. */
const DOCUMENT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';
/** A current desktop browser's product token: some relying parties look for a browser. */
const BROWSER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 passport-nd-id-signIn';
/** Statuses whose response has no body (a Response refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The site of a host: the host itself for an address, else its last two labels (close enough for tests). */
function siteOf(url: URL): string {
  const host = url.hostname;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return `${url.protocol}//${host}`;
  return `${url.protocol}//${host.split('.').slice(-2).join('.')}`;
}

/**
 * `Sec-Fetch-Site` of a navigation started from a page at `from` that has passed through
 * `chain` (the URLs already requested in its redirects) and now requests `url`.
 */
export function fetchSite(from: URL, chain: readonly URL[], url: URL): 'same-origin' | 'same-site' | 'cross-site' {
  const all = [...chain, url];
  if (all.every((u) => u.origin === from.origin)) return 'same-origin';
  return all.every((u) => siteOf(u) === siteOf(from)) ? 'same-site' : 'cross-site';
}

/** The headers of a top-level navigation to `url` after a click on a page of `from`. */
export function navigationHeaders(from: URL, chain: readonly URL[], url: URL): Record<string, string> {
  return {
    accept: DOCUMENT_ACCEPT,
    'accept-language': 'en-GB,en;q=0.9',
    'sec-fetch-dest': 'document',
    'sec-fetch-mode': 'navigate',
    'sec-fetch-site': fetchSite(from, chain, url),
    'sec-fetch-user': '?1',
    'upgrade-insecure-requests': '1',
    'user-agent': BROWSER_AGENT,
  };
}

/** The node:http response as a fetch `Response` (body read in full; pages of a login are small). */
async function asResponse(res: IncomingMessage): Promise<Response> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
  const status = res.statusCode ?? 502;
  const body = NULL_BODY.has(status) ? null : Buffer.concat(chunks);
  return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
}

/** GET `url` with `headers`, without following a redirect. */
export function navigate(url: URL, headers: Record<string, string>): Promise<Response> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers }, (res) => {
      asResponse(res).then(resolve, reject);
    });
    req.on('error', reject);
    req.end();
  });
}
