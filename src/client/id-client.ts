/**
 * IdClient: the protocol client of spec 4.7 (authorizationUrl, callback, userinfo). What differs
 * between the base and FAPI 2.0 profiles is in profile.ts.
 */
// First, so a runtime without Node's built-in modules is refused before the rest needs them.
import { assertNodeBuiltins } from './runtime-check.js';
import type { Clock } from '../clock.js';
import { IdError } from '../errors.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import { JWS_SEGMENTS, MAX_ID_TOKEN_LENGTH, withinCompactLimits } from '../compact-limits.js';
import type { DecryptionKey } from '../keys.js';
import {
  asObject,
  BEARER_TOKEN,
  checkAuthorizationParams,
  checkContextType,
  commonAlgorithms,
  importPrivateKeys,
  normalizeScope,
  optionalClock,
  optionalNumber,
  parseIdTokenAlgorithms,
  parseIssuer,
  requireDpopKey,
  requireHttpUrl,
  requireString,
  userinfoAlgorithms,
} from './client-options.js';

export { DEFAULT_HOSTNAME, DEFAULT_SCOPE, isLoopbackHost } from './client-options.js';
import { checkLogger, createLog, type Log } from '../log.js';
import { logCallFailure, type Endpoint } from './call-log.js';
import { generateNonce, isPkceString } from '../pkce.js';
import { HttpClient } from './http.js';
import { type IdTokenSigningAlgorithm, validateIdToken } from './id-token.js';
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
import { DiscoveryCache, specEndpoints, type ServiceMetadata } from './discovery.js';
import { readUserinfoJwt } from './userinfo-jwt.js';
import type { LogoutTokenChecks } from './logout-token.js';
import type { DpopKey, StoredDpopKey } from './dpop.js';
import { checkContextMessage, type IdClientProfile, type PublicJwks } from './fapi-config.js';
import { decryptIdToken, isCompactJwe } from './id-token-jwe.js';
import { parseProfile, type Profile } from './profile.js';
import { inSpan, SPAN, serviceAttributes, type TraceAttributes } from '../trace.js';

