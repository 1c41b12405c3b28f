/** The provider's options, clients, personas and endpoint names. */
import type { webcrypto } from 'node:crypto';
import type { Clock } from '../clock.js';

/** One public key of a client: a PEM, a JWK (its `kid` is kept), or a key with an explicit `kid`. */
export type ClientPublicKey = string | webcrypto.JsonWebKey | { key: string | webcrypto.JsonWebKey; kid?: string };

/** A fictional end user the simulated mobile app can sign in as. */
export interface Persona {
  /** Stable identifier of the person inside the provider (never sent to clients). */
  id: string;
  /** Full name. */
  'profile.name': string;
  /** National identity number, well-formed with a valid check letter. */
  'profile.nric_number': string;
  /** Passport expiry date, `YYYY-MM-DD`. */
  'profile.passport_expiry_date': string;
}

/** A relying party registered with the provider. */
export interface ProviderClient {
  /** The client id issued at registration. */
  clientId: string;
  /** The client secret issued at registration. Left out for a `profile: 'fapi2'` client (private_key_jwt only). */
  clientSecret?: string;
  /** Callback URLs, matched exactly. `https`, or `http` on a loopback host only. */
  redirectUris: string[];
  /**
   * The client's RSA public key (at least 2048 bits): SPKI or PKCS#1 PEM, or a JWK. Userinfo is
   * encrypted to it. Give this or `publicKeys`; neither for a client served no userinfo
   * (`userinfo: false`, its own or the provider's).
   */
  publicKey?: string | webcrypto.JsonWebKey;
  /**
   * Several public keys, oldest first (for key rotation): PEM, JWK (its `kid` kept) or
   * `{ key, kid }`. Userinfo is encrypted to the last one, with its `kid` (default: the RFC 7638
   * thumbprint) in the JWE header.
   */
  publicKeys?: ClientPublicKey[];
  /** Name shown to the user in the mobile app. Default: the client id. */
  name?: string;
  /**
   * Back-channel logout: where the provider POSTs a logout token when the person signs out at the
   * provider (OpenID Connect Back-Channel Logout 1.0). `https`, or `http` on a loopback host.
   */
  backchannelLogoutUri?: string;
  /**
   * `'fapi2'`: the client follows the FAPI 2.0 Security Profile (pushed authorization requests,
   * DPoP, private_key_jwt, encrypted ID tokens); it then needs `jwks` or `jwksUri` and
   * `idTokenEncryptedResponseAlg`, and no `clientSecret`. Left out: the service as the spec
   * describes it.
   */
  profile?: 'fapi2';
  /** FAPI 2.0: the client's public keys as a JWKS (`{ keys: [...] }`), each with a `kid`: a signing key and an `enc` key. */
  jwks?: { keys: webcrypto.JsonWebKey[] };
  /** FAPI 2.0: the URL of the client's hosted public JWKS (https, or http on loopback), instead of `jwks`. */
  jwksUri?: string;
  /**
   * FAPI 2.0: how ID tokens are encrypted to the client's `enc` key: `'ECDH-ES'`,
   * `'ECDH-ES+A128KW'`, `'ECDH-ES+A192KW'`, `'ECDH-ES+A256KW'` (an EC P-256, P-384, P-521 or
   * OKP X25519 key) or `'RSA-OAEP-256'` (an RSA key).
   */
  idTokenEncryptedResponseAlg?: 'ECDH-ES' | 'ECDH-ES+A128KW' | 'ECDH-ES+A192KW' | 'ECDH-ES+A256KW' | 'RSA-OAEP-256';
  /**
   * FAPI 2.0: the content encryption of ID tokens: `'A128GCM'`, `'A192GCM'`, `'A256GCM'` (the
   * default), `'A128CBC-HS256'`, `'A192CBC-HS384'` or `'A256CBC-HS512'`.
   */
  idTokenEncryptedResponseEnc?: 'A128GCM' | 'A192GCM' | 'A256GCM' | 'A128CBC-HS256' | 'A192CBC-HS384' | 'A256CBC-HS512';
  /**
   * FAPI 2.0: how ID tokens are signed: `'PS256'`, `'ES256'` or `'EdDSA'` (FAPI 2.0 section 5.4.1),
   * or the spec's `'RS256'` for a client that does not verify those yet. Default `'PS256'`.
   */
  idTokenSignedResponseAlg?: 'PS256' | 'ES256' | 'EdDSA' | 'RS256';
  /**
   * `false`: this client is served no userinfo. Its sign-in is from the ID token alone: it may ask
   * for `openid` only, its access token gets 403 `insufficient_scope` at userinfo, and it needs no
   * `publicKey`. Default true. (See also the provider's `userinfo` option.)
   */
  userinfo?: boolean;
}

