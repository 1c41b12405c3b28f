/**
 * What differs between the profiles an {@link IdClient} speaks, one object each, so the client
 * follows one flow: client authentication, token binding, the ID token's form, and whether the
 * authorization request may travel in the URL.
 */
import type { Clock } from '../clock.js';
import type { DecryptionKey } from '../keys.js';
import type { Log } from '../log.js';
import { logCallFailure, type Endpoint } from './call-log.js';
import { CLIENT_ASSERTION_TYPE, createClientAssertion } from './client-assertion.js';
import { requireDpopKey, requireString } from './client-options.js';
import { specEndpoints, type ServiceMetadata } from './discovery.js';
import {
  dpopKeyFromKeyObject,
  DpopNonces,
  generateDpopKey,
  restoreDpopKey,
  type DpopKey,
  type StoredDpopKey,
} from './dpop.js';
import { dpopCall } from './dpop-call.js';
import { appJwks, parseFapiOptions, type FapiConfig, type IdClientProfile, type PublicJwks } from './fapi-config.js';
import { importIdTokenDecryptionKeys, type IdTokenDecryptionKey } from './fapi-keys.js';
import type { HttpClient, JsonRequest } from './http.js';
import { checkFapiTokenResponse, type IdTokenDecryptionOptions } from './id-token-jwe.js';
import type { IdClientOptions } from './types.js';

/** What a profile uses of its client. */
export interface ProfileContext {
  clientId: string;
  issuer: string;
  /** The issuer came from `hostname`: the service of the spec. */
  specService: boolean;
  clock: Clock;
  http: HttpClient;
  log: Log;
  /** The client's RFC 9207 check of an authorization response. */
  checkAuthorizationResponse(query: Record<string, unknown>): Promise<void>;
}

/** The code grant of a callback and what the profile needs to send it. */
export interface TokenRequest {
  url: URL;
  grant: Record<string, string>;
  onServerDate: (date: string) => void;
  /** The callback's `dpopKey` and `iss`, unchecked. */
  dpopKey: unknown;
  iss: unknown;
}

/** The userinfo request, less how the access token is presented. */
export type UserinfoRequest = Pick<JsonRequest, 'what' | 'refusedCode' | 'jwt'>;

/** Reads a resource with an access token, presented as the profile binds it. */
export type UserinfoCall = (url: URL, accessToken: string, request: UserinfoRequest) => Promise<unknown>;

/** A profile, with the client's parts it uses. */
export interface Profile {
  readonly name: IdClientProfile;
  /** The keys that decrypt an ID token (or userinfo JWT) that arrives encrypted. */
  readonly idTokenKeys: readonly IdTokenDecryptionKey[];
  /** The algorithms an encrypted ID token may use (default: every one accepted). */
  readonly idTokenDecryption: IdTokenDecryptionOptions;
  /** The spec's endpoints, where they stand in for a discovery document. */
  readonly fallback: ServiceMetadata | undefined;
  /** @throws TypeError where the authorization parameters must be pushed rather than put in the URL. */
  checkAuthorizationUrl(): void;
  /** The FAPI 2.0 profile, for the methods only it has. @throws TypeError naming `fn` in the base profile. */
  fapi2(fn: string): Fapi2Profile;
  /** Sends the code grant, authenticated and bound as the profile asks. */
  requestTokens(request: TokenRequest): Promise<unknown>;
  /** Checks the form of the token response before its ID token is read. */
  checkTokenResponse(tokens: Record<string, unknown>): void;
  /** The userinfo call for the `dpopKey` given (checked now, before any request). */
  userinfoCall(dpopKey: unknown): UserinfoCall;
}

/** The profile's options, checked; `create` builds the profile once the client has its other parts. */
export interface ParsedProfile {
  name: IdClientProfile;
  create(ctx: ProfileContext): Profile;
}

/**
 * Checks the options that depend on the profile; the client calls it before checking the others.
 * @throws TypeError naming the option and saying what to do.
 */
