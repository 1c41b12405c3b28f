/**
 * IdClient: the protocol client of spec 4.7 (authorizationUrl, callback, userinfo).
 */
import { systemClock, type Clock } from '../clock.js';
import { IdError } from '../errors.js';
import { importRsaPrivateKeyOrJwk, type DecryptionKey } from '../keys.js';
import { checkLogger, createLog, type Log } from '../log.js';
import { logCallFailure, type Endpoint } from './call-log.js';
import { generateNonce, isPkceString } from '../pkce.js';
import { HttpClient } from './http.js';
import { validateIdToken } from './id-token.js';
import { RemoteKeySet } from './jwks.js';
import type {
  IdTokenClaims,
  AuthorizationUrlParams,
  AuthorizationUrlResult,
  CallbackParams,
  CallbackResult,
  IdClientOptions,
  UserinfoParams,
  UserinfoResult,
} from './types.js';
import { decryptUserinfo } from './userinfo-crypto.js';

/** ID-token failures caused by time: a clock difference with the service can explain them. */
const TIME_CODES: ReadonlySet<string> = new Set(['id_token_expired', 'id_token_issued_in_future', 'id_token_not_yet_valid']);

/**
 * A placeholder origin, as in examples. `hostname` is required and this value is refused: set
 * `hostname` to the origin of the service you are registered with.
 */
export const DEFAULT_HOSTNAME = 'https://id.nd-id.example';
/** Default timeout of each HTTP call to the service, in ms. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default cap on a response body from the service, in bytes (1 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** Default allowed clock skew for `exp` and `iat`, in seconds. */
export const DEFAULT_CLOCK_TOLERANCE_S = 60;
/** Default shortest time between two JWKS refetches caused by an unknown `kid`, in ms. */
export const DEFAULT_JWKS_COOLDOWN_MS = 60_000;
/** Default longest time a fetched JWKS is used before the next lookup refetches it, in ms (10 minutes). */
export const DEFAULT_JWKS_CACHE_MAX_AGE_MS = 600_000;
/** Scopes requested when `authorizationUrl` is given none. */
export const DEFAULT_SCOPE = 'openid profile.name';

/**
 * Client of the national digital identity service for one registered relying party.
 * Create one per process and reuse it: it keeps the imported private key, the provider's key
 * set and keep-alive connections.
 */
export class IdClient {
  /** Client id issued at registration. */
  readonly clientId: string;
  /** Service origin, without a trailing slash. */
  readonly origin: string;
  /** Expected `iss` of ID tokens: `{origin}/v2`. */
  readonly issuer: string;
  readonly #clientSecret: string;
  readonly #privateKeys: readonly DecryptionKey[];
  readonly #log: Log;
  readonly #redirectUri: string | undefined;
  readonly #clock: Clock;
  readonly #clockTolerance: number;
  readonly #http: HttpClient;
  readonly #jwks: RemoteKeySet;
  readonly #tokenUrl: URL;
  readonly #userinfoUrl: URL;

