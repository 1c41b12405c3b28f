/** Checks of IdClient's options (TypeErrors naming the option and the fix) and readers of the service's answers. */
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import { IdError } from '../errors.js';
import { importRsaPrivateKeyOrJwk, rsaThumbprint, type DecryptionKey } from '../keys.js';
import { checkDecrypter, isDecrypterReference } from '../jose/key-reference.js';
import { isLoopbackHost } from '../loopback.js';
import type { DpopKey } from './dpop.js';

/** A placeholder origin, as in examples; refused, so an app must name the service it is registered with. */
export const DEFAULT_HOSTNAME = 'https://id.nd-id.example';
/** Scopes requested when `authorizationUrl` is given none. */
export const DEFAULT_SCOPE = 'openid profile.name';

export function requireDpopKey(key: unknown, fn: string): DpopKey {
  const k = key as Partial<DpopKey> | null | undefined;
  if (
    typeof k !== 'object' ||
    k === null ||
    typeof k.jkt !== 'string' ||
    typeof k.publicJwk !== 'object' ||
    k.privateKey === undefined
  ) {
    throw new TypeError(
      `${fn}: dpopKey is required with profile: 'fapi2': give the login's key from dpopKeyForLogin() (or restoreDpopKey())`,
    );
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
    if (isDecrypterReference(key)) {
      const { decrypter, publicKey, kid } = checkDecrypter(key, what, true);
      return { key: publicKey, remote: decrypter, kid, thumbprint: rsaThumbprint(publicKey) };
    }
    if (typeof key === 'string' ? key.trim() === '' : typeof key !== 'object' || key === null) {
      throw new TypeError(
        `${what} must be a non-empty PEM string (PKCS#1 or PKCS#8 RSA private key) or an RSA private JWK (an object or its JSON text)`,
      );
    }
    return importRsaPrivateKeyOrJwk(key as string, what);
  });
}

/** True for `localhost`, a whole dotted quad in 127.0.0.0/8 and `[::1]`: the package's one loopback test. */
export { isLoopbackHost };

/** `https://host[:port]` from `hostname`, which may end in one slash but has no path or query. */
function parseHostname(value: unknown, allowInsecureHttp: boolean): string {
  if (value === undefined || value === '') {
    throw new TypeError(
      'IdClient: hostname is required: set it to the origin of the service you are registered with, like https://id.example',
    );
  }
  const fail = (): never => {
    throw new TypeError(
      'IdClient: hostname must be the http(s) origin of the service, like https://id.example (no path or query)',
    );
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
  if (typeof value !== 'function')
    throw new TypeError('IdClient: clock must be a function returning ms since the epoch');
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

/** The issuer a client is configured for, and how it was given. */
export interface ParsedIssuer {
  /** Exactly as ID tokens and the discovery document name it. */
  issuer: string;
  /** Its origin. */
  origin: string;
  /** True when given as `hostname` (the service of the spec: `{hostname}/v2`). */
  byHostname: boolean;
}

/**
 * The issuer from `issuer` (a URL that may carry a path) or `hostname` (shorthand for
 * `{hostname}/v2`): exactly one of them.
 */
export function parseIssuer(issuer: unknown, hostname: unknown, allowInsecureHttp: boolean): ParsedIssuer {
  if (issuer === undefined) {
    const origin = parseHostname(hostname, allowInsecureHttp);
    return { issuer: `${origin}/v2`, origin, byHostname: true };
  }
  if (hostname !== undefined) {
    throw new TypeError(
      'IdClient: give either issuer or hostname, not both (hostname is shorthand for issuer: hostname + "/v2")',
    );
  }
  const fail = (): never => {
    throw new TypeError(
      "IdClient: issuer must be the provider's issuer URL exactly as its discovery document names it, like https://login.example/oidc (https, no query or fragment)",
    );
  };
  if (typeof issuer !== 'string' || issuer === '' || issuer.includes('?') || issuer.includes('#')) return fail();
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return fail();
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '')
    return fail();
  if (url.origin === DEFAULT_HOSTNAME) {
    throw new TypeError(
      `IdClient: issuer is on the placeholder ${DEFAULT_HOSTNAME}; set it to the issuer of the provider you are registered with`,
    );
  }
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new TypeError(
      `IdClient: issuer ${issuer} is plain http: on a host that is not loopback, so tokens would cross the network unencrypted; ` +
        'use the https: issuer (or, on a closed test network only, set allowInsecureHttp: true)',
    );
  }
  return { issuer, origin: url.origin, byHostname: false };
}

/** The ID-token signature algorithms this client can be told to accept. */
export const KNOWN_ID_TOKEN_ALGORITHMS: readonly string[] = ['RS256', 'PS256', 'ES256', 'EdDSA'];
/** Default of `idTokenSigningAlgorithms` in the base profile: the spec's RS256. */
export const BASE_ID_TOKEN_ALGORITHMS: readonly string[] = ['RS256'];
/** Default of `idTokenSigningAlgorithms` with `profile: 'fapi2'`: the algorithms FAPI 2.0 section 5.4.1 allows. */
export const FAPI_ID_TOKEN_ALGORITHMS: readonly string[] = ['PS256', 'ES256', 'EdDSA'];