export function parseProfile(options: IdClientOptions, privateKeys: readonly DecryptionKey[]): ParsedProfile {
  const fapi = parseFapiOptions(options.profile, options, privateKeys);
  if (fapi !== undefined) {
    if (options.clientSecret !== undefined) {
      throw new TypeError(
        "IdClient: clientSecret is not used with profile: 'fapi2' (the client authenticates with clientAssertionKey, private_key_jwt); remove it",
      );
    }
    return { name: 'fapi2', create: (ctx) => new Fapi2Profile(ctx, fapi) };
  }
  const clientSecret = requireString(options.clientSecret, 'clientSecret');
  // An ID token that arrives encrypted is read with the userinfo key.
  const idTokenKeys =
    privateKeys.length === 0
      ? []
      : importIdTokenDecryptionKeys(
          privateKeys.map((k) => k.remote ?? k.key),
          'IdClient: privateKey',
        ).map((key, i) => ({ ...key, kid: privateKeys[i]?.kid ?? key.kid }));
  return { name: 'base', create: (ctx) => new BaseProfile(ctx, clientSecret, idTokenKeys) };
}

/** The service as its spec describes it: `client_secret`, bearer tokens, the authorization request in the URL. */
class BaseProfile implements Profile {
  readonly name = 'base';
  readonly fallback: ServiceMetadata | undefined;
  readonly idTokenKeys: readonly IdTokenDecryptionKey[];
  readonly idTokenDecryption: IdTokenDecryptionOptions = {};
  readonly #ctx: ProfileContext;
  readonly #clientSecret: string;

  constructor(ctx: ProfileContext, clientSecret: string, idTokenKeys: readonly IdTokenDecryptionKey[]) {
    this.#ctx = ctx;
    this.#clientSecret = clientSecret;
    this.idTokenKeys = idTokenKeys;
    // The spec's paths stand in only for the service of the spec.
    this.fallback = ctx.specService ? specEndpoints(ctx.issuer) : undefined;
  }

  checkAuthorizationUrl(): void {}

  fapi2(fn: string): Fapi2Profile {
    throw new TypeError(
      `${fn}: this IdClient speaks the base profile; construct it with profile: 'fapi2' and its keys (see docs/fapi2.md)`,
    );
  }

  requestTokens({ url, grant, onServerDate }: TokenRequest): Promise<unknown> {
    const credentials = { ...grant, client_secret: this.#clientSecret };
    return logged(this.#ctx.log, 'token', () =>
      this.#ctx.http.json({
        onServerDate,
        method: 'POST',
        url,
        what: 'token endpoint',
        refusedCode: 'token_request_failed',
        // The spec's service takes JSON; any other provider the form of RFC 6749 (client_secret_post).
        ...(this.fallback === undefined ? { form: credentials } : { body: credentials }),
      }),
    );
  }

  checkTokenResponse(): void {}

  userinfoCall(): UserinfoCall {
    return (url, accessToken, request) =>
      logged(this.#ctx.log, 'userinfo', () =>
        this.#ctx.http.json({ ...request, method: 'GET', url, headers: { Authorization: `Bearer ${accessToken}` } }),
      );
  }
}

/**
 * The FAPI 2.0 Security Profile: `private_key_jwt`, DPoP-bound tokens, pushed requests; ID tokens
 * signed, and encrypted when the app asks for it (`idTokenEncryptedResponseAlg`).
 */
export class Fapi2Profile implements Profile {
  readonly name = 'fapi2';
  readonly fallback = undefined;
  readonly idTokenKeys: readonly IdTokenDecryptionKey[];
  readonly idTokenDecryption: IdTokenDecryptionOptions;
  readonly config: FapiConfig;
  readonly #ctx: ProfileContext;
  readonly #nonces = new DpopNonces();
  #appDpopKey: DpopKey | undefined;

  constructor(ctx: ProfileContext, config: FapiConfig) {
    this.#ctx = ctx;
    this.config = config;
    this.idTokenKeys = config.decryptionKeys;
    this.idTokenDecryption = config.idTokenEncryption ?? {};
  }

  checkAuthorizationUrl(): void {
    throw new TypeError(
      "authorizationUrl: with profile: 'fapi2' the parameters are pushed first; use await pushAuthorizationRequest({ ... })",
    );
  }