  /**
   * @throws TypeError naming the option when one is missing or ill-typed.
   */
  constructor(options: IdClientOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('IdClient: options must be an object with clientId, clientSecret and privateKey');
    }
    this.clientId = requireString(options.clientId, 'clientId');
    this.#clientSecret = requireString(options.clientSecret, 'clientSecret');
    this.#privateKeys = importPrivateKeys(options.privateKey);
    this.#log = createLog(checkLogger(options.logger, 'IdClient'), 'client');
    this.#redirectUri =
      options.redirectUri === undefined ? undefined : requireHttpUrl(options.redirectUri, 'IdClient: redirectUri');
    if (options.allowInsecureHttp !== undefined && typeof options.allowInsecureHttp !== 'boolean') {
      throw new TypeError('IdClient: allowInsecureHttp must be true or false');
    }
    this.origin = parseHostname(options.hostname, options.allowInsecureHttp === true);
    this.issuer = `${this.origin}/v2`;
    this.#clock = optionalClock(options.clock);
    this.#clockTolerance = optionalNumber(options.clockTolerance, 'clockTolerance', DEFAULT_CLOCK_TOLERANCE_S, 0);
    const timeout = optionalNumber(options.timeout, 'timeout', DEFAULT_TIMEOUT_MS, 1);
    const maxResponseBytes = optionalNumber(options.maxResponseBytes, 'maxResponseBytes', DEFAULT_MAX_RESPONSE_BYTES, 1);
    const cooldown = optionalNumber(options.jwksCooldown, 'jwksCooldown', DEFAULT_JWKS_COOLDOWN_MS, 0);
    const maxAge = optionalNumber(options.jwksCacheMaxAge, 'jwksCacheMaxAge', DEFAULT_JWKS_CACHE_MAX_AGE_MS, 0);
    if (options.agent !== undefined && (typeof options.agent !== 'object' || options.agent === null)) {
      throw new TypeError('IdClient: agent must be an http.Agent or https.Agent');
    }
    this.#http = new HttpClient({ timeout, maxResponseBytes, agent: options.agent });
    this.#tokenUrl = new URL(`${this.issuer}/oauth/token`);
    this.#userinfoUrl = new URL(`${this.issuer}/oauth/userinfo`);
    this.#jwks = new RemoteKeySet({
      http: this.#http,
      url: new URL(`${this.issuer}/.well-known/jwks.json`),
      clock: this.#clock,
      cooldown,
      maxAge,
      log: this.#log,
    });
  }

  /** How many times this client fetched the provider's key set (one in steady state). */
  get jwksFetchCount(): number {
    return this.#jwks.fetchCount;
  }

  /**
   * The URL to send the user's browser to, and the nonce to keep in the session for
   * {@link IdClient.callback}.
   * @throws TypeError when no redirect URI is known, or `codeChallenge`, `scope`, `state` or
   *   `nonce` is ill-formed.
   */
  authorizationUrl(params: AuthorizationUrlParams): AuthorizationUrlResult {
    if (typeof params !== 'object' || params === null) {
      throw new TypeError('authorizationUrl: expected an object with at least codeChallenge');
    }
    if (!isPkceString(params.codeChallenge)) {
      throw new TypeError(
        'authorizationUrl: codeChallenge must be the S256 challenge of the code verifier (43-128 characters of A-Z a-z 0-9 - . _ ~); use generatePkcePair()',
      );
    }
    const redirectUri = this.#pickRedirectUri(params.redirectUri, 'authorizationUrl');
    const scope = normalizeScope(params.scope);
    let nonce: string | undefined;
    if (params.nonce === undefined) nonce = generateNonce();
    else if (params.nonce === null) nonce = undefined;
    else nonce = requireString(params.nonce, 'nonce', 'authorizationUrl');
    const state = params.state === undefined ? undefined : requireString(params.state, 'state', 'authorizationUrl');
    if (params.maxAge !== undefined && (!Number.isInteger(params.maxAge) || params.maxAge < 0)) {
      throw new TypeError('authorizationUrl: maxAge must be a whole number of seconds, 0 or more');
    }

    const query: [string, string][] = [
      ['response_type', 'code'],
      ['client_id', this.clientId],
      ['redirect_uri', redirectUri],
      ['scope', scope],
      ['code_challenge', params.codeChallenge],
      ['code_challenge_method', 'S256'],
    ];
    if (state !== undefined) query.push(['state', state]);
    if (nonce !== undefined) query.push(['nonce', nonce]);
    if (params.maxAge !== undefined) query.push(['max_age', String(params.maxAge)]);
    const search = query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    const url = `${this.issuer}/oauth/authorize?${search}`;
    return nonce === undefined ? { url } : { url, nonce };
  }

  /**
   * Exchange the authorization code for tokens and validate the ID token completely.
   * @throws TypeError on ill-formed parameters; IdError when the token call fails, the key set
   *   cannot be fetched, or the ID token or access token is not valid.
   */
  async callback(params: CallbackParams): Promise<CallbackResult> {
    if (typeof params !== 'object' || params === null) {
      throw new TypeError('callback: expected an object with code and codeVerifier');
    }
    const code = requireString(params.code, 'code', 'callback');
    if (!isPkceString(params.codeVerifier)) {
      throw new TypeError('callback: codeVerifier must be the 43-128 character verifier used for the code challenge');
    }
    if (params.nonce !== undefined && params.nonce !== null) requireString(params.nonce, 'nonce', 'callback');
    const redirectUri = this.#pickRedirectUri(params.redirectUri, 'callback');

    let serverDate: string | undefined;
    const body = await this.#call('token', {
      onServerDate: (date) => {
        serverDate = date;
      },
      method: 'POST',
      url: this.#tokenUrl,
      what: 'token endpoint',
      refusedCode: 'token_request_failed',
      body: {
        client_id: this.clientId,
        client_secret: this.#clientSecret,
        code,
        grant_type: 'authorization_code',
        code_verifier: params.codeVerifier,
        redirect_uri: redirectUri,
      },
    });
    const tokens = asObject(body, 'token endpoint');
    const accessToken = tokens.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new IdError('access_token_missing', 'The token endpoint answered without an access_token.');
    }
    let claims: IdTokenClaims;
    try {
      claims = await validateIdToken(tokens.id_token, {
        issuer: this.issuer,
        clientId: this.clientId,
        nonce: params.nonce,
        accessToken,
        clockTolerance: this.#clockTolerance,
        clock: this.#clock,
        keyFor: (kid) => this.#jwks.keyFor(kid),
      });
    } catch (err) {
      // For time failures, measure this machine's clock against the service's, so the log can
      // say whether the clock is wrong rather than the token.
      if (err instanceof IdError && TIME_CODES.has(err.code) && serverDate !== undefined) {
        const theirs = Date.parse(serverDate);
        if (Number.isFinite(theirs)) err.clockSkewMs = this.#clock() - theirs;
      }
      throw err;
    }
    return { sub: claims.sub, accessToken, idToken: tokens.id_token as string, claims };
  }

  /**
   * Fetch and decrypt the user's attributes.
   * @throws TypeError on ill-formed parameters; IdError `access_token_invalid` (nothing is sent)
   *   when `accessToken` has characters a bearer token cannot have (RFC 6750 b64token), or when
   *   the userinfo call fails, the returned sub differs from `sub`, or decryption fails.
   */
  async userinfo(params: UserinfoParams): Promise<UserinfoResult> {
    if (typeof params !== 'object' || params === null) {
      throw new TypeError('userinfo: expected an object with sub and accessToken');
    }
    const sub = requireString(params.sub, 'sub', 'userinfo');
    const accessToken = requireString(params.accessToken, 'accessToken', 'userinfo');
    if (!BEARER_TOKEN.test(accessToken)) {
      throw new IdError(
        'access_token_invalid',
        'The access token has characters a bearer token cannot have (RFC 6750); it was not sent to the userinfo endpoint.',
      );
    }
    const body = await this.#call('userinfo', {
      method: 'GET',
      url: this.#userinfoUrl,
      what: 'userinfo endpoint',
      refusedCode: 'userinfo_request_failed',
      headers: { Authorization: `Bearer ${accessToken}` },
    });
    const info = asObject(body, 'userinfo endpoint');
    if (typeof info.sub !== 'string') {
      throw new IdError('userinfo_malformed', 'The userinfo response has no sub.');
    }
    if (info.sub !== sub) {
      throw new IdError('userinfo_sub_mismatch', 'The userinfo sub differs from the sub of the ID token.');
    }
    // Spec 2.4: the answer always carries `data` (empty when no scope has data); one without it,
    // or with null, is malformed, not "no attributes".
    const data = info.data;
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new IdError('userinfo_malformed', 'The userinfo data is missing or not an object.');
    }
    const entries = data as Record<string, unknown>;
    if (Object.keys(entries).length === 0) return { sub, data: {} };
    if (typeof info.key !== 'string') {
      throw new IdError('userinfo_malformed', 'The userinfo response has data but no key.');
    }
    try {
      return { sub, data: await decryptUserinfo(this.#privateKeys, info.key, entries) };
    } catch (err) {
      logCallFailure(this.#log, 'userinfo', err);
      throw err;
    }
  }

  /** Close idle keep-alive connections (the client stays usable). */
  close(): void {
    this.#http.close();
  }

  /** One call to the service; a server-side failure is logged before it is thrown. */
  async #call(endpoint: Endpoint, req: Parameters<HttpClient['json']>[0]): Promise<unknown> {
    try {
      return await this.#http.json(req);
    } catch (err) {
      logCallFailure(this.#log, endpoint, err);
      throw err;
    }
  }

  #pickRedirectUri(given: string | undefined, fn: string): string {
    if (given !== undefined) return requireHttpUrl(given, `${fn}: redirectUri`);
    if (this.#redirectUri === undefined) {
      throw new TypeError(`${fn}: redirectUri is required when the IdClient was constructed without one`);
    }
    return this.#redirectUri;
  }
}

