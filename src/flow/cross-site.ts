/**
 * Whether a sign-out came from another site, from its headers alone. `Sec-Fetch-Site` decides
 * when present (`same-origin` and `none` pass; a `no-referrer` page posts `Origin: null`).
 * Without it: a POST passes with a same-origin `Origin` or none (not a browser acting for another
 * site); a GET cannot be told from a cross-site link (no `Origin`, and Safari before 16.4 sends
 * no fetch metadata), so it is refused. Offer sign-out as a POST form.
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
  /** This app's scheme (`'https:'` or `'http:'`), when known: the `Origin` must match it too. */
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
  if (headers.protocol !== undefined && originUrl.protocol !== headers.protocol.toLowerCase())
    return 'signout_cross_site';
  return originUrl.host.toLowerCase() === ownUrl.host.toLowerCase() ? undefined : 'signout_cross_site';
}

const FIXES: Readonly<Record<CrossSiteRefusal, { cause: string; fix: string }>> = {
  signout_cross_site: {
    cause: 'The sign-out request came from another site (Sec-Fetch-Site or Origin said so), so it was refused.',
    fix: 'Sign out with a form on this site: <form method="post" action="…/logout">.',
  },
  signout_fetch_metadata_missing: {
    cause:
      'A sign-out by GET came without Sec-Fetch-Site, so it cannot be told apart from a link on another site (older browsers send no fetch metadata).',
    fix: 'Sign out with a POST form on this site; a GET sign-out works only in browsers that send Sec-Fetch-Site.',
  },
};

/** The 403 page of a refused sign-out; the developer box (cause, fix, code) only when `developer` is true. */
export function signOutRefusedPage(refusal: CrossSiteRefusal, developer: boolean): FailurePage {
  return {
    status: 403,
    title: 'Sign-out refused',
    message:
      'This sign-out request came from another site, or could not be shown to come from this one, so it was refused. Use the sign-out button on this site.',
    ...(developer ? { developer: { code: refusal, ...FIXES[refusal] } } : {}),
  };
}
