/**
 * The kinds of fault and the endpoints each applies to. A fault lasts `times` requests or `forMs`
 * of the provider's clock (whichever ends first; one request by default); each request meets at
 * most the oldest fault that applies. Only the five endpoints a relying party calls are faulted,
 * never the QR page's polling or the mobile app. In process: `provider.faults`; over HTTP:
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
 * Answer this status without handling the request (a code is not consumed): JSON endpoints get an
 * OAuth error body (`temporarily_unavailable` with `Retry-After` for 503), authorize the HTML page.
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

/** Send the first half of the real JSON body with a matching Content-Length: complete, but unparsable. JSON endpoints. */
export interface TruncatedFault {
  kind: 'truncated';
}

/** Answer 200 with an HTML page, as a captive portal would. JSON endpoints. */
export interface NonJsonFault {
  kind: 'non_json';
}

/**
 * Faults of the ID token the token endpoint returns (the code is consumed, the access token works):
 * - `bad_signature`: a signature that does not verify;
 * - `rotated_key`: the key is rotated for good just before signing, so the `kid` is new to the
 *   client but published;
 * - `unknown_key`: signed by a key never published;
 * - `expired_id_token`: `exp` an hour ago;
 * - `wrong_audience`: `aud` names another client.
 */
export interface IdTokenFault {
  kind: 'bad_signature' | 'rotated_key' | 'unknown_key' | 'expired_id_token' | 'wrong_audience';
}

/** Userinfo answers normally but with another `sub` than the access token's. Userinfo only. */
export interface SubMismatchFault {
  kind: 'sub_mismatch';
}

/** Discovery names another `issuer` than it is served under: an app must refuse it (OpenID Discovery 4.3, RFC 8414 3.3). */
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