/** RFC 6750 section 2.1 b64token: what an `Authorization: Bearer` value may hold. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function requireString(value: unknown, name: string, fn = 'IdClient'): string {
  if (typeof value !== 'string' || value === '') {
    throw new TypeError(`${fn}: ${name} must be a non-empty string`);
  }
  return value;
}

function requireHttpUrl(value: unknown, name: string): string {
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
function importPrivateKeys(value: unknown): DecryptionKey[] {
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

/** True for `localhost`, 127.0.0.0/8 and ::1 (as the URL parser writes them). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** `https://host[:port]` from `hostname`, which may end in one slash but has no path or query. */
function parseHostname(value: unknown, allowInsecureHttp: boolean): string {
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

function optionalNumber(value: unknown, name: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min) {
    throw new TypeError(`IdClient: ${name} must be a finite number of at least ${min}`);
  }
  return value;
}

function optionalClock(value: unknown): Clock {
  if (value === undefined) return systemClock;
  if (typeof value !== 'function') throw new TypeError('IdClient: clock must be a function returning ms since the epoch');
  return value as Clock;
}

function normalizeScope(scope: string | string[] | undefined): string {
  let list: string[];
  if (scope === undefined) list = DEFAULT_SCOPE.split(' ');
  else if (typeof scope === 'string') list = scope.split(/\s+/).filter((s) => s !== '');
  else if (Array.isArray(scope) && scope.every((s) => typeof s === 'string' && s !== '' && !/\s/.test(s))) list = scope;
  else throw new TypeError('authorizationUrl: scope must be a space-separated string or an array of scope names');
  if (!list.includes('openid')) throw new TypeError('authorizationUrl: scope must include "openid"');
  return [...new Set(list)].join(' ');
}

function asObject(body: unknown, what: string): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new IdError('provider_invalid_response', `The ${what} answered with JSON that is not an object.`);
  }
  return body as Record<string, unknown>;
}
