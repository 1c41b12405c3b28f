/** Public shapes of {@link IdClient}, apart from the implementation so callers can depend on the contract alone. */
import type { Agent } from 'node:http';
import type { Clock } from '../clock.js';
import type { RsaPrivateJwk } from '../keys.js';
import type { Logger } from '../log.js';
import type { DpopKey } from './dpop.js';
import type { AppKeyInput } from './fapi-keys.js';
import type { JweDecrypter, JwsSigner } from '../jose/key-reference.js';

/** The profile an {@link IdClient} speaks: the service as its spec describes it, or the FAPI 2.0 Security Profile. */
export type IdClientProfile = 'base' | 'fapi2';

/** A key that is no longer used but stays in the published JWKS until `until`, so the service can finish with it. */
export interface RetiredPublicKey {
  /** The public key: PEM (`-----BEGIN PUBLIC KEY-----`) or a public JWK. A private key here is refused. */
  publicKey: string | { kty: string; kid?: string; [member: string]: unknown };
  /**
   * What it was: `'sig'`, a client-assertion key. (A retired ID-token key is not published: the
   * service would encrypt to a key the app no longer holds. Keep the old private key in the
   * `idTokenDecryptionKey` list, after the new one, for the overlap instead.)
   */
  use: 'sig';
  /** Last moment it is listed: a `Date`, an ISO 8601 string or ms since the epoch. */
  until: Date | string | number;
}

