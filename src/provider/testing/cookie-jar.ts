/**
 * A small cookie jar for `signIn` (RFC 6265, the parts a sign-in meets): host-only unless `Domain`
 * names a parent (never an IP), scoped by `Path`, expired by `Max-Age`/`Expires`; ports do not
 * separate cookies, and `Secure` ones go over http to loopback, as browsers do.
 */

import { isLoopbackHost } from '../../loopback.js';

/** One stored cookie. */
export interface StoredCookie {
  name: string;
  value: string;
  /** The host it belongs to (host-only) or the domain it covers. */
  domain: string;
  hostOnly: boolean;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  /** Expiry, ms since the epoch; undefined for a session cookie. */
  expires: number | undefined;
}

const IP_V4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

function isIp(host: string): boolean {
  return IP_V4.test(host) || host.startsWith('[');
}

/** RFC 6265 5.1.4: the default path of a cookie set by `url`. */
function defaultPath(url: URL): string {
  const path = url.pathname;
  if (!path.startsWith('/') || path.lastIndexOf('/') === 0) return '/';
  return path.slice(0, path.lastIndexOf('/'));
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

function domainMatches(host: string, cookie: StoredCookie): boolean {
  if (cookie.hostOnly) return host === cookie.domain;
  return host === cookie.domain || (!isIp(host) && host.endsWith(`.${cookie.domain}`));
}

/** The cookies of a run of requests, as a browser would keep them. */
export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Store the `Set-Cookie` header values of a response to `url`. Malformed or foreign-domain ones are ignored. */
  store(url: string | URL, setCookies: readonly string[]): void {
    const at = new URL(url);
    const host = at.hostname.toLowerCase();
    for (const header of setCookies) {
      const [pair = '', ...attributes] = header.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      let domain = host;
      let hostOnly = true;
      let path = defaultPath(at);
      let secure = false;
      let httpOnly = false;
      let expires: number | undefined;
      let maxAge: number | undefined;
      let foreign = false;
      for (const attribute of attributes) {
        const [rawKey = '', ...rest] = attribute.split('=');
        const key = rawKey.trim().toLowerCase();
        const v = rest.join('=').trim();
        if (key === 'domain' && v !== '') {
          const d = v.replace(/^\./, '').toLowerCase();
          if (d === host) hostOnly = isIp(host);
          else if (!isIp(host) && host.endsWith(`.${d}`)) hostOnly = false;
          else foreign = true;
          domain = hostOnly ? host : d;
        } else if (key === 'path' && v.startsWith('/')) path = v;
        else if (key === 'secure') secure = true;
        else if (key === 'httponly') httpOnly = true;
        else if (key === 'max-age' && /^-?\d+$/.test(v)) maxAge = Number(v);
        else if (key === 'expires') {
          const t = Date.parse(v);
          if (!Number.isNaN(t)) expires = t;
        }
      }
      if (foreign) continue;
      if (maxAge !== undefined) expires = this.now() + maxAge * 1000;
      const id = `${domain}\0${path}\0${name}`;
      if (expires !== undefined && expires <= this.now()) {
        this.#cookies.delete(id);
        continue;
      }
      this.#cookies.set(id, { name, value, domain, hostOnly, path, secure, httpOnly, expires });
    }
  }

  /** The cookies a browser would send to `url`, longest path first. */
  cookiesFor(url: string | URL): StoredCookie[] {
    const at = new URL(url);
    const host = at.hostname.toLowerCase();
    const secureContext = at.protocol === 'https:' || isLoopbackHost(host);
    const now = this.now();
    const out: StoredCookie[] = [];
    for (const [id, cookie] of this.#cookies) {
      if (cookie.expires !== undefined && cookie.expires <= now) {
        this.#cookies.delete(id);
        continue;
      }
      if (!domainMatches(host, cookie) || !pathMatches(at.pathname, cookie.path)) continue;
      if (cookie.secure && !secureContext) continue;
      out.push(cookie);
    }
    return out.sort((a, b) => b.path.length - a.path.length);
  }

  /** The `Cookie` header for `url`, or `''` when no cookie applies. */
  header(url: string | URL): string {
    return this.cookiesFor(url)
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
  }

  /** Every cookie held. */
  all(): StoredCookie[] {
    return [...this.#cookies.values()];
  }
}