  fapi2(): Fapi2Profile {
    return this;
  }

  async requestTokens({ url, grant, onServerDate, dpopKey, iss }: TokenRequest): Promise<unknown> {
    const key = requireDpopKey(dpopKey, 'callback');
    // FAPI 2.0 asks for RFC 9207's `iss`: a callback without it is judged as its response would be.
    if (iss === undefined) await this.#ctx.checkAuthorizationResponse({});
    return this.dpopCall('token', key, 'POST', url, async () => ({
      onServerDate,
      what: 'token endpoint',
      refusedCode: 'token_request_failed',
      form: { ...grant, ...Object.fromEntries(await this.clientAuthentication()) },
    }));
  }

  /**
   * Tokens are DPoP-bound (a Bearer token is refused). The ID token must be encrypted only when
   * the app registered an encryption (`idTokenEncryptedResponseAlg`): FAPI 2.0 has a client
   * accept a signed ID token, and a certified provider need not encrypt.
   */
  checkTokenResponse(tokens: Record<string, unknown>): void {
    const mustBeEncrypted = this.config.idTokenEncryption !== undefined;
    checkFapiTokenResponse(tokens.token_type, mustBeEncrypted ? tokens.id_token : undefined);
  }

  userinfoCall(dpopKey: unknown): UserinfoCall {
    const key = requireDpopKey(dpopKey, 'userinfo');
    return (url, accessToken, request) =>
      this.dpopCall(
        'userinfo',
        key,
        'GET',
        url,
        async () => ({ ...request, headers: { Authorization: `DPoP ${accessToken}` } }),
        accessToken,
      );
  }

  /** `private_key_jwt` (RFC 7523): a fresh assertion signed with the first (current) assertion key. */
  async clientAuthentication(): Promise<[string, string][]> {
    const current = this.config.signingKeys[0]!; // parseFapiOptions refuses an empty list
    return [
      ['client_assertion_type', CLIENT_ASSERTION_TYPE],
      ['client_assertion', await createClientAssertion(current, this.#ctx.clientId, this.#ctx.issuer, this.#ctx.clock)],
    ];
  }

  /** A DPoP-protected call; a server-side failure is logged before it is thrown. */
  dpopCall(
    endpoint: Endpoint,
    key: DpopKey,
    method: 'GET' | 'POST',
    url: URL,
    build: Parameters<typeof dpopCall>[3],
    accessToken?: string,
  ): Promise<unknown> {
    const { http, clock } = this.#ctx;
    return logged(this.#ctx.log, endpoint, () =>
      dpopCall({ http, nonces: this.#nonces, key, clock }, method, url, build, accessToken),
    );
  }

  /** A fresh key pair per login with the form to keep it in, or the app-wide key (nothing to keep). */
  async dpopKeyForLogin(): Promise<{ key: DpopKey; stored?: StoredDpopKey }> {
    const appKey = this.#appKey();
    return appKey === undefined ? generateDpopKey() : { key: appKey };
  }

  async restoreDpopKey(stored: StoredDpopKey | undefined): Promise<DpopKey> {
    const appKey = this.#appKey();
    if (appKey !== undefined) return appKey;
    if (stored === undefined)
      throw new TypeError('restoreDpopKey: give the stored key that dpopKeyForLogin returned for this login');
    return restoreDpopKey(stored);
  }

  publicJwks(): PublicJwks {
    return appJwks(this.config, this.#ctx.clock);
  }

  /** The app-wide DPoP key, when one is configured (its thumbprint computed once). */
  #appKey(): DpopKey | undefined {
    const key = this.config.instanceDpopKey;
    return key === undefined ? undefined : (this.#appDpopKey ??= dpopKeyFromKeyObject(key));
  }
}

/** `call()`, with a server-side failure logged before it is thrown. */
async function logged(log: Log, endpoint: Endpoint, call: () => Promise<unknown>): Promise<unknown> {
  try {
    return await call();
  } catch (err) {
    logCallFailure(log, endpoint, err);
    throw err;
  }
}
