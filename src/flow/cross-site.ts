/**
 * Whether a state-changing request (a sign-out) came from another site, from its headers alone,
 * for every adapter. A browser's `Sec-Fetch-Site` (which pages cannot set) decides when present:
 * only `same-origin` and `none` (typed or bookmarked) pass, so a page sent with
 * `Referrer-Policy: no-referrer`, whose own posts carry `Origin: null`, can still sign out.
 * Without it, an `Origin` header must name this host.
 */

/** The headers that decide, as the request carried them. */
export interface CrossSiteHeaders {
  /** `Sec-Fetch-Site`, when sent. */
  fetchSite?: string | undefined;
  /** `Origin`, when sent. */
  origin?: string | undefined;
  /** This app's host (with port) as the request reached it. */
  host: string | undefined;
}

/** True when the request is not provably from this site. */
export function isCrossSite(headers: CrossSiteHeaders): boolean {
  if (headers.fetchSite !== undefined) {
    const site = headers.fetchSite.trim().toLowerCase();
    return site !== 'same-origin' && site !== 'none';
  }
  if (headers.origin === undefined) return false;
  let originUrl: URL;
  let ownUrl: URL;
  try {
    originUrl = new URL(headers.origin);
    // Parsed with the Origin's scheme, so default ports compare equal (":443" and none).
    ownUrl = new URL(`${originUrl.protocol}//${headers.host ?? ''}`);
  } catch {
    return true; // "null", garbage, or no Host: not provably our own site.
  }
  if (originUrl.protocol !== 'https:' && originUrl.protocol !== 'http:') return true;
  return originUrl.host.toLowerCase() !== ownUrl.host.toLowerCase();
}