/** Constructor options of IdClient (spec 4.7, plus tuning). */
export interface IdClientOptions {
  /** Client id issued at registration. Required. */
  clientId: string;
  /** Client secret issued at registration. Required in the base profile; not used (and not needed) with `profile: 'fapi2'`. */
  clientSecret?: string;
  /**
   * RSA private key from registration: PKCS#1 or PKCS#8 PEM (literal `\n` escapes are accepted)
   * or a private JWK (an object, or its JSON text: a string starting with `{`). Needed to read the service's encrypted attributes (and, by default, FAPI
   * ID tokens); not needed by an app that signs in from the ID token alone or reads a provider's
   * standard userinfo. An array of keys while rotating: userinfo is decrypted with the
   * key the JWE's `kid` names (by `kid` or RFC 7638 thumbprint), else with each in order.
   * A {@link JweDecrypter} with an RSA `publicJwk` and `unwrap` stands for a key held in an HSM
   * or a KMS (docs/keys.md); it may be mixed with in-process keys in the array.
   */
  privateKey?: string | RsaPrivateJwk | JweDecrypter | ReadonlyArray<string | RsaPrivateJwk | JweDecrypter>;
  /** Registered callback URL. If absent, give it to authorizationUrl and callback. */
  redirectUri?: string;
  /**
   * The service's origin, e.g. `https://id.example`: shorthand for `issuer: hostname + '/v2'`,
   * the service of the spec (in the base profile, the spec's own paths stand in when its
   * discovery document cannot be read). Give `hostname` or `issuer`: the placeholder
   * {@link DEFAULT_HOSTNAME} is refused. A plain `http:` origin is refused unless its host is
   * loopback (`localhost`, `127.0.0.0/8`, `::1`) or `allowInsecureHttp` is true.
   */
  hostname?: string;
  /**
   * Another provider's issuer, exactly as its discovery document names it (it may carry a path,
   * e.g. `https://login.example/oidc`). Every endpoint is then read from
   * `{issuer}/.well-known/openid-configuration` (read once, cached); there is no fallback. Give
   * `issuer` or `hostname`, not both.
   */
  issuer?: string;
  /**
   * The ID-token signature algorithms this app accepts, checked against the provider's
   * `id_token_signing_alg_values_supported`. Default `['RS256']` (the spec); with
   * `profile: 'fapi2'`, `['PS256', 'ES256', 'EdDSA']` (FAPI 2.0 section 5.4.1).
   */
  idTokenSigningAlgorithms?: readonly string[];
  /**
   * Require the `iss` parameter (RFC 9207) in every authorization response, even when the
   * provider does not advertise `authorization_response_iss_parameter_supported`. Default
   * false: required when advertised; a present one is always checked.
   */
  requireIssParameter?: boolean;
  /**
   * Extra authorization parameters sent with every login (`acr_values`, `ui_locales`, `prompt`,
   * `login_hint`, a provider's own such as `redirect_uri_https_type`). They can never replace
   * a parameter the client sets itself (PKCE, `state`, `nonce`, `redirect_uri`, `client_id`, `dpop_jkt`).
   */
  authorizationParams?: Readonly<Record<string, string>>;
  /** Allow a plain `http:` hostname that is not loopback (a test network). Default false. */
  allowInsecureHttp?: boolean;
  /**
   * Where the client logs: any logger with `debug`/`info`/`warn`/`error` (pino, console, Nest's
   * Logger); redacted, never a secret or token. Default: `warn` to `console.error` (once per cause
   * per minute), `debug` to `DEBUG=passport-nd-id:client`.
   */
  logger?: Logger;
  /** Timeout of each HTTP call to the service, in ms. Default 10 000. */
  timeout?: number;
  /** Largest response body accepted, in bytes. Default 1 MiB. */
  maxResponseBytes?: number;
  /** Allowed clock skew when checking `exp` and `iat`, in seconds. Default 60. */
  clockTolerance?: number;
  /** Clock, in ms since the epoch. Default `Date.now`. */
  clock?: Clock;
  /**
   * HTTP(S) agent for every call (token, JWKS, userinfo): a corporate proxy agent, a custom CA,
   * or pooling. Default: a keep-alive agent per client. `proxyAgentFromEnv()` gives one that honours `HTTPS_PROXY`/`NO_PROXY`.
   */
  agent?: Agent;
  /** Shortest time between two JWKS refetches caused by an unknown `kid`, in ms. Default 60 000. */
  jwksCooldown?: number;
  /**
   * Longest time a fetched JWKS is used, in ms, so a withdrawn key stops verifying; a failed
   * refetch fails the login (no stale fallback). `0` refetches for every ID token. Default 600 000.
   */
  jwksCacheMaxAge?: number;
  /**
   * `'fapi2'`: the FAPI 2.0 Security Profile (pushed authorization requests, DPoP,
   * `private_key_jwt`; ID tokens signed, and encrypted when `idTokenEncryptedResponseAlg` asks for it),
   * for a client registered with `profile: 'fapi2'`.
   * Default `'base'`: the service as its spec describes it. See docs/fapi2.md.
   */
  profile?: IdClientProfile;
  /**
   * FAPI 2.0: the private key that signs client assertions (`private_key_jwt`): an EC P-256 key
   * (ES256, the default kind), or an RSA (PS256) or Ed25519 (EdDSA) key; PEM, private JWK (an
   * object, or its JSON text: a string starting with `{`) or `KeyObject`. An array while rotating: the first signs, all are published by {@link IdClient.publicJwks}.
   * Required with `profile: 'fapi2'`. A {@link JwsSigner} signs with a key held in an HSM or a
   * KMS (docs/keys.md).
   */
  clientAssertionKey?: AppKeyInput | JwsSigner | readonly (AppKeyInput | JwsSigner)[];
  /**
   * FAPI 2.0: the private key ID tokens are encrypted to: EC (`ECDH-ES`, `ECDH-ES+A128KW`/`A192KW`/`A256KW`)
   * or RSA (`RSA-OAEP-256`), as PEM, a private JWK (or its JSON text) or a `KeyObject`. An array
   * while rotating (all decrypt, all are published).
   * Default: the `privateKey` (the userinfo RSA key), used with `RSA-OAEP-256`. An ID token that
   * arrives encrypted is decrypted with it; whether one must arrive encrypted is
   * {@link IdClientOptions.idTokenEncryptedResponseAlg}'s to say. A {@link JweDecrypter} decrypts
   * with a key held in an HSM or a KMS (`unwrap` for RSA, `deriveSharedSecret` for EC; docs/keys.md).
   */
  idTokenDecryptionKey?: AppKeyInput | JweDecrypter | readonly (AppKeyInput | JweDecrypter)[];
  /**
   * FAPI 2.0: the `id_token_encrypted_response_alg` this client registered with the provider
   * (`ECDH-ES`, `ECDH-ES+A128KW`, `ECDH-ES+A192KW`, `ECDH-ES+A256KW` or `RSA-OAEP-256`). Giving it
   * asks for encryption: every ID token must then arrive encrypted with this algorithm, and one
   * that is only signed is refused (`id_token_not_encrypted`). Left out (the default), an ID token
   * that is signed but not encrypted is accepted, as FAPI 2.0 asks of a client (a certified
   * provider need not encrypt), and one that arrives encrypted is still decrypted. Needs a key
   * that fits: `idTokenDecryptionKey` (or `privateKey`, for `RSA-OAEP-256`).
   */
  idTokenEncryptedResponseAlg?: string;
  /**
   * FAPI 2.0: the `id_token_encrypted_response_enc` this client registered (`A128GCM`, `A192GCM`,
   * `A256GCM`, `A128CBC-HS256`, `A192CBC-HS384` or `A256CBC-HS512`); only beside
   * `idTokenEncryptedResponseAlg`. An encrypted ID token must then use it. Default: any of them.
   */
  idTokenEncryptedResponseEnc?: string;
  /**
   * FAPI 2.0: the DPoP key policy. Default `'per-login'`: a fresh P-256 key pair per login, kept in
   * the pending login until the callback. Or one EC P-256 private key shared by every instance
   * (PEM, a private JWK or its JSON text, or a `KeyObject`).
   */
  dpopKey?: 'per-login' | AppKeyInput;
  /** FAPI 2.0: the message shown to the person on the approval screen, for every login that gives none (at most 100 characters). */
  authenticationContextMessage?: string;
  /**
   * FAPI 2.0: the `authentication_context_type` sent beside the message, for every login that
   * gives none (e.g. `APP_AUTHENTICATION_DEFAULT`, for a service that shows the message only with a type).
   */
  authenticationContextType?: string;
  /** FAPI 2.0: keys no longer used that stay in {@link IdClient.publicJwks} until a date (the rotation overlap). */
  retiredPublicKeys?: readonly RetiredPublicKey[];
}

