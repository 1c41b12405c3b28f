/**
 * Logins started and not yet completed, in the session under one key, by `state`: one per tab,
 * bounded, taken out exactly once, expiring, and bound to the issuer, client and callback URL.
 */
import { isStoredDpopKey, type StoredDpopKey } from '../client/dpop.js';
import type { FlowSession } from './session.js';

/** Who a login was started for: completed only by the same issuer, client and callback URL. */
export interface LoginBinding {
  /** The service's issuer. */
  issuer: string;
  /** The app's client id. */
  clientId: string;
  /** The callback (redirect) URL the login was started with. */
  redirectUri: string;
}

/** What is remembered about a login between the redirect to the service and the callback. */
export interface PendingLogin extends Partial<LoginBinding> {
  /** The PKCE code verifier whose challenge was sent to the service. */
  codeVerifier: string;
  /** The nonce sent to the service, expected back in the ID token. */
  nonce: string;
  /** A safe same-site path to send the user to afterwards, when one was asked for. */
  returnTo?: string;
  /** When the login started, in ms since the epoch. */
  createdAt: number;
  /** The scopes requested, space-separated. */
  scope?: string;
  /** `max_age` sent with this login (a step-up), in seconds. */
  maxAge?: number;
  /** FAPI 2.0: the login's DPoP private key, for the callback's proofs. */
  dpop?: StoredDpopKey;
}

/** Limits applied when a pending login is added. */
export interface PendingLoginLimits {
  /** Most pending logins kept; the oldest go first. */
  max: number;
  /** Age in ms after which a pending login is dropped. */
  ttl: number;
  /** The current time in ms since the epoch. */
  now: number;
}

type PendingLoginMap = Map<string, PendingLogin>;

/** Longest `state` value looked up; ours are 43 characters. */
export const MAX_STATE_LENGTH = 512;

const OPTIONAL_STRINGS = ['returnTo', 'scope', 'issuer', 'clientId', 'redirectUri'] as const;

function isPendingLogin(value: unknown): value is PendingLogin {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.codeVerifier === 'string' &&
    typeof v.nonce === 'string' &&
    typeof v.createdAt === 'number' &&
    Number.isFinite(v.createdAt) &&
    OPTIONAL_STRINGS.every((k) => v[k] === undefined || typeof v[k] === 'string') &&
    (v.maxAge === undefined || (typeof v.maxAge === 'number' && Number.isInteger(v.maxAge) && v.maxAge >= 0)) &&
    (v.dpop === undefined || isStoredDpopKey(v.dpop))
  );
}

/**
 * One entry of an array, state inside: an object keyed by state would give every login a new
 * property name, which engines and JSON session stores handle far more slowly.
 */
type StoredLogin = PendingLogin & { state: string };

/** The valid entries stored under `key`, as a fresh map (anything malformed is left out). */
function readMap(session: FlowSession, key: string): PendingLoginMap {
  const stored = session.get(key);
  const map: PendingLoginMap = new Map();
  if (Array.isArray(stored)) {
    for (const entry of stored as unknown[]) {
      if (!isPendingLogin(entry) || typeof (entry as Partial<StoredLogin>).state !== 'string') continue;
      const { state, ...login } = entry as StoredLogin;
      map.set(state, login);
    }
  } else if (typeof stored === 'object' && stored !== null) {
    // The earlier format, an object keyed by state: still read, so logins in flight survive an upgrade.
    for (const [state, login] of Object.entries(stored)) {
      if (isPendingLogin(login)) map.set(state, { ...login });
    }
  }
  return map;
}

/** Writes a fresh array through `set` (cookie sessions persist only on `set`), or deletes the key when empty. */
function writeMap(session: FlowSession, key: string, map: PendingLoginMap): void {
  if (map.size === 0) session.delete(key);
  // The state last, so no field of a (tampered) stored login can stand in for it.
  else
    session.set(
      key,
      Array.from(map, ([state, login]): StoredLogin => ({ ...login, state })),
    );
}

/** True when `login` is older than `ttl` ms at `now`. */
export function isExpired(login: PendingLogin, ttl: number, now: number): boolean {
  return now - login.createdAt > ttl;
}

/**
 * Remembers `login` under `state`, dropping expired logins, then the oldest beyond `limits.max`.
 * Returns the states of live logins dropped (for diagnosis).
 */
export function addPendingLogin(
  session: FlowSession,
  key: string,
  state: string,
  login: PendingLogin,
  limits: PendingLoginLimits,
): string[] {
  const map = readMap(session, key);
  const kept = [...map].filter(([, l]) => !isExpired(l, limits.ttl, limits.now));
  kept.push([state, login]);
  // Stable sort: logins started in the same millisecond keep their insertion order.
  kept.sort(([, a], [, b]) => a.createdAt - b.createdAt);
  const cut = Math.max(0, kept.length - limits.max);
  writeMap(session, key, new Map(kept.slice(cut)));
  return kept.slice(0, cut).map(([s]) => s);
}

/**
 * The callback URLs, other than `redirectUri`, of live logins kept under `key`: another strategy
 * sharing the key (or a changed callback URL with logins still in progress). Empty when none.
 */
export function otherCallbacks(
  session: FlowSession,
  key: string,
  redirectUri: string,
  limits: Pick<PendingLoginLimits, 'ttl' | 'now'>,
): string[] {
  const others = new Set<string>();
  for (const login of readMap(session, key).values()) {
    const uri = login.redirectUri;
    if (uri !== undefined && uri !== redirectUri && !isExpired(login, limits.ttl, limits.now)) others.add(uri);
  }
  return [...others];
}

/** Takes the login for `state` out of the session (deleted before it is returned: a replay finds nothing). */
export function takePendingLogin(session: FlowSession, key: string, state: unknown): PendingLogin | undefined {
  if (typeof state !== 'string' || state.length === 0 || state.length > MAX_STATE_LENGTH) {
    return undefined;
  }
  const map = readMap(session, key);
  const login = map.get(state);
  if (login === undefined) return undefined;
  map.delete(state);
  writeMap(session, key, map);
  return login;
}

/** The states of the pending logins the session holds. */
export function pendingStates(session: FlowSession, key: string): string[] {
  return [...readMap(session, key).keys()];
}

/** How many pending logins the session holds (expired ones included until the next add). */
export function countPendingLogins(session: FlowSession, key: string): number {
  return readMap(session, key).size;
}

/** True when `login` was started for exactly `binding`; a login with no binding recorded is never a match. */
export function isBoundTo(login: PendingLogin, binding: LoginBinding): boolean {
  return (
    login.issuer === binding.issuer && login.clientId === binding.clientId && login.redirectUri === binding.redirectUri
  );
}
