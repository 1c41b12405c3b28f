/**
 * IdClient: the protocol client of spec 4.7 (authorizationUrl, callback, userinfo).
 */
// First: it checks, as it loads, that the runtime gives Node's built-in modules that the rest uses.
import { assertNodeBuiltins } from './runtime-check.js';
import type { Clock } from '../clock.js';
import { IdError } from '../errors.js';
import { checkOptionNames } from '../options-check.js';
import type { DecryptionKey } from '../keys.js';
import {
  asObject,
  BEARER_TOKEN,
  importPrivateKeys,
  normalizeScope,
  optionalClock,
  optionalNumber,
  parseHostname,
  requireDpopKey,
  requireHttpUrl,
  requireString,
} from './client-options.js';

export { DEFAULT_HOSTNAME, DEFAULT_SCOPE, isLoopbackHost } from './client-options.js';
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
  PushedAuthorizationParams,
  PushedAuthorizationResult,
  UserinfoParams,
  UserinfoResult,
} from './types.js';
import { decryptUserinfo } from './userinfo-crypto.js';
import { checkResponseIssuer } from './authorization-response.js';
import { CLIENT_ASSERTION_TYPE, createClientAssertion } from './client-assertion.js';
import { DiscoveryCache } from './discovery.js';
import { dpopKeyFromKeyObject, DpopNonces, generateDpopKey, restoreDpopKey, type DpopKey, type StoredDpopKey } from './dpop.js';
import { dpopCall } from './dpop-call.js';
import { appJwks, checkContextMessage, parseFapiOptions, type FapiConfig, type IdClientProfile, type PublicJwks } from './fapi-config.js';
import { importIdTokenDecryptionKeys, type IdTokenDecryptionKey } from './fapi-keys.js';
import { checkFapiTokenResponse, decryptIdToken, isCompactJwe } from './id-token-jwe.js';