/** The `idTokenSigningAlgorithms` option, or the profile's default. */
export function parseIdTokenAlgorithms(value: unknown, fapi: boolean): readonly string[] {
  if (value === undefined) return fapi ? FAPI_ID_TOKEN_ALGORITHMS : BASE_ID_TOKEN_ALGORITHMS;
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((a) => typeof a === 'string' && KNOWN_ID_TOKEN_ALGORITHMS.includes(a))
  ) {
    throw new TypeError(
      `IdClient: idTokenSigningAlgorithms must be a non-empty array of ${KNOWN_ID_TOKEN_ALGORITHMS.join(', ')} ` +
        `(default ${fapi ? FAPI_ID_TOKEN_ALGORITHMS.join(', ') : BASE_ID_TOKEN_ALGORITHMS.join(', ')}); never none or an HMAC algorithm`,
    );
  }
  return Object.freeze([...new Set(value as string[])]);
}

/**
 * The algorithms both this app accepts and the provider signs with (its
 * `id_token_signing_alg_values_supported`, when it lists one), in the app's order.
 * @throws IdError `id_token_alg_not_allowed` (reason `no_common_algorithm`) when none is left.
 */
export function commonAlgorithms(
  allowed: readonly string[],
  advertised: readonly string[] | undefined,
): readonly string[] {
  if (advertised === undefined) return allowed;
  const common = allowed.filter((a) => advertised.includes(a));
  if (common.length === 0) {
    const offered =
      advertised
        .filter((a) => /^[\w-]{1,20}$/.test(a))
        .slice(0, 10)
        .join(', ') || 'none';
    throw new IdError(
      'id_token_alg_not_allowed',
      `None of the ID-token algorithms this app accepts (idTokenSigningAlgorithms: ${allowed.join(', ')}) is in the provider's ` +
        `id_token_signing_alg_values_supported (${offered}); add one the provider signs with to idTokenSigningAlgorithms, or register the client for one of yours.`,
      { reason: 'no_common_algorithm' },
    );
  }
  return common;
}

/**
 * The algorithms a userinfo JWT may be signed with: the allowlist narrowed to the provider's
 * `userinfo_signing_alg_values_supported` (the whole allowlist when it lists none). Empty when they
 * share none: every userinfo JWT is then refused.
 */
export function userinfoAlgorithms(
  allowed: readonly string[],
  advertised: readonly string[] | undefined,
): readonly string[] {
  return advertised === undefined ? allowed : allowed.filter((a) => advertised.includes(a));
}

/** Authorization parameters the client sets itself; an extra parameter may never replace one. */
const RESERVED_PARAMS: ReadonlySet<string> = new Set([
  'response_type',
  'response_mode',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'dpop_jkt',
  'request',
  'request_uri',
  'max_age',
  'authentication_context_message',
  'authentication_context_type',
  'client_assertion',
  'client_assertion_type',
  'client_secret',
]);

/** Where each reserved parameter is set instead, for the error. */
const RESERVED_HINTS: Readonly<Record<string, string>> = {
  scope: 'the scope option',
  max_age: 'the maxAge option',
  authentication_context_message: 'the authenticationContextMessage option',
  authentication_context_type: 'the authenticationContextType option',
};

/**
 * Extra authorization parameters, checked: names of letters, digits, `_ . -`; values of at most
 * 1000 characters without control characters; never one the client sets itself (PKCE, `state`,
 * `nonce`, `redirect_uri`, `client_id`, `dpop_jkt`, ...).
 * @throws TypeError naming the parameter.
 */
export function checkAuthorizationParams(value: unknown, what: string): [string, string][] {
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `${what} must be an object of parameter names and string values, like { ui_locales: 'en', prompt: 'login' }`,
    );
  }
  const out: [string, string][] = [];
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    if (v === undefined) continue;
    if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(name)) {
      throw new TypeError(
        `${what}: a parameter name must be 1-64 letters, digits, "_", "." or "-", starting with a letter`,
      );
    }
    if (RESERVED_PARAMS.has(name)) {
      const hint = RESERVED_HINTS[name];
      throw new TypeError(
        `${what}: ${name} is set by the client itself and cannot be given here${hint === undefined ? '' : `; use ${hint}`}`,
      );
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (typeof v !== 'string' || v === '' || v.length > 1000 || /[\u0000-\u001f\u007f]/.test(v)) {
      throw new TypeError(`${what}: ${name} must be a non-empty string of at most 1000 characters, on one line`);
    }
    out.push([name, v]);
  }
  return out;
}

/** `value` when it names an authentication context type: 1-64 letters, digits, `_ . : -` (like `APP_AUTHENTICATION_DEFAULT`). */
export function checkContextType(value: unknown, what: string): string {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(value)) {
    throw new TypeError(`${what} must be 1-64 letters, digits, "_", ".", ":" or "-", like APP_AUTHENTICATION_DEFAULT`);
  }
  return value;
}