/** Input of {@link IdClient.pushAuthorizationRequest}: the authorization parameters, the login's DPoP key and its context message. */
export interface PushedAuthorizationParams extends AuthorizationUrlParams {
  /** The DPoP key the code will be bound to (`dpop_jkt`), from {@link IdClient.dpopKeyForLogin}. */
  dpopKey: DpopKey;
  /** Shown on the approval screen; at most 100 characters. Default: the client's `authenticationContextMessage`. */
  authenticationContextMessage?: string;
  /** `authentication_context_type`; default: the client's `authenticationContextType`. */
  authenticationContextType?: string;
}

/** Output of {@link IdClient.pushAuthorizationRequest}. */
export interface PushedAuthorizationResult extends AuthorizationUrlResult {
  /** The `request_uri` the service gave for the pushed parameters. */
  requestUri: string;
  /** How long the `request_uri` may be used, in seconds. */
  expiresIn: number;
}

/** Input of {@link IdClient.authorizationUrl}. */
export interface AuthorizationUrlParams {
  state?: string;
  /** Space-separated string or array; must include `openid`. Default `openid profile.name`. */
  scope?: string | string[];
  /** Default: a random nonce. `null`: no nonce. */
  nonce?: string | null;
  redirectUri?: string;
  /** S256 challenge of the code verifier. Required. */
  codeChallenge: string;
  /** `max_age` (OpenID Connect): the longest time in seconds since the person last authenticated; the ID token then carries `auth_time`. */
  maxAge?: number;
  /**
   * Extra parameters for this login, after the client's `authorizationParams` (a name given in
   * both takes this value). Never one the client sets itself (PKCE, `state`, `nonce`, ...).
   */
  authorizationParams?: Readonly<Record<string, string>>;
}

/** Output of {@link IdClient.authorizationUrl}. */
export interface AuthorizationUrlResult {
  url: string;
  /** The nonce sent, to keep in the user's session for callback. Absent when nonce was null. */
  nonce?: string;
}

/** Input of {@link IdClient.callback}. */
export interface CallbackParams {
  code: string;
  /** The nonce from authorizationUrl; `null` when it was null there. */
  nonce?: string | null;
  redirectUri?: string;
  codeVerifier: string;
  /** The callback's `iss` parameter (RFC 9207), when it had one: compared to the issuer. */
  iss?: string;
  /** FAPI 2.0: the login's DPoP key (the one its pushed request named). Required with `profile: 'fapi2'`. */
  dpopKey?: DpopKey;
}

/** Validated ID token claims. */
export interface IdTokenClaims {
  iss: string;
  sub: string;
  aud: string | string[];
  exp: number;
  iat: number;
  nonce?: string;
  azp?: string;
  at_hash?: string;
  [claim: string]: unknown;
}

/** Output of {@link IdClient.callback}. */
export interface CallbackResult {
  sub: string;
  accessToken: string;
  idToken: string;
  claims: IdTokenClaims;
  /** The token response's `token_type`: `Bearer`, or `DPoP` in the FAPI 2.0 profile. */
  tokenType?: string;
}

/** Input of {@link IdClient.userinfo}. */
export interface UserinfoParams {
  sub: string;
  accessToken: string;
  /** FAPI 2.0: the DPoP key the access token is bound to (sent with the `DPoP` scheme). Required with `profile: 'fapi2'`. */
  dpopKey?: DpopKey;
}

/**
 * Output of {@link IdClient.userinfo}: the service's decrypted attributes keyed by scope name,
 * or (`data` empty) a provider's standard OpenID Connect claims.
 */
export interface UserinfoResult {
  sub: string;
  data: Record<string, string>;
  /** A provider's standard userinfo claims (JSON, or a signed and optionally encrypted JWT); absent for the service's encrypted attributes. */
  claims?: Record<string, unknown>;
}