/** ID-token failures caused by time: a clock difference with the service can explain them. */
const TIME_CODES: ReadonlySet<string> = new Set(['id_token_expired', 'id_token_issued_in_future', 'id_token_not_yet_valid']);

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
  /** `'fapi2'` for the FAPI 2.0 Security Profile, `'base'` for the service as its spec describes it. */
  readonly profile: IdClientProfile;
  readonly #clientSecret: string | undefined;
  readonly #fapi: FapiConfig | undefined;
  readonly #idTokenKeys: readonly IdTokenDecryptionKey[];
  readonly #discovery: DiscoveryCache;
  readonly #nonces = new DpopNonces();
  #instanceDpopKey: DpopKey | undefined;
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
   * @throws TypeError naming the option when one is missing or ill-typed; Error naming the
   * `nodejs_compat` flag when the runtime lacks Node's built-in modules (a worker without it).
   */
  constructor(options: IdClientOptions) {
    assertNodeBuiltins('IdClient');
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('IdClient: options must be an object with clientId, clientSecret and privateKey');
    }
    checkOptionNames(options, 'new IdClient()');
    this.clientId = requireString(options.clientId, 'clientId');
    this.#privateKeys = importPrivateKeys(options.privateKey);
    this.#fapi = parseFapiOptions(options.profile, options, this.#privateKeys);
    this.profile = this.#fapi === undefined ? 'base' : 'fapi2';
    if (this.#fapi === undefined) {
      this.#clientSecret = requireString(options.clientSecret, 'clientSecret');
    } else if (options.clientSecret !== undefined) {
      throw new TypeError("IdClient: clientSecret is not used with profile: 'fapi2' (the client authenticates with clientAssertionKey, private_key_jwt); remove it");
    }
    // ID tokens that arrive encrypted are decrypted in both profiles; in the base profile, with the userinfo key.
    this.#idTokenKeys = this.#fapi?.decryptionKeys ?? importIdTokenDecryptionKeys(this.#privateKeys.map((k) => k.key), 'IdClient: privateKey');
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
    this.#discovery = new DiscoveryCache({ http: this.#http, issuer: this.issuer, clock: this.#clock, maxAge });
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
    if (this.#fapi !== undefined) {
      throw new TypeError("authorizationUrl: with profile: 'fapi2' the parameters are pushed first; use await pushAuthorizationRequest({ ... })");
    }
    const { query, nonce } = this.#authorizationParams(params, 'authorizationUrl');
    const search = query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    const url = `${this.issuer}/oauth/authorize?${search}`;
    return nonce === undefined ? { url } : { url, nonce };
  }

  /**
   * FAPI 2.0: pushes the authorization parameters (RFC 9126) with a client assertion and a DPoP
   * proof, binding the code to `dpopKey` (`dpop_jkt`), and gives the URL to send the browser to:
   * it carries only `client_id` and `request_uri`.
   * @throws TypeError on ill-formed parameters or in the base profile; IdError when the service
   *   refuses the request or publishes no pushed-authorization endpoint.
   */
  async pushAuthorizationRequest(params: PushedAuthorizationParams): Promise<PushedAuthorizationResult> {
    const fapi = this.#requireFapi('pushAuthorizationRequest');
    const { query, nonce } = this.#authorizationParams(params, 'pushAuthorizationRequest');
    const dpopKey = requireDpopKey(params.dpopKey, 'pushAuthorizationRequest');
    const message =
      params.authenticationContextMessage === undefined
        ? fapi.contextMessage
        : checkContextMessage(params.authenticationContextMessage, 'pushAuthorizationRequest: authenticationContextMessage');
    query.push(['dpop_jkt', dpopKey.jkt]);
    if (message !== undefined) query.push(['authentication_context_message', message]);
    const metadata = await this.#metadata('par');
    const parUrl = metadata.parEndpoint;
    if (parUrl === undefined) {
      throw new IdError(
        'configuration_invalid',
        "The service's discovery document names no pushed_authorization_request_endpoint on its own origin; check that the service offers the FAPI 2.0 profile to this client.",
      );
    }
    const body = await this.#dpopCall('par', dpopKey, 'POST', parUrl, async () => ({
      what: 'pushed authorization request endpoint',
      refusedCode: 'par_request_failed',
      form: Object.fromEntries([...query, ...(await this.#clientAuthentication(fapi))]),
    }));
    const answer = asObject(body, 'pushed authorization request endpoint');
    const requestUri = answer.request_uri;
    const expiresIn = answer.expires_in;
    if (typeof requestUri !== 'string' || requestUri === '' || requestUri.length > 2048) {
      throw new IdError('provider_invalid_response', 'The pushed authorization request endpoint answered without a request_uri.');
    }
    if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new IdError('provider_invalid_response', 'The pushed authorization request endpoint answered without a positive expires_in.');
    }
    const url = `${this.issuer}/oauth/authorize?client_id=${encodeURIComponent(this.clientId)}&request_uri=${encodeURIComponent(requestUri)}`;
    return { url, requestUri, expiresIn, ...(nonce === undefined ? {} : { nonce }) };
  }

  /**
   * FAPI 2.0: the DPoP key for a new login: a fresh P-256 key pair with the form to keep it in
   * (per login, the default), or the app-wide `dpopKey` (nothing to keep).
   */
  async dpopKeyForLogin(): Promise<{ key: DpopKey; stored?: StoredDpopKey }> {
    const fapi = this.#requireFapi('dpopKeyForLogin');
    if (fapi.instanceDpopKey !== undefined) return { key: await this.#appDpopKey(fapi) };
    return generateDpopKey();
  }

  /** FAPI 2.0: the DPoP key of a login, from what {@link IdClient.dpopKeyForLogin} gave to keep (nothing for an app-wide key). */
  async restoreDpopKey(stored: StoredDpopKey | undefined): Promise<DpopKey> {
    const fapi = this.#requireFapi('restoreDpopKey');
    if (fapi.instanceDpopKey !== undefined) return this.#appDpopKey(fapi);
    if (stored === undefined) throw new TypeError('restoreDpopKey: give the stored key that dpopKeyForLogin returned for this login');
    return restoreDpopKey(stored);
  }

  /**
   * FAPI 2.0: the app's public keys as a JWKS, for registration by `jwks_uri`: the assertion keys
   * (`use: sig`), the ID-token decryption keys (`use: enc`) and the retired keys until their date.
   * Never a private member.
   */
  publicJwks(): PublicJwks {
    return appJwks(this.#requireFapi('publicJwks'), this.#clock);
  }

  /**
   * Checks the authorization response's `iss` (RFC 9207) before anything in it is trusted: when
   * present it must be this issuer, and when the discovery document advertises
   * `authorization_response_iss_parameter_supported` it must be present. Both profiles; with
   * `profile: 'fapi2'` it must be present whatever discovery says.
   * @throws IdError `authorization_response_iss_mismatch` or `authorization_response_iss_missing`;
   *   a discovery failure (`discovery_issuer_mismatch`, or an HTTP code).
   */
  async checkAuthorizationResponse(query: Record<string, unknown>): Promise<void> {
    if (typeof query !== 'object' || query === null) throw new TypeError('checkAuthorizationResponse: expected the callback query as an object');
    // FAPI 2.0 requires the iss parameter of every response: a discovery document that fails or
    // omits the flag must not switch the mix-up defence off.
    if (this.#fapi !== undefined) return checkResponseIssuer(query.iss, this.issuer, true);
    const metadata = query.iss === undefined ? await this.#metadata('discovery') : undefined;
    checkResponseIssuer(query.iss, this.issuer, metadata?.issParameterSupported === true);
  }

  /** The authorization parameters shared by the plain and the pushed request, checked. */
  #authorizationParams(params: AuthorizationUrlParams, fn: string): { query: [string, string][]; nonce: string | undefined } {
    if (typeof params !== 'object' || params === null) {
      throw new TypeError(`${fn}: expected an object with at least codeChallenge`);
    }
    if (!isPkceString(params.codeChallenge)) {
      throw new TypeError(
        `${fn}: codeChallenge must be the S256 challenge of the code verifier (43-128 characters of A-Z a-z 0-9 - . _ ~); use generatePkcePair()`,
      );
    }
    const redirectUri = this.#pickRedirectUri(params.redirectUri, fn);
    const scope = normalizeScope(params.scope);
    let nonce: string | undefined;
    if (params.nonce === undefined) nonce = generateNonce();
    else if (params.nonce === null) nonce = undefined;
    else nonce = requireString(params.nonce, 'nonce', fn);
    const state = params.state === undefined ? undefined : requireString(params.state, 'state', fn);
    if (params.maxAge !== undefined && (!Number.isInteger(params.maxAge) || params.maxAge < 0)) {
      throw new TypeError(`${fn}: maxAge must be a whole number of seconds, 0 or more`);
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
    return { query, nonce };
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
    if (params.iss !== undefined) checkResponseIssuer(params.iss, this.issuer, true);

    let serverDate: string | undefined;
    const onServerDate = (date: string): void => {
      serverDate = date;
    };
    const grant = {
      client_id: this.clientId,
      code,
      grant_type: 'authorization_code',
      code_verifier: params.codeVerifier,
      redirect_uri: redirectUri,
    };
    let body: unknown;
    if (this.#fapi === undefined) {
      body = await this.#call('token', {
        onServerDate,
        method: 'POST',
        url: this.#tokenUrl,
        what: 'token endpoint',
        refusedCode: 'token_request_failed',
        body: { ...grant, client_secret: this.#clientSecret },
      });
    } else {
      const fapi = this.#fapi;
      const dpopKey = requireDpopKey(params.dpopKey, 'callback');
      if (params.iss === undefined) await this.checkAuthorizationResponse({});
      body = await this.#dpopCall('token', dpopKey, 'POST', this.#tokenUrl, async () => ({
        onServerDate,
        what: 'token endpoint',
        refusedCode: 'token_request_failed',
        form: { ...grant, ...Object.fromEntries(await this.#clientAuthentication(fapi)) },
      }));
    }
    const tokens = asObject(body, 'token endpoint');
    const accessToken = tokens.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new IdError('access_token_missing', 'The token endpoint answered without an access_token.');
    }
    const tokenType = typeof tokens.token_type === 'string' ? tokens.token_type : undefined;
    // The profile binds tokens to DPoP (a Bearer token is refused) and encrypts ID tokens.
    if (this.#fapi !== undefined) checkFapiTokenResponse(tokens.token_type, tokens.id_token);
    let claims: IdTokenClaims;
    let idToken = tokens.id_token;
    try {
      if (isCompactJwe(idToken)) idToken = await decryptIdToken(idToken, this.#idTokenKeys);
      claims = await validateIdToken(idToken, {
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
    return { sub: claims.sub, accessToken, idToken: idToken as string, claims, ...(tokenType === undefined ? {} : { tokenType }) };
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
    const request = { what: 'userinfo endpoint', refusedCode: 'userinfo_request_failed' } as const;
    const body =
      this.#fapi === undefined
        ? await this.#call('userinfo', { ...request, method: 'GET', url: this.#userinfoUrl, headers: { Authorization: `Bearer ${accessToken}` } })
        : await this.#dpopCall(
            'userinfo',
            requireDpopKey(params.dpopKey, 'userinfo'),
            'GET',
            this.#userinfoUrl,
            async () => ({ ...request, headers: { Authorization: `DPoP ${accessToken}` } }),
            accessToken,
          );
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

  /** A DPoP-protected call; a server-side failure is logged before it is thrown. */
  async #dpopCall(
    endpoint: Endpoint,
    key: DpopKey,
    method: 'GET' | 'POST',
    url: URL,
    build: Parameters<typeof dpopCall>[3],
    accessToken?: string,
  ): Promise<unknown> {
    try {
      return await dpopCall({ http: this.#http, nonces: this.#nonces, key, clock: this.#clock }, method, url, build, accessToken);
    } catch (err) {
      logCallFailure(this.#log, endpoint, err);
      throw err;
    }
  }

  /** The discovery document; a failure to read it is logged before it is thrown. */
  async #metadata(endpoint: Endpoint): Promise<Awaited<ReturnType<DiscoveryCache['get']>>> {
    try {
      return await this.#discovery.get();
    } catch (err) {
      logCallFailure(this.#log, endpoint, err);
      throw err;
    }
  }

  /** `private_key_jwt` (RFC 7523): a fresh assertion signed with the first (current) assertion key. */
  async #clientAuthentication(fapi: FapiConfig): Promise<[string, string][]> {
    const current = fapi.signingKeys[0]!; // parseFapiOptions refuses an empty list
    return [
      ['client_assertion_type', CLIENT_ASSERTION_TYPE],
      ['client_assertion', await createClientAssertion(current, this.clientId, this.issuer, this.#clock)],
    ];
  }

  #appDpopKey(fapi: FapiConfig): DpopKey {
    if (fapi.instanceDpopKey === undefined) throw new TypeError('IdClient: no app-wide dpopKey is configured');
    return (this.#instanceDpopKey ??= dpopKeyFromKeyObject(fapi.instanceDpopKey));
  }

  #requireFapi(fn: string): FapiConfig {
    if (this.#fapi === undefined) throw new TypeError(`${fn}: this IdClient speaks the base profile; construct it with profile: 'fapi2' and its keys (see docs/fapi2.md)`);
    return this.#fapi;
  }

  #pickRedirectUri(given: string | undefined, fn: string): string {
    if (given !== undefined) return requireHttpUrl(given, `${fn}: redirectUri`);
    if (this.#redirectUri === undefined) {
      throw new TypeError(`${fn}: redirectUri is required when the IdClient was constructed without one`);
    }
    return this.#redirectUri;
  }
}