/** Lifetimes, in seconds. */
export interface ProviderTtl {
  /** How long a QR page (pending authorization) can be approved. Default 120. */
  authorization?: number;
  /** How long an authorization code can be redeemed. Default 60. */
  code?: number;
  /** Lifetime of access tokens and of ID tokens (`exp`). Default 600. */
  accessToken?: number;
  /** How long a rotated-out signing key stays in the JWKS. Default 3600. */
  signingKeyGrace?: number;
}

/** Options of {@link createProvider}. */
export interface ProviderOptions {
  /** The service origin, e.g. `http://127.0.0.1:4000` (no path). The issuer is `baseUrl + '/v2'` (see `basePath`, `issuerPath`). */
  baseUrl: string;
  /** Registered clients. At least one. */
  clients: ProviderClient[];
  /** People to sign in as, or the path of a JSON file holding them. Default {@link DEFAULT_PERSONAS}. */
  personas?: readonly Persona[] | string;
  /**
   * `false` (default): authorize shows the QR page and waits for the mobile app.
   * `true`: authorize redirects at once with a code for the first persona. A persona id: the same, for that persona.
   */
  autoApprove?: boolean | string;
  /** Lifetimes. */
  ttl?: ProviderTtl;
  /**
   * The RS256 ID-token signing key: an RSA private key as PEM text, as a JWK (JSON text or an
   * object), or `{ file }` to read either. Default: a fresh 2048-bit key per process.
   */
  signingKey?: string | Record<string, unknown> | { file: string };
  /**
   * Signing keys of any algorithm the provider signs with (RS256, PS256, ES256, EdDSA): a private
   * JWKS `{ keys: [...] }`, each key with its `alg` (at most one per algorithm), as an object, its
   * JSON text, or `{ file }` to read it (`nd-id-provider init` writes one). Keep them, and every
   * `kid` in the JWKS stays the same across restarts. An algorithm without a key here gets a fresh
   * one per process. The RS256 key goes here or in `signingKey`, not both.
   */
  signingKeys?: string | { keys: readonly Record<string, unknown>[] } | { file: string };
  /**
   * HMAC key of the pairwise `sub`. Default: random per process, so every `sub` changes on restart.
   * Set it (at least 16 characters) to keep `sub` values stable across restarts.
   */
  subjectSecret?: string;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: Clock;
  /**
   * Most pending authorizations waiting for the phone's answer at once. Default 10 000. When
   * full, new authorize requests get a 429 page; a live one is never evicted. An answered one
   * stops counting at once.
   */
  maxPending?: number;
  /**
   * Most live pending authorizations started from one source address (the TCP peer). Default 20.
   * Past it, that address gets a 429 page until one of its QR logins is answered on the phone
   * (approved, denied, a wrong number), cancelled, or expires: each gives its place back at once.
   */
  maxPendingPerAddress?: number;
  /** Most authorization codes kept at once. Default 10 000. */
  maxCodes?: number;
  /** Most access tokens kept at once. Default 10 000. */
  maxAccessTokens?: number;
  /** Interval at which the QR page polls for the decision, in ms. Default 1000. */
  pollIntervalMs?: number;
  /**
   * Logging of requests and outcomes (never secrets, tokens or personal data).
   * Off by default; `true` writes to stderr; a function receives each line.
   */
  log?: boolean | ((line: string) => void);
  /**
   * Serve the HTTP control of fault injection: `POST`, `GET` and `DELETE /_provider/faults`
   * (see {@link FaultControl}). Off by default, and those paths then answer 404. Anyone who can
   * reach the provider can make it fail while this is on: for tests and CI only.
   */
  faultControl?: boolean;
  /**
   * Serve the audit at `GET /_provider/audit` (optionally `?client_id=`): `{ findings: [...] }`,
   * see {@link Provider.audit}. Off by default, and that path then answers 404.
   */
  auditEndpoint?: boolean;
  /**
   * Start the offline conformance plan for the first registered client at once (see
   * {@link Provider.conformance}), and serve `GET /_provider/conformance` (results) and
   * `POST /_provider/conformance/report` (`{ "caseId", "signedIn" }`). Off by default.
   */
  conformance?: boolean;
  /**
   * The path prefix the provider is mounted under (for example `'/idp'` with
   * `app.use('/idp', provider.handler)`). The issuer is `baseUrl + basePath + '/v2'` and every
   * URL the provider shows starts with it. Default '' (mounted at the root).
   */
  basePath?: string;
  /**
   * A bearer token (16 to 512 characters) the test controls require: `GET /_provider/audit`,
   * `/_provider/conformance*` and `/_provider/faults*` then answer 401 without
   * `Authorization: Bearer <controlToken>`. Default: none (anyone who can reach the port may
   * use the controls that are turned on).
   */
  controlToken?: string;
  /**
   * Spec-only client authentication at the token endpoint: `client_id` and `client_secret` in an
   * `application/json` body, as spec 4.2 names it. A form body or HTTP Basic is then refused
   * (`invalid_request`, or `invalid_client` for Basic) and recorded by the audit as
   * `client_auth_outside_spec`. Off by default: both are accepted and advertised in discovery.
   */
  strictClientAuth?: boolean;
  /**
   * The verdict of `POST /_provider/conformance/finish` (and of the CLI's exit status) also fails
   * when the audit has findings. Off by default: only failed conformance cases fail it.
   */
  auditStrict?: boolean;
  /**
   * FAPI 2.0: require a server nonce in DPoP proofs (RFC 9449 section 8). A proof without the
   * current nonce is answered `use_dpop_nonce` with a `DPoP-Nonce` header (400 at PAR and token,
   * 401 at userinfo), so a client's one retry can be tested. Off by default.
   */
  dpopNonce?: boolean;
  /**
   * The issuer's path below `baseUrl + basePath`; every protocol endpoint follows it
   * (`{issuer}/oauth/token`, `{issuer}/.well-known/openid-configuration`). `'/'`: the issuer is the
   * origin. Default `'/v2'`, the spec's service.
   */
  issuerPath?: string;
  /**
   * `false`: authorization responses (codes and errors) carry no RFC 9207 `iss` parameter, and
   * discovery leaves out `authorization_response_iss_parameter_supported`, as some providers do.
   * Default true: every response carries it and discovery says so.
   */
  authorizationResponseIss?: boolean;
  /**
   * `false`: the provider has no userinfo endpoint (not routed, not in discovery); only the
   * `openid` scope is accepted and every sign-in is from the ID token alone; clients need no
   * `publicKey`. Default true. A client can be served none alone with its own `userinfo: false`.
   */
  userinfo?: boolean;
}

/** The endpoints of the provider, as named for hooks and logs. */
export type ProviderEndpoint =
  | 'authorize'
  | 'par'
  | 'status'
  | 'continue'
  | 'mobile'
  | 'token'
  | 'userinfo'
  | 'jwks'
  | 'discovery'
  | 'control'
  | 'backchannel_logout';
