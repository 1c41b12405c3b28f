/**
 * The kinds of fault a provider can be made to show, and which endpoints each applies to.
 *
 * A fault applies to the next `times` requests of an endpoint, or for `forMs` milliseconds of
 * the provider's clock (whichever ends first when both are given; the next single request when
 * neither is). Each request meets at most one fault: the oldest active fault that applies to its
 * endpoint, which then uses up one of its `times`. Faults reach the five endpoints a relying
 * party talks to (`authorize`, `token`, `userinfo`, `jwks`, `discovery`); the QR page's own
 * polling and the simulated mobile app are never faulted.
 *
 * Use it in-process through `provider.faults`, or, from another process or language, over
 * HTTP when the provider runs with `faultControl: true` (CLI: `--fault-control`), see
 * `control-routes.ts`.
 */
/** The endpoints a fault can target. */
export const FAULT_ENDPOINTS = ['authorize', 'token', 'userinfo', 'jwks', 'discovery'] as const;

/** An endpoint a fault can target. */
export type FaultEndpoint = (typeof FAULT_ENDPOINTS)[number];

/** Wait `ms` milliseconds (real time), then answer normally. Any endpoint. */
export interface LatencyFault {
  kind: 'latency';
  /** Delay in ms, a whole number from 0 to 600 000. */
  ms: number;
}

/**
 * Answer with this HTTP status instead of handling the request (the request is not processed:
 * a code is not consumed). JSON endpoints get an OAuth error body (`temporarily_unavailable`
 * with `Retry-After` for 503, `server_error` for other 5xx, `invalid_request` for 4xx);
 * authorize gets the provider's HTML error page. Any endpoint.
 */
export interface StatusFault {
  kind: 'status';
  /** A whole number from 400 to 599, typically 500 or 503. */
  status: number;
}

/** Close the connection abruptly (TCP reset) without answering. Any endpoint. */
export interface ResetFault {
  kind: 'reset';
}

/**
 * Handle the request normally, then send only the first half of the JSON body (with a
 * matching Content-Length, so the client sees a complete but unparsable answer).
 * JSON endpoints: token, userinfo, jwks, discovery.
 */
export interface TruncatedFault {
  kind: 'truncated';
}

/**
 * Answer 200 with an HTML page, as an intercepting proxy or captive portal would, instead of
 * handling the request. JSON endpoints: token, userinfo, jwks, discovery.
 */
export interface NonJsonFault {
  kind: 'non_json';
}

/**
 * Faults of the ID token returned by the token endpoint (which otherwise answers normally,
 * so the code is consumed and the access token works):
 *
 * - `bad_signature`: the provider's own header and claims, with a signature that does not
 *   verify (one the provider's key made over other claims).
 * - `rotated_key`: the provider rotates its signing key (for good, as
 *   {@link Provider.rotateSigningKey} does) just before signing, so the token names a `kid`
 *   the client has not cached yet; the new key is published, so a refetch finds it.
 * - `unknown_key`: signed by a key that is never published, under its own `kid`.
 * - `expired_id_token`: `exp` one hour in the past (`iat` one lifetime before that).
 * - `wrong_audience`: `aud` names another client.
 */
export interface IdTokenFault {
  kind: 'bad_signature' | 'rotated_key' | 'unknown_key' | 'expired_id_token' | 'wrong_audience';
}

/** Userinfo answers normally but with another `sub` than the access token's. Userinfo only. */
export interface SubMismatchFault {
  kind: 'sub_mismatch';
}

/**
 * The discovery document names another `issuer` than the one it is served under (its endpoints
 * unchanged): an app must refuse it (OpenID Discovery 4.3, RFC 8414 3.3) and not start a login.
 * Discovery only.
 */
export interface IssuerMismatchFault {
  kind: 'issuer_mismatch';
}

/** One way for the provider to misbehave. */
export type Fault =
  | LatencyFault
  | StatusFault
  | ResetFault
  | TruncatedFault
  | NonJsonFault
  | IdTokenFault
  | SubMismatchFault
  | IssuerMismatchFault;

/** The name of a kind of fault. */
export type FaultKind = Fault['kind'];

/** Which requests a fault applies to, and for how long. */
export interface FaultOptions {
  /**
   * The endpoint, or `'all'` for every endpoint the kind applies to. Default: `'all'` for
   * latency, status, reset, truncated and non_json; `'token'` for ID-token faults;
   * `'userinfo'` for sub_mismatch; `'discovery'` for issuer_mismatch.
   */
  endpoint?: FaultEndpoint | 'all';
  /** Apply to this many requests (a whole number from 1 to 1 000 000). Default 1 when `forMs` is not given either. */
  times?: number;
  /** Apply for this long, in ms of the provider's clock (1 to 86 400 000). */
  forMs?: number;
}

/** Returned by {@link FaultControl.inject}. */
export interface FaultHandle {
  /** The fault's id, as listed by {@link FaultControl.active} and the HTTP control. */
  readonly id: number;
  /** Remove this fault now (no effect once it has ended). */
  clear(): void;
}

/** An active fault, as listed by {@link FaultControl.active}. A snapshot: changing it changes nothing. */
export interface ActiveFault {
  /** Its id. */
  id: number;
  /** What it does. */
  fault: Fault;
  /** Where it applies. */
  endpoint: FaultEndpoint | 'all';
  /** Requests it still applies to, when it was injected with `times`. */
  remaining?: number;
  /** When it ends (ms since the epoch, provider's clock), when it was injected with `forMs`. */
  expiresAt?: number;
}

/** The fault-injection controls of a provider: {@link Provider.faults}. */
export interface FaultControl {
  /**
   * Make the provider misbehave.
   * @throws TypeError with a sentence naming the mistake, when the fault or the options are not
   *   valid (unknown kind or endpoint, a kind that cannot apply to the endpoint, a bad number),
   *   or when 1 000 faults are already active.
   */
  inject(fault: Fault, options?: FaultOptions): FaultHandle;
  /** Remove every fault. */
  clear(): void;
  /** The faults still active. */
  active(): ActiveFault[];
}

/** Every fault kind. */
export const KINDS: readonly FaultKind[] = [
  'latency',
  'status',
  'reset',
  'truncated',
  'non_json',
  'bad_signature',
  'rotated_key',
  'unknown_key',
  'expired_id_token',
  'wrong_audience',
  'sub_mismatch',
  'issuer_mismatch',
];
/** The endpoints answering JSON. */
export const JSON_ENDPOINTS: readonly FaultEndpoint[] = ['token', 'userinfo', 'jwks', 'discovery'];
/** The endpoints each kind can apply to. */
export const APPLIES_TO: Readonly<Record<FaultKind, readonly FaultEndpoint[]>> = {
  latency: FAULT_ENDPOINTS,
  status: FAULT_ENDPOINTS,
  reset: FAULT_ENDPOINTS,
  truncated: JSON_ENDPOINTS,
  non_json: JSON_ENDPOINTS,
  bad_signature: ['token'],
  rotated_key: ['token'],
  unknown_key: ['token'],
  expired_id_token: ['token'],
  wrong_audience: ['token'],
  sub_mismatch: ['userinfo'],
  issuer_mismatch: ['discovery'],
};