/** ID-token failures caused by time: a clock difference with the service can explain them. */
const TIME_CODES: ReadonlySet<string> = new Set([
  'id_token_expired',
  'id_token_issued_in_future',
  'id_token_not_yet_valid',
]);

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
  /** The provider's origin, without a trailing slash. */
  readonly origin: string;
  /** Expected `iss` of ID tokens and of the discovery document: the `issuer` option, or `{hostname}/v2`. */
  readonly issuer: string;
  /**
   * The ID-token signature algorithms accepted: the `idTokenSigningAlgorithms` option (or the
   * profile's default), narrowed to the provider's `id_token_signing_alg_values_supported` once
   * its discovery document has been read.
   */
  idTokenAlgorithms: readonly string[];
  /** `'fapi2'` for the FAPI 2.0 Security Profile, `'base'` for the service as its spec describes it. */
  readonly profile: IdClientProfile;
  readonly #profile: Profile;
  readonly #discovery: DiscoveryCache;
  /** The spec's endpoints, every one this client calls when configured by `hostname`. */
  readonly #specPaths: ServiceMetadata | undefined;
  readonly #allowedAlgorithms: readonly string[];
  readonly #requireIss: boolean;
  readonly #extraParams: readonly [string, string][];
  readonly #jwksCooldown: number;
  readonly #jwksMaxAge: number;
  /** Key-set fetches of the key sets this client no longer uses (a `jwks_uri` that moved). */
  #oldJwksFetches = 0;
  readonly #privateKeys: readonly DecryptionKey[];
  readonly #log: Log;
  readonly #redirectUri: string | undefined;
  readonly #clock: Clock;
  readonly #clockTolerance: number;
  readonly #http: HttpClient;
  /** What every span of this client carries: the provider's host and the profile. */
  readonly #traceAttributes: TraceAttributes;
  #jwks: RemoteKeySet | undefined;
  #jwksUrl: string | undefined;

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
    options = ownOptions(options);
    this.clientId = requireString(options.clientId, 'clientId');
    this.#privateKeys = options.privateKey === undefined ? [] : importPrivateKeys(options.privateKey);
    const profile = parseProfile(options, this.#privateKeys);
    this.profile = profile.name;
    this.#log = createLog(checkLogger(options.logger, 'IdClient'), 'client');
    this.#redirectUri =
      options.redirectUri === undefined ? undefined : requireHttpUrl(options.redirectUri, 'IdClient: redirectUri');
    if (options.allowInsecureHttp !== undefined && typeof options.allowInsecureHttp !== 'boolean') {
      throw new TypeError('IdClient: allowInsecureHttp must be true or false');
    }
    const allowInsecureHttp = options.allowInsecureHttp === true;
    const issuer = parseIssuer(options.issuer, options.hostname, allowInsecureHttp);
    this.origin = issuer.origin;
    this.issuer = issuer.issuer;
    this.#traceAttributes = serviceAttributes(this.origin, profile.name);
    this.#allowedAlgorithms = parseIdTokenAlgorithms(options.idTokenSigningAlgorithms, profile.name === 'fapi2');
    this.idTokenAlgorithms = this.#allowedAlgorithms;
    if (options.requireIssParameter !== undefined && typeof options.requireIssParameter !== 'boolean') {
      throw new TypeError('IdClient: requireIssParameter must be true or false');
    }
    this.#requireIss = options.requireIssParameter === true;
    this.#extraParams = checkAuthorizationParams(options.authorizationParams, 'IdClient: authorizationParams');
    this.#clock = optionalClock(options.clock);
    this.#clockTolerance = optionalNumber(options.clockTolerance, 'clockTolerance', DEFAULT_CLOCK_TOLERANCE_S, 0);
    const timeout = optionalNumber(options.timeout, 'timeout', DEFAULT_TIMEOUT_MS, 1);
    const maxResponseBytes = optionalNumber(
      options.maxResponseBytes,
      'maxResponseBytes',
      DEFAULT_MAX_RESPONSE_BYTES,
      1,
    );
    const cooldown = optionalNumber(options.jwksCooldown, 'jwksCooldown', DEFAULT_JWKS_COOLDOWN_MS, 0);
    const maxAge = optionalNumber(options.jwksCacheMaxAge, 'jwksCacheMaxAge', DEFAULT_JWKS_CACHE_MAX_AGE_MS, 0);
    if (options.agent !== undefined && (typeof options.agent !== 'object' || options.agent === null)) {
      throw new TypeError('IdClient: agent must be an http.Agent or https.Agent');
    }
    this.#http = new HttpClient({ timeout, maxResponseBytes, agent: options.agent });
    this.#jwksCooldown = cooldown;
    this.#jwksMaxAge = maxAge;
    this.#profile = profile.create({
      clientId: this.clientId,
      issuer: this.issuer,
      specService: issuer.byHostname,
      clock: this.#clock,
      http: this.#http,
      log: this.#log,
      checkAuthorizationResponse: (query) => this.checkAuthorizationResponse(query),
    });
    // One source per configuration: `hostname` is the service of the spec, at the spec's paths.
    this.#specPaths = issuer.byHostname ? specEndpoints(this.issuer) : undefined;
    this.#discovery = new DiscoveryCache({
      http: this.#http,
      issuer: this.issuer,
      clock: this.#clock,
      // Read once per key-set lifetime, and never more often than the key-set cooldown.
      maxAge: Math.max(maxAge, cooldown),
      cooldown,
      allowInsecureHttp,
      ...(this.#specPaths === undefined
        ? {}
        : { specPaths: this.#specPaths, standInWhenUnread: this.#profile.fallback !== undefined }),
    });
  }

  /** How many times this client fetched the provider's key set (one in steady state). */
  get jwksFetchCount(): number {
    return this.#oldJwksFetches + (this.#jwks?.fetchCount ?? 0);
  }

  /** How many times this client requested the provider's discovery document (one in steady state). */
  get discoveryFetchCount(): number {
    return this.#discovery.fetchCount;
  }

  /**
   * Reads the provider's discovery document when it is not cached or has expired (one request,
   * then none until it expires), so {@link IdClient.authorizationUrl} knows the authorization
   * endpoint. The login flow calls it before every login; it costs nothing while the document is cached.
   * @throws IdError `discovery_issuer_mismatch`, `discovery_invalid`, `id_token_alg_not_allowed`
   *   (no algorithm in common with the provider), or an HTTP code.
   */
  async discover(): Promise<void> {
    await this.#metadata('discovery');
  }

  /**
   * Whether the provider publishes a userinfo endpoint (reads the discovery document when it is
   * not cached). When it does not, a sign-in completes from the ID token alone.
   */
  async hasUserinfoEndpoint(): Promise<boolean> {
    return (await this.#metadata('discovery')).userinfoEndpoint !== undefined;
  }

  /**
   * The URL to send the user's browser to, and the nonce to keep in the session for
   * {@link IdClient.callback}.
   * @throws TypeError when no redirect URI is known, or `codeChallenge`, `scope`, `state` or
   *   `nonce` is ill-formed.
   */
  authorizationUrl(params: AuthorizationUrlParams): AuthorizationUrlResult {
    this.#profile.checkAuthorizationUrl();
    const { query, nonce } = this.#authorizationParams(params, 'authorizationUrl');
    const metadata = this.#specPaths ?? this.#discovery.peek();
    if (metadata === undefined) {
      throw new TypeError(
        "authorizationUrl: the provider's discovery document has not been read yet; await client.discover() once before (the login flow's start() does)",
      );
    }
    const search = query.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    const url = withQuery(metadata.authorizationEndpoint, search);
    return nonce === undefined ? { url } : { url, nonce };
  }

  /**
   * FAPI 2.0: pushes the authorization parameters (RFC 9126) with a client assertion and a DPoP
   * proof, binding the code to `dpopKey` (`dpop_jkt`), and gives the URL to send the browser to:
   * it carries only `client_id` and `request_uri`.
   * @throws TypeError on ill-formed parameters or in the base profile; IdError when the service
   *   refuses the request or publishes no pushed-authorization endpoint.
   */
  pushAuthorizationRequest(params: PushedAuthorizationParams): Promise<PushedAuthorizationResult> {
    return inSpan(SPAN.par, this.#traceAttributes, () => this.#pushAuthorizationRequest(params));
  }

  async #pushAuthorizationRequest(params: PushedAuthorizationParams): Promise<PushedAuthorizationResult> {
    const fapi = this.#profile.fapi2('pushAuthorizationRequest');
    const { query, nonce } = this.#authorizationParams(params, 'pushAuthorizationRequest');
    const dpopKey = requireDpopKey(params.dpopKey, 'pushAuthorizationRequest');
    const message =
      params.authenticationContextMessage === undefined
        ? fapi.config.contextMessage
        : checkContextMessage(
            params.authenticationContextMessage,
            'pushAuthorizationRequest: authenticationContextMessage',
          );
    const contextType =
      params.authenticationContextType === undefined
        ? fapi.config.contextType
        : checkContextType(params.authenticationContextType, 'pushAuthorizationRequest: authenticationContextType');
    query.push(['dpop_jkt', dpopKey.jkt]);
    if (contextType !== undefined) query.push(['authentication_context_type', contextType]);
    if (message !== undefined) query.push(['authentication_context_message', message]);
    const metadata = await this.#metadata('par');
    const parUrl = metadata.parEndpoint;
    if (parUrl === undefined) {
      throw new IdError(
        'discovery_invalid',
        "The provider's discovery document names no pushed_authorization_request_endpoint; check that the provider offers the FAPI 2.0 profile (PAR) to this client.",
        { reason: 'pushed_authorization_request_endpoint' },
      );
    }
    const body = await fapi.dpopCall('par', dpopKey, 'POST', parUrl, async () => ({
      what: 'pushed authorization request endpoint',
      refusedCode: 'par_request_failed',
      form: Object.fromEntries([...query, ...(await fapi.clientAuthentication())]),
    }));
    const answer = asObject(body, 'pushed authorization request endpoint');
    const requestUri = answer.request_uri;
    const expiresIn = answer.expires_in;
    if (typeof requestUri !== 'string' || requestUri === '' || requestUri.length > 2048) {
      throw new IdError(
        'provider_invalid_response',
        'The pushed authorization request endpoint answered without a request_uri.',
      );
    }
    if (typeof expiresIn !== 'number' || !Number.isFinite(expiresIn) || expiresIn <= 0) {
      throw new IdError(
        'provider_invalid_response',
        'The pushed authorization request endpoint answered without a positive expires_in.',
      );
    }
    const url = withQuery(
      metadata.authorizationEndpoint,
      `client_id=${encodeURIComponent(this.clientId)}&request_uri=${encodeURIComponent(requestUri)}`,
    );
    return { url, requestUri, expiresIn, ...(nonce === undefined ? {} : { nonce }) };
  }

  /**
   * FAPI 2.0: the DPoP key for a new login: a fresh P-256 key pair with the form to keep it in
   * (per login, the default), or the app-wide `dpopKey` (nothing to keep).
   */
  async dpopKeyForLogin(): Promise<{ key: DpopKey; stored?: StoredDpopKey }> {
    return this.#profile.fapi2('dpopKeyForLogin').dpopKeyForLogin();
  }

  /** FAPI 2.0: the DPoP key of a login, from what {@link IdClient.dpopKeyForLogin} gave to keep (nothing for an app-wide key). */
  async restoreDpopKey(stored: StoredDpopKey | undefined): Promise<DpopKey> {
    return this.#profile.fapi2('restoreDpopKey').restoreDpopKey(stored);
  }

  /**
   * FAPI 2.0: the app's public keys as a JWKS, for registration by `jwks_uri`: the assertion keys
   * (`use: sig`), the ID-token decryption keys (`use: enc`) and the retired keys until their date.
   * Never a private member.
   */
  publicJwks(): PublicJwks {
    return this.#profile.fapi2('publicJwks').publicJwks();
  }

  /**
   * Checks the authorization response's `iss` (RFC 9207) before anything in it is trusted: when
   * present it must be this issuer; it must be present when the discovery document advertises
   * `authorization_response_iss_parameter_supported` (both profiles) or the client was built with
   * `requireIssParameter: true`. Without either, a response without `iss` is accepted (the
   * pending login, bound to this issuer, still covers mix-up).
   * @throws IdError `authorization_response_iss_mismatch` or `authorization_response_iss_missing`;
   *   a discovery failure (`discovery_issuer_mismatch`, `discovery_invalid`, or an HTTP code).
   */
  async checkAuthorizationResponse(query: Record<string, unknown>): Promise<void> {
    if (typeof query !== 'object' || query === null)
      throw new TypeError('checkAuthorizationResponse: expected the callback query as an object');
    if (query.iss !== undefined) return checkResponseIssuer(query.iss, this.issuer, true);
    if (this.#requireIss) return checkResponseIssuer(undefined, this.issuer, true);
    // A document that cannot be read fails here (issuer mode, FAPI): it never switches the check off.
    const metadata = await this.#metadata('discovery');
    checkResponseIssuer(undefined, this.issuer, metadata.issParameterSupported);
  }

  /** The authorization parameters shared by the plain and the pushed request, checked. */
  #authorizationParams(
    params: AuthorizationUrlParams,
    fn: string,
  ): { query: [string, string][]; nonce: string | undefined } {
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
    const extras =
      params.authorizationParams === undefined
        ? this.#extraParams
        : mergeParams(
            this.#extraParams,
            checkAuthorizationParams(params.authorizationParams, `${fn}: authorizationParams`),
          );
    for (const pair of extras) query.push(pair);
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
    const metadata = await this.#metadata('token');
    const algorithms = this.#algorithmsFor(metadata);
    const body = await inSpan(SPAN.token, this.#traceAttributes, () =>
      this.#profile.requestTokens({
        url: metadata.tokenEndpoint,
        grant,
        onServerDate,
        dpopKey: params.dpopKey,
        iss: params.iss,
      }),
    );
    const tokens = asObject(body, 'token endpoint');
    const accessToken = tokens.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new IdError('access_token_missing', 'The token endpoint answered without an access_token.');
    }
    const tokenType = typeof tokens.token_type === 'string' ? tokens.token_type : undefined;
    this.#profile.checkTokenResponse(tokens);
    let claims: IdTokenClaims;
    let idToken: string;
    try {
      ({ claims, idToken } = await this.#readIdToken(tokens.id_token, params.nonce, accessToken, algorithms));
    } catch (err) {
      // For time failures, measure this machine's clock against the service's, so the log can
      // say whether the clock is wrong rather than the token.
      if (err instanceof IdError && TIME_CODES.has(err.code) && serverDate !== undefined) {
        const theirs = Date.parse(serverDate);
        if (Number.isFinite(theirs)) err.clockSkewMs = this.#clock() - theirs;
      }
      throw err;
    }
    return {
      sub: claims.sub,
      accessToken,
      idToken,
      claims,
      ...(tokenType === undefined ? {} : { tokenType }),
    };
  }

  /**
   * The token response's ID token, decrypted when it is a JWE, checked against the allowlist and
   * validated: its claims, and the signed token.
   */
  async #readIdToken(
    idToken: unknown,
    nonce: string | null | undefined,
    accessToken: string,
    algorithms: readonly string[],
  ): Promise<{ claims: IdTokenClaims; idToken: string }> {
    let signed = idToken;
    if (isCompactJwe(idToken)) {
      signed = await inSpan(SPAN.idTokenDecrypt, this.#traceAttributes, () =>
        decryptIdToken(idToken, this.#profile.idTokenKeys, this.#profile.idTokenDecryption),
      );
    }
    // `algorithms`: the allowlist the verification keeps to (a key's own alg and kty must fit it too).
    const expectations = {
      issuer: this.issuer,
      clientId: this.clientId,
      nonce,
      accessToken,
      clockTolerance: this.#clockTolerance,
      clock: this.#clock,
      algorithms,
      keyFor: (kid: string | undefined, alg: IdTokenSigningAlgorithm) => this.#keyFor(kid, alg),
    };
    const claims = await inSpan(SPAN.idTokenValidate, this.#traceAttributes, async () => {
      requireAllowedAlgorithm(signed, algorithms);
      return validateIdToken(signed, expectations);
    });
    return { claims, idToken: signed as string };
  }

  /**
   * Fetch and decrypt the user's attributes.
   * @throws TypeError on ill-formed parameters; IdError `access_token_invalid` (nothing is sent)
   *   when `accessToken` has characters a bearer token cannot have (RFC 6750 b64token), or when
   *   the userinfo call fails, the returned sub differs from `sub`, or decryption fails.
   */
  userinfo(params: UserinfoParams): Promise<UserinfoResult> {
    return inSpan(SPAN.userinfo, this.#traceAttributes, () => this.#userinfo(params));
  }

  async #userinfo(params: UserinfoParams): Promise<UserinfoResult> {
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
    const send = this.#profile.userinfoCall(params.dpopKey);
    const metadata = await this.#metadata('userinfo');
    const userinfoUrl = metadata.userinfoEndpoint;
    if (userinfoUrl === undefined) {
      throw new IdError(
        'discovery_invalid',
        "The provider's discovery document names no userinfo_endpoint, so there is no userinfo to read: sign in from the ID token alone (the login flow does when the provider has no userinfo endpoint).",
        { reason: 'userinfo_endpoint' },
      );
    }
    // The service's answer is JSON; a provider's standard userinfo may be a JWT (application/jwt).
    const request = {
      what: 'userinfo endpoint',
      refusedCode: 'userinfo_request_failed',
      ...(metadata.encryptedUserinfo ? {} : { jwt: true }),
    } as const;
    const body = await send(userinfoUrl, accessToken, request);
    if (!metadata.encryptedUserinfo) return this.#standardUserinfo(body, sub, metadata);
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
    if (this.#privateKeys.length === 0) {
      throw new IdError(
        'configuration_invalid',
        "The service sent encrypted attributes and this IdClient has no privateKey to decrypt them with: give the privateKey option (the key registered with the service), or ask for the 'openid' scope alone.",
      );
    }
    try {
      const key = info.key;
      const data = await inSpan(SPAN.userinfoDecrypt, this.#traceAttributes, () =>
        decryptUserinfo(this.#privateKeys, key, entries),
      );
      return { sub, data };
    } catch (err) {
      logCallFailure(this.#log, 'userinfo', err);
      throw err;
    }
  }

  /** A provider's standard userinfo: JSON claims, or a signed (optionally encrypted) JWT of them; its `sub` must be the ID token's. */
  async #standardUserinfo(body: unknown, sub: string, metadata: ServiceMetadata): Promise<UserinfoResult> {
    let claims: Record<string, unknown>;
    if (typeof body === 'string') {
      claims = await readUserinfoJwt(body, {
        issuer: this.issuer,
        clientId: this.clientId,
        // The provider's userinfo list, not its ID-token one (OIDC Discovery 1.0 section 3).
        algorithms: userinfoAlgorithms(this.#allowedAlgorithms, metadata.userinfoSigningAlgValues),
        decryptionKeys: this.#profile.idTokenKeys,
        keyFor: (kid, alg) => this.#keyFor(kid, alg),
      });
    } else {
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw new IdError('userinfo_malformed', 'The userinfo endpoint answered with JSON that is not an object.');
      }
      claims = body as Record<string, unknown>;
    }
    if (typeof claims.sub !== 'string') throw new IdError('userinfo_malformed', 'The userinfo response has no sub.');
    if (claims.sub !== sub)
      throw new IdError('userinfo_sub_mismatch', 'The userinfo sub differs from the sub of the ID token.');
    return { sub, data: {}, claims };
  }

  /**
   * What a back-channel logout token from this provider is checked against (OpenID Connect
   * Back-Channel Logout 1.0, 2.6): this issuer and client, the ID-token allowlist narrowed to the
   * provider's, the clock and its tolerance, the provider's key set and the ID-token decryption
   * keys. `createBackchannelLogout({ client, sessions })` validates with it; reads the discovery document
   * when it is not cached.
   */
  async logoutTokenChecks(): Promise<LogoutTokenChecks> {
    const metadata = await this.#metadata('jwks');
    return {
      issuer: this.issuer,
      clientId: this.clientId,
      algorithms: this.#algorithmsFor(metadata),
      clockTolerance: this.#clockTolerance,
      clock: this.#clock,
      keyFor: (kid, alg) => this.#keyFor(kid, alg),
      decryptionKeys: this.#profile.idTokenKeys,
      decryption: this.#profile.idTokenDecryption,
    };
  }

  /**
   * The algorithms accepted for this provider: the allowlist narrowed to the metadata's
   * `id_token_signing_alg_values_supported`; kept in {@link IdClient.idTokenAlgorithms}.
   * @throws IdError `id_token_alg_not_allowed` (reason `no_common_algorithm`) when none is left.
   */
  #algorithmsFor(metadata: ServiceMetadata): readonly string[] {
    const algorithms = commonAlgorithms(this.#allowedAlgorithms, metadata.idTokenSigningAlgValues);
    if (
      algorithms.length !== this.idTokenAlgorithms.length ||
      algorithms.some((a, i) => a !== this.idTokenAlgorithms[i])
    )
      this.idTokenAlgorithms = algorithms;
    return algorithms;
  }

  /**
   * The provider's key for `kid`, from the key set its metadata names. A key the set lacks makes
   * the client read the discovery document again (at most once per cooldown): when the provider
   * moved its `jwks_uri`, the key is looked up there.
   */
  #keyFor(kid: string | undefined, alg: IdTokenSigningAlgorithm): Promise<import('node:crypto').KeyObject> {
    return inSpan(SPAN.jwks, this.#traceAttributes, () => this.#lookUpKey(kid, alg));
  }

  /** {@link IdClient.#keyFor}'s lookup: the cached key set, fetched again for an unknown `kid`. */
  async #lookUpKey(kid: string | undefined, alg: IdTokenSigningAlgorithm): Promise<import('node:crypto').KeyObject> {
    const metadata = await this.#metadata('jwks');
    try {
      return await this.#keySet(metadata.jwksUri).keyFor(kid, alg);
    } catch (err) {
      if (!(err instanceof IdError) || err.code !== 'id_token_key_not_found' || !metadata.fromDocument) throw err;
      let fresh: ServiceMetadata;
      try {
        fresh = await inSpan(SPAN.discovery, this.#traceAttributes, () => this.#discovery.refresh());
      } catch (refreshErr) {
        logCallFailure(this.#log, 'discovery', refreshErr);
        throw err;
      }
      if (fresh.jwksUri.href === metadata.jwksUri.href) throw err;
      return this.#keySet(fresh.jwksUri).keyFor(kid, alg);
    }
  }

  /** The cached key set at `url` (a new one when the provider's `jwks_uri` moved). */
  #keySet(url: URL): RemoteKeySet {
    if (this.#jwks !== undefined && this.#jwksUrl === url.href) return this.#jwks;
    this.#oldJwksFetches += this.#jwks?.fetchCount ?? 0;
    this.#jwksUrl = url.href;
    this.#jwks = new RemoteKeySet({
      http: this.#http,
      url,
      clock: this.#clock,
      cooldown: this.#jwksCooldown,
      maxAge: this.#jwksMaxAge,
      log: this.#log,
    });
    return this.#jwks;
  }

  /** Close idle keep-alive connections (the client stays usable). */
  close(): void {
    this.#http.close();
  }

  /**
   * The provider's metadata (cached: no request while it is fresh); a failure to read it is
   * logged before it is thrown. A document with no ID-token algorithm in common with the
   * allowlist is refused here, before any login uses it.
   */
  async #metadata(endpoint: Endpoint): Promise<ServiceMetadata> {
    const cached = this.#discovery.peek();
    if (cached !== undefined && this.#discovery.isFresh()) return cached;
    let metadata: ServiceMetadata;
    try {
      metadata = await inSpan(SPAN.discovery, this.#traceAttributes, () => this.#discovery.get());
    } catch (err) {
      logCallFailure(this.#log, endpoint === 'discovery' ? endpoint : 'discovery', err);
      throw err;
    }
    // Outside the try: no common algorithm is the app's setting against a document that was read
    // fine, not a failed call to the provider.
    this.#algorithmsFor(metadata);
    return metadata;
  }

  #pickRedirectUri(given: string | undefined, fn: string): string {
    if (given !== undefined) return requireHttpUrl(given, `${fn}: redirectUri`);
    if (this.#redirectUri === undefined) {
      throw new TypeError(`${fn}: redirectUri is required when the IdClient was constructed without one`);
    }
    return this.#redirectUri;
  }
}

