/**
 * The checks of IdClient's options and parameters, each a TypeError that names the option and says
 * what to give; and the small readers of the service's answers. Kept apart from the client itself.
 */
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { IdError } from '../errors.js';
import { importRsaPrivateKeyOrJwk, type DecryptionKey } from '../keys.js';
import { isLoopbackHost } from '../loopback.js';
import type { DpopKey } from './dpop.js';

/**
 * A placeholder origin, as in examples. `hostname` is required and this value is refused: set
 * `hostname` to the origin of the service you are registered with.
 */
export const DEFAULT_HOSTNAME = 'https://id.nd-id.example';
/** Scopes requested when `authorizationUrl` is given none. */
export const DEFAULT_SCOPE = 'openid profile.name';

export function requireDpopKey(key: unknown, fn: string): DpopKey {
  const k = key as Partial<DpopKey> | null | undefined;
  if (typeof k !== 'object' || k === null || typeof k.jkt !== 'string' || typeof k.publicJwk !== 'object' || k.privateKey === undefined) {
    throw new TypeError(`${fn}: dpopKey is required with profile: 'fapi2': give the login's key from dpopKeyForLogin() (or restoreDpopKey())`);
  }
  return key as DpopKey;
}

/** RFC 6750 section 2.1 b64token: what an `Authorization: Bearer` value may hold. */
export const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export function requireString(value: unknown, name: string, fn = 'IdClient'): string {
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(`${fn}: ${name} must be a non-empty string`);
  }
  return value;
}

export function requireHttpUrl(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw new TypeError(`${name} must be a non-empty absolute URL`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError(`${name} must be an absolute http(s) URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new TypeError(`${name} must be an absolute http(s) URL`);
  }
  return value;
}

/** The keys of the `privateKey` option, imported once. */
export function importPrivateKeys(value: unknown): DecryptionKey[] {
  const list = Array.isArray(value) ? (value as unknown[]) : [value];
  if (list.length === 0) {
    throw new TypeError('IdClient: privateKey must be a PEM string or JWK, or a non-empty array of them');
  }
  return list.map((key, i) => {
    const what = Array.isArray(value) ? `IdClient: privateKey[${i}]` : 'IdClient: privateKey';
    if (typeof key === 'string' ? key.trim() === '' : typeof key !== 'object' || key === null) {
      throw new TypeError(`${what} must be a non-empty PEM string (PKCS#1 or PKCS#8 RSA private key) or an RSA private JWK`);
    }
    return importRsaPrivateKeyOrJwk(key as string, what);
  });
}

/** True for `localhost`, a whole dotted quad in 127.0.0.0/8 and `[::1]`: the package's one loopback test. */
export { isLoopbackHost };

/** `https://host[:port]` from `hostname`, which may end in one slash but has no path or query. */
export function parseHostname(value: unknown, allowInsecureHttp: boolean): string {
  if (value === undefined || value === '') {
    throw new TypeError(
      'IdClient: hostname is required: set it to the origin of the service you are registered with, like https://id.example',
    );
  }
  const fail = (): never => {
    throw new TypeError('IdClient: hostname must be the http(s) origin of the service, like https://id.example (no path or query)');
  };
  if (typeof value !== 'string' || value === '') return fail();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return fail();
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return fail();
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    return fail();
  }
  if (value.includes('?') || value.includes('#')) return fail();
  if (url.origin === DEFAULT_HOSTNAME) {
    throw new TypeError(
      `IdClient: hostname is the placeholder ${DEFAULT_HOSTNAME}; set it to the origin of the service you are registered with`,
    );
  }
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new TypeError(
      `IdClient: hostname ${url.origin} is plain http: on a host that is not loopback, so client secrets and tokens would ` +
        'cross the network unencrypted; use the https: origin of the service (or, on a closed test network only, set allowInsecureHttp: true)',
    );
  }
  return url.origin;
}

export function optionalNumber(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new TypeError(`IdClient: ${name} must be a finite number of at least ${min}`);
  }
  return value;
}

export function optionalClock(value: unknown): Clock {
  if (value === undefined) return systemClock;
  if (typeof value !== 'function') throw new TypeError('IdClient: clock must be a function returning ms since the epoch');
  return value as Clock;
}

export function normalizeScope(scope: string | string[] | undefined): string {
  let list: string[];
  if (scope === undefined) list = DEFAULT_SCOPE.split(' ');
  else if (typeof scope === 'string') list = scope.split(/\s+/).filter((s) => s !== '');
  else if (Array.isArray(scope) && scope.every((s) => typeof s === 'string' && s !== '' && !/\s/.test(s))) list = scope;
  else throw new TypeError('authorizationUrl: scope must be a space-separated string or an array of scope names');
  if (!list.includes('openid')) throw new TypeError('authorizationUrl: scope must include "openid"');
  return [...new Set(list)].join(' ');
}

export function asObject(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new IdError('provider_invalid_response', `The ${what} answered with JSON that is not an object.`);
  }
  return body as Record<string, unknown>;
}
