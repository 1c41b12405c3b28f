/**
 * Pending logins: the secrets of logins that were started but not yet completed, kept in the
 * user's session under one key and indexed by their `state`. Several can wait at once (one per
 * browser tab), the number is bounded, each one is taken out exactly once, and old ones expire.
 */

/** What is remembered about a login between the redirect to the service and the callback. */
export interface PendingLogin {
  /** The PKCE code verifier whose challenge was sent to the service. */
  codeVerifier: string;
  /** The nonce sent to the service, expected back in the ID token. */
  nonce: string;
  /** A safe same-site path to send the user to afterwards, when one was asked for. */
  returnTo?: string;
  /** When the login started, in ms since the epoch. */
  createdAt: number;
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

/** A session as this module needs it: any object with string keys (express-session's is one). */
export type SessionLike = Record<string, unknown>;

type PendingLoginMap = Map<string, PendingLogin>;

/** Longest `state` value looked up; ours are 43 characters. */
const MAX_STATE_LENGTH = 512;

function isPendingLogin(value: unknown): value is PendingLogin {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.codeVerifier === 'string' &&
    typeof v.nonce === 'string' &&
    typeof v.createdAt === 'number' &&
    Number.isFinite(v.createdAt) &&
    (v.returnTo === undefined || typeof v.returnTo === 'string')
  );
}

/** The valid entries stored under `key`, as a fresh map (anything malformed is left out). */
function readMap(session: SessionLike, key: string): PendingLoginMap {
  const stored = session[key];
  const map: PendingLoginMap = new Map();
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return map;
  for (const [state, login] of Object.entries(stored)) {
    if (isPendingLogin(login)) map.set(state, login);
  }
  return map;
}

/** Stores `map` as a plain JSON-friendly object (any session store can keep it), or removes it when empty. */
function writeMap(session: SessionLike, key: string, map: PendingLoginMap): void {
  // Object.fromEntries defines own properties, so no key can reach the prototype.
  if (map.size === 0) delete session[key];
  else session[key] = Object.fromEntries(map);
}

/** True when `login` is older than `ttl` ms at `now`. */
export function isExpired(login: PendingLogin, ttl: number, now: number): boolean {
  return now - login.createdAt > ttl;
}

/**
 * Remembers `login` under `state`. First drops expired logins, then, while more than
 * `limits.max` remain, the oldest ones.
 */
export function addPendingLogin(
  session: SessionLike,
  key: string,
  state: string,
  login: PendingLogin,
  limits: PendingLoginLimits,
): void {
  const map = readMap(session, key);
  const kept = [...map].filter(([, l]) => !isExpired(l, limits.ttl, limits.now));
  kept.push([state, login]);
  // Stable sort: logins started in the same millisecond keep their insertion order.
  kept.sort(([, a], [, b]) => a.createdAt - b.createdAt);
  const newest = kept.slice(Math.max(0, kept.length - limits.max));
  writeMap(session, key, new Map(newest));
}

/**
 * Takes the pending login for `state` out of the session and returns it, or `undefined` when
 * there is none. It is deleted before it is returned, so a second call with the same state,
 * such as a replayed callback, finds nothing.
 */
export function takePendingLogin(
  session: SessionLike,
  key: string,
  state: unknown,
): PendingLogin | undefined {
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

/** How many pending logins the session holds (expired ones included until the next add). */
export function countPendingLogins(session: SessionLike, key: string): number {
  return readMap(session, key).size;
}
