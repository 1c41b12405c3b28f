/**
 * Whether a state-changing request (a sign-out) came from another site, from its headers alone,
 * for every adapter. A browser's `Sec-Fetch-Site` (which pages cannot set) decides when present:
 * only `same-origin` and `none` (typed or bookmarked) pass, so a page sent with
 * `Referrer-Policy: no-referrer`, whose own posts carry `Origin: null`, can still sign out.
 *
 * Without it, the method matters. Every browser sends `Origin` on a POST from another site, so
 * a POST without `Sec-Fetch-Site` passes only when its `Origin` names this scheme and host, or when it has
 * no `Origin` at all (not a browser acting for another site: curl, a test client). A GET (or any
 * other method) carries no `Origin` on a cross-site navigation, and browsers without fetch
 * metadata (Safari before 16.4) send neither header then: a GET passes only with
 * `Sec-Fetch-Site: same-origin` or `none`. Offer sign-out as a POST form to reach everyone.
 */
import type { FailurePage } from './failure-page.js';

/** The headers that decide, as the request carried them. */
export interface CrossSiteHeaders {
  /** `Sec-Fetch-Site`, when sent. */
  fetchSite?: string | undefined;
  /** `Origin`, when sent. */
  origin?: string | undefined;
  /** This app's host (with port) as the request reached it. */
  host: string | undefined;
  /**
   * This app's scheme as the request reached it (`'https:'` or `'http:'`), when known: then the
   * `Origin` must have the same scheme as well as the same host.
   */
  protocol?: string | undefined;
  /** The request method. Default `'POST'`; any other method needs `Sec-Fetch-Site`. */
  method?: string | undefined;
}

/**
 * Why a sign-out was refused: `signout_cross_site` (the browser said, or the `Origin` shows, it
 * came from another site) or `signout_fetch_metadata_missing` (a GET without `Sec-Fetch-Site`,
 * which cannot be told apart from a cross-site link).
 */
export type CrossSiteRefusal = 'signout_cross_site' | 'signout_fetch_metadata_missing';

/** Why the request is not provably from this site, or `undefined` when it is. */
export function crossSiteRefusal(headers: CrossSiteHeaders): CrossSiteRefusal | undefined {
  if (headers.fetchSite !== undefined) {
    const site = headers.fetchSite.trim().toLowerCase();
    return site === 'same-origin' || site === 'none' ? undefined : 'signout_cross_site';
  }
  if ((headers.method ?? 'POST').toUpperCase() !== 'POST') return 'signout_fetch_metadata_missing';
  if (headers.origin === undefined) return undefined;
  let originUrl: URL;
  let ownUrl: URL;
  try {
    originUrl = new URL(headers.origin);
    // Parsed with the Origin's scheme, so default ports compare equal (":443" and none).
    ownUrl = new URL(`${originUrl.protocol}//${headers.host ?? ''}`);
  } catch {
    return 'signout_cross_site'; // "null", garbage, or no Host: not provably our own site.
  }
  if (originUrl.protocol !== 'https:' && originUrl.protocol !== 'http:') return 'signout_cross_site';
  // Another scheme is another origin: a page on http://app.example (a network attacker can
  // write one) must not sign out of https://app.example.
  if (headers.protocol !== undefined && originUrl.protocol !== headers.protocol.toLowerCase()) return 'signout_cross_site';
  return originUrl.host.toLowerCase() === ownUrl.host.toLowerCase() ? undefined : 'signout_cross_site';
}

const FIXES: Readonly<Record<CrossSiteRefusal, { cause: string; fix: string }>> = {
  signout_cross_site: {
    cause: 'The sign-out request came from another site (Sec-Fetch-Site or Origin said so), so it was refused.',
    fix: 'Sign out with a form on this site: <form method="post" action="…/logout">.',
  },
  signout_fetch_metadata_missing: {
    cause: 'A sign-out by GET came without Sec-Fetch-Site, so it cannot be told apart from a link on another site (older browsers send no fetch metadata).',
    fix: 'Sign out with a POST form on this site; a GET sign-out works only in browsers that send Sec-Fetch-Site.',
  },
};

/** The 403 page of a refused sign-out; the developer box (cause, fix, code) only when `developer` is true. */
export function signOutRefusedPage(refusal: CrossSiteRefusal, developer: boolean): FailurePage {
  return {
    status: 403,
    title: 'Sign-out refused',
    message: 'This sign-out request came from another site, or could not be shown to come from this one, so it was refused. Use the sign-out button on this site.',
    ...(developer ? { developer: { code: refusal, ...FIXES[refusal] } } : {}),
  };
}
