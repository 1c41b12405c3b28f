/**
 * Public shapes of the provider: its options, its registered clients, its personas and the
 * object {@link createProvider} returns.
 */
import type { Express } from 'express';
import type { webcrypto } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { FaultControl } from './faults.js';
import type { AuditFinding } from './testing/audit.js';
import type { ConformancePlan } from './testing/conformance.js';
import type { ApproveNextOptions } from './testing/approve-next.js';
import type { ClientPublicKey } from './testing/client-keys.js';
import type { PersonaDirectory } from './testing/persona-directory.js';

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
  /** The client secret issued at registration. */
  clientSecret: string;
  /** Callback URLs, matched exactly. `https`, or `http` on a loopback host only. */
  redirectUris: string[];
  /**
   * The client's RSA public key (at least 2048 bits): SPKI or PKCS#1 PEM, or a JWK. Userinfo is
   * encrypted to it. Give this or `publicKeys`.
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
  /** The service origin, e.g. `http://127.0.0.1:4000` (no path). The issuer is `baseUrl + '/v2'`. */
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
  /** ID-token signing key: an RSA private key PEM, or `{ file }` to read one. Default: a fresh 2048-bit key per process. */
  signingKey?: string | { file: string };
  /**
   * HMAC key of the pairwise `sub`. Default: random per process, so every `sub` changes on restart.
   * Set it (at least 16 characters) to keep `sub` values stable across restarts.
   */
  subjectSecret?: string;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: Clock;
  /**
   * Most pending authorizations kept at once. Default 10 000. When full, new authorize requests
   * get a 429 page; a live one is never evicted.
   */
  maxPending?: number;
  /**
   * Most live pending authorizations started from one source address (the TCP peer). Default 20.
   * Past it, that address gets a 429 page until its QR pages expire or are answered.
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
}

/** The endpoints of the provider, as named for hooks and logs. */
export type ProviderEndpoint =
  | 'authorize'
  | 'status'
  | 'continue'
  | 'mobile'
  | 'token'
  | 'userinfo'
  | 'jwks'
  | 'discovery';

/** A running provider: an Express app and its controls. */
export interface Provider {
  /** The Express app: listen on it or mount it. */
  app: Express;
  /** `baseUrl + '/v2'`. */
  issuer: string;
  /** The service origin. */
  baseUrl: string;
  /** The people the mobile app can sign in as: an array, changeable with `add(persona)` and `remove(id)`. */
  personas: PersonaDirectory;
  /** The clock the provider reads (movable with {@link Provider.advanceClock}); hand it to a relying party as its `clock`. */
  clock: Clock;
  /** Moves the provider's clock forward by `ms`: codes, tokens and QR pages expire without waiting. */
  advanceClock(ms: number): void;
  /**
   * Answers the next authorization request (of `clientId`, or any) at once, without the QR page:
   * approved as a persona, with changed ID-token claims or attribute values, or denied. Calls queue.
   */
  approveNext(options?: ApproveNextOptions): void;
  /** Replaces a client's public keys (oldest first; userinfo is encrypted to the last). */
  setClientKeys(clientId: string, publicKeys: ClientPublicKey[]): void;
  /** Publish a new signing key and sign with it; the old key stays in the JWKS for `ttl.signingKeyGrace`. */
  rotateSigningKey(): Promise<void>;
  /** The pairwise `sub` a client receives for a persona (for tests and tooling). */
  subjectFor(clientId: string, personaId: string): string;
  /** Make the provider misbehave on purpose, for tests: see {@link FaultControl}. */
  faults: FaultControl;
  /**
   * What the relying party did wrong so far (of `clientId`, or of every client): reused or missing
   * state, nonce or PKCE challenge, codes redeemed twice, wrong secrets, unregistered redirect URIs,
   * and ID tokens it did not check. Each finding has a stable `code`, a `message`, a `count` and
   * `firstSeen`. Nothing the client sent is stored, only keyed hashes, capped per client.
   */
  audit(clientId?: string): AuditFinding[];
  /**
   * The offline conformance plan: after `start()`, consecutive authorizations of the client each
   * receive one hostile (or positive) case; `results()` says, per case, whether the app passed.
   */
  conformance: ConformancePlan;
  /** Forget every pending authorization, code, access token and injected fault; end latency waits. */
  close(): void;
}