/** `endpoint` with `search` appended to whatever query it already has. */
function withQuery(endpoint: URL, search: string): string {
  const base = endpoint.href;
  return `${base}${endpoint.search === '' ? '?' : '&'}${search}`;
}

/** The client's extra parameters, then this login's (a name in both takes this login's value). */
function mergeParams(base: readonly [string, string][], login: [string, string][]): [string, string][] {
  const names = new Set(login.map(([name]) => name));
  return [...base.filter(([name]) => !names.has(name)), ...login];
}

/**
 * The signed ID token's `alg` must be on the allowlist (read from the header alone, before any
 * key is looked up); the verification then keeps to the same list.
 * @throws IdError `id_token_alg_not_allowed`.
 */
function requireAllowedAlgorithm(idToken: unknown, algorithms: readonly string[]): void {
  if (typeof idToken !== 'string') return; // the verification names what is missing
  // Size and segment count before anything is decoded.
  if (!withinCompactLimits(idToken, JWS_SEGMENTS, MAX_ID_TOKEN_LENGTH)) {
    throw new IdError(
      'id_token_malformed',
      `The ID token is not a compact JWS of three parts and at most ${MAX_ID_TOKEN_LENGTH} characters.`,
    );
  }
  const dot = idToken.indexOf('.');
  if (dot <= 0) return;
  let alg: unknown;
  try {
    alg = (JSON.parse(Buffer.from(idToken.slice(0, dot), 'base64url').toString('utf8')) as { alg?: unknown } | null)
      ?.alg;
  } catch {
    return; // malformed: the verification says so
  }
  if (typeof alg === 'string' && algorithms.includes(alg)) return;
  const shown = typeof alg === 'string' && /^[\w-]{1,20}$/.test(alg) ? alg : 'unknown';
  throw new IdError(
    'id_token_alg_not_allowed',
    `The ID token is signed with "${shown}", which is not in idTokenSigningAlgorithms (${algorithms.join(', ')}); the provider signs with an algorithm this app does not accept.`,
  );
}
