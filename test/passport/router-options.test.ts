import { describe, expect, it } from 'vitest';
import passport from 'passport';
import { crossSiteRefusal, type CrossSiteHeaders } from '../../src/flow/cross-site.js';
import { ndIdRouter, type NdIdRouterOptions } from '../../src/passport/router.js';

describe('ndIdRouter options', () => {
  it('builds a router with the defaults', () => {
    expect(typeof ndIdRouter()).toBe('function');
  });

  it.each([
    ['strategyName', { strategyName: '' }],
    ['passport', { passport: {} }],
    ['routes', { routes: 'login' }],
    ['routes.login', { routes: { login: 'login' } }],
    ['routes.callback', { routes: { callback: true } }],
    ['routes.logout', { routes: { logout: '' } }],
    ['successRedirect', { successRedirect: '' }],
    ['failureRedirect', { failureRedirect: 5 }],
    ['logoutRedirect', { logoutRedirect: null }],
    ['sessionCookieName', { sessionCookieName: '' }],
    ['afterCallback', { afterCallback: 'enrich' }],
    ['errorPage', { errorPage: 'yes' }],
  ])('throws a TypeError naming %s when it is wrong', (option, options) => {
    const build = () => ndIdRouter(options as unknown as NdIdRouterOptions);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(`ndIdRouter: ${option} `);
  });

  it('accepts a separate Passport instance and routes turned off', () => {
    expect(() =>
      ndIdRouter({ passport: new passport.Passport(), routes: { login: false, callback: '/cb', logout: false } }),
    ).not.toThrow();
  });
});

/** The facts the sign-out route reads of a POST: its Sec-Fetch-Site, Origin and Host. */
function post(host: string, headers: Record<string, string>): CrossSiteHeaders {
  return { host, method: 'POST', fetchSite: headers['Sec-Fetch-Site'], origin: headers.Origin };
}

function isCrossSite(facts: CrossSiteHeaders): boolean {
  return crossSiteRefusal(facts) !== undefined;
}

describe('crossSiteRefusal (logout CSRF check)', () => {
  it.each([
    ['no Origin and no Sec-Fetch-Site (older browsers, curl)', 'app.example', {}],
    ['Sec-Fetch-Site: same-origin', 'app.example', { 'Sec-Fetch-Site': 'same-origin' }],
    ['Sec-Fetch-Site: none (typed by the user)', 'app.example', { 'Sec-Fetch-Site': 'none' }],
    ['its own Origin', 'app.example', { Origin: 'https://app.example' }],
    ['its own Origin with the default port written out', 'app.example:443', { Origin: 'https://app.example' }],
    ['its own Origin and port', '127.0.0.1:4000', { Origin: 'http://127.0.0.1:4000' }],
    [
      'Origin: null from its own no-referrer page, vouched for by Sec-Fetch-Site: same-origin',
      'app.example',
      { 'Sec-Fetch-Site': 'same-origin', Origin: 'null' },
    ],
  ])('accepts a request with %s', (_name, host, headers) => {
    expect(isCrossSite(post(host, headers))).toBe(false);
  });

  it.each([
    ['Sec-Fetch-Site: cross-site', 'app.example', { 'Sec-Fetch-Site': 'cross-site' }],
    [
      'Sec-Fetch-Site: cross-site even with a matching Origin',
      'app.example',
      { 'Sec-Fetch-Site': 'cross-site', Origin: 'https://app.example' },
    ],
    ['another Origin', 'app.example', { Origin: 'https://evil.example' }],
    ['an Origin on another port', '127.0.0.1:4000', { Origin: 'http://127.0.0.1:4001' }],
    ['Sec-Fetch-Site: same-site (a sibling subdomain)', 'app.example', { 'Sec-Fetch-Site': 'same-site' }],
    ['an unknown Sec-Fetch-Site value', 'app.example', { 'Sec-Fetch-Site': 'weird' }],
    ['a look-alike Origin', 'app.example', { Origin: 'https://app.example.evil.example' }],
    ['Origin: null (sandboxed frame, data: URL)', 'app.example', { Origin: 'null' }],
    ['a malformed Origin', 'app.example', { Origin: 'not a url' }],
    ['a non-http Origin', 'app.example', { Origin: 'file://app.example' }],
  ])('refuses a request with %s', (_name, host, headers) => {
    expect(isCrossSite(post(host, headers))).toBe(true);
  });
});
