/**
 * A session sealed in one cookie, for fetch-standard handlers without session middleware: a compact
 * JWE (`dir` + `A256GCM`) under a key derived from the secret and the cookie name (so stores with
 * other names cannot open it), `kid` for rotation, an `exp`, a bounded size. A browser can always
 * resend an old copy: the replay store, not the cookie, refuses a replayed callback.
 */
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { assertNodeBuiltins } from '../client/runtime-check.js';
import { decryptJwe, handledHere, readCompactJwe } from '../jose/jwe-decrypt.js';
import { sealDirA256Gcm } from '../jose/jwe-encrypt.js';
import { IdError } from '../errors.js';
import { checkOptionNames, ownOptions } from '../options-check.js';
import type { FlowSession } from '../flow/session.js';

/** Default cookie name of {@link createCookieSession}. */
export const DEFAULT_COOKIE_SESSION_NAME = 'nd-id.session';
/** Default lifetime of a cookie session: 8 hours, in ms. */
export const DEFAULT_COOKIE_SESSION_MAX_AGE_MS = 8 * 60 * 60 * 1000;
/** Most bytes a sealed `Set-Cookie` value may take; browsers keep about 4096 per cookie. */
export const MAX_COOKIE_SESSION_BYTES = 3800;
/** Shortest secret accepted, in characters. */
export const MIN_COOKIE_SESSION_SECRET_LENGTH = 32;

/** Options of {@link createCookieSession}. */
export interface CookieSessionOptions {
  /**
   * Secret of at least 32 characters the cookie is sealed with (keep it out of the code, e.g.
   * `process.env.SESSION_SECRET`). An array seals with the first and opens with any, to rotate.
   */
  secret: string | readonly string[];
  /** Cookie name. Default `'nd-id.session'`. */
  cookieName?: string;
  /** Session lifetime **in milliseconds**, sealed in the cookie and set as its Max-Age. Default 8 hours. */
  maxAge?: number;
  /** `Secure` attribute. Default: true when the request URL is https. */
  secure?: boolean;
  /** Cookie path. Default `'/'`. */
  path?: string;
  /** Clock in ms since the epoch. Default `Date.now`. */
  clock?: () => number;
}

/** One request's cookie session: a {@link FlowSession} whose changes are written back by {@link CookieSessionStore.commit}. */
export interface CookieFlowSession extends FlowSession {
  /** Starts a fresh session: a new id and no data (done at sign-in, against session fixation). */
  regenerate(): Promise<void>;
  /** Ends the session: the cookie is cleared on commit. */
  destroy(): void;
  /** A random id of this session, new after {@link regenerate}. Not a secret: the data stays sealed. */
  readonly id: string;
  /** True when anything changed since it was loaded. */
  readonly changed: boolean;
}

/** Reads and writes sealed cookie sessions. */
export interface CookieSessionStore {
  /** The cookie's name. */
  readonly cookieName: string;
  /** The request's session, or a fresh empty one when there is none or it cannot be opened or has expired. */
  load(request: Request): Promise<CookieFlowSession>;
  /**
   * The `Set-Cookie` header value for `session`, or `undefined` when nothing changed. The
   * response that carries it must say `Cache-Control: no-store` (the fetch handlers do).
   * @throws IdError `session_store_unavailable` when the sealed data exceeds {@link MAX_COOKIE_SESSION_BYTES}.
   */
  commit(session: CookieFlowSession, request: Request): Promise<string | undefined>;
}

/** Adds a `Set-Cookie` with `Cache-Control: no-store`: a shared cache would hand the session to the next visitor. */
export function appendSessionCookie(headers: Headers, setCookie: string): void {
  headers.append('set-cookie', setCookie);
  headers.set('cache-control', 'no-store');
}

/** The protected header parameter naming the cookie a seal belongs to. */
const COOKIE_HEADER_PARAMETER = 'cookie';

interface SealKey {
  kid: string;
  key: Uint8Array;
}

/** The key of `secret` for the cookie `cookieName` (HKDF, the name in the info), and its `kid` (a hash of the key, not of the secret). */
function deriveKey(secret: string, cookieName: string): SealKey {
  const key = new Uint8Array(
    hkdfSync('sha256', secret, 'passport-nd-id', `cookie-session dir+A256GCM ${cookieName}`, 32),
  );
  return { kid: createHash('sha256').update(key).digest('base64url').slice(0, 16), key };
}

/** What is sealed: the session id, the data, and (as `exp`) when it ends. */
interface Sealed {
  sid: string;
  data: Record<string, unknown>;
  exp: number;
}

function isSealed(value: unknown): value is Sealed {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.sid === 'string' &&
    typeof v.exp === 'number' &&
    typeof v.data === 'object' &&
    v.data !== null &&
    !Array.isArray(v.data)
  );
}

/** The value of cookie `name` in a `Cookie` header, without the double quotes RFC 6265 allows around it; or undefined. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
  }
  return undefined;
}

function newId(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Creates a store of sessions sealed in a cookie (a compact JWE, `dir` + `A256GCM`; HttpOnly,
 * SameSite=Lax). With several secrets the first seals and any opens (rotation, by `kid`).
 *
 * ```ts
 * const sessions = createCookieSession({ secret: process.env.SESSION_SECRET! });
 * ```
 * @throws TypeError naming the option when the secret is short or an option is wrong.
 */
export function createCookieSession(options: CookieSessionOptions): CookieSessionStore {
  const who = 'createCookieSession';
  assertNodeBuiltins(who);
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(
      `${who}: options must be an object with a secret of at least ${MIN_COOKIE_SESSION_SECRET_LENGTH} characters.`,
    );
  }
  checkOptionNames(options, 'createCookieSession()');
  options = ownOptions(options);
  const store = resolveCookieStore(options, who);
  return {
    cookieName: store.cookieName,
    load: (request) => loadSession(store, request),
    commit: (session, request) => commitSession(store, session, request),
  };
}

/** What the steps of one store share: its checked options, its keys, and the state of each session it gave out. */
interface CookieStore {
  readonly who: string;
  readonly cookieName: string;
  readonly maxAge: number;
  readonly path: string;
  readonly secure: boolean | undefined;
  readonly clock: () => number;
  readonly keys: SealKey[];
  readonly states: WeakMap<CookieFlowSession, SessionState>;
}

/** One session of a request, as loaded and as changed since. */
interface SessionState {
  id: string;
  data: Record<string, unknown>;
  expiresAt: number;
  changed: boolean;
  destroyed: boolean;
}

/** Options resolution: the secrets, the cookie's name, lifetime and path, checked; the keys derived. */
function resolveCookieStore(options: CookieSessionOptions, who: string): CookieStore {
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  if (
    !Array.isArray(secrets) ||
    secrets.length === 0 ||
    !secrets.every((s) => typeof s === 'string' && s.length >= MIN_COOKIE_SESSION_SECRET_LENGTH)
  ) {
    throw new TypeError(
      `${who}: secret must be a string (or an array of strings) of at least ${MIN_COOKIE_SESSION_SECRET_LENGTH} random characters, like process.env.SESSION_SECRET.`,
    );
  }
  const cookieName = options.cookieName ?? DEFAULT_COOKIE_SESSION_NAME;
  if (typeof cookieName !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(cookieName)) {
    throw new TypeError(`${who}: cookieName must be a cookie name token, like "${DEFAULT_COOKIE_SESSION_NAME}".`);
  }
  const maxAge = options.maxAge ?? DEFAULT_COOKIE_SESSION_MAX_AGE_MS;
  if (typeof maxAge !== 'number' || !Number.isFinite(maxAge) || maxAge < 60_000) {
    throw new TypeError(`${who}: maxAge is in milliseconds and must be at least 60000 (8 hours is 28800000).`);
  }
  const path = options.path ?? '/';
  if (typeof path !== 'string' || !path.startsWith('/') || /[;\s]/.test(path)) {
    throw new TypeError(`${who}: path must be a URL path starting with "/", like "/".`);
  }
  if (options.secure !== undefined && typeof options.secure !== 'boolean') {
    throw new TypeError(`${who}: secure must be true or false (default: true on https).`);
  }
  return {
    who,
    cookieName,
    maxAge,
    path,
    secure: options.secure,
    clock: options.clock ?? Date.now,
    keys: secrets.map((secret) => deriveKey(secret, cookieName)),
    states: new WeakMap(),
  };
}

/** The key a sealed cookie's header names: this cookie's, with one of the store's secrets. */
function keyFor(store: CookieStore, header: Record<string, unknown>): Buffer {
  if (!handledHere(header, ['dir']) || header.enc !== 'A256GCM') throw new Error('another algorithm');
  if (header[COOKIE_HEADER_PARAMETER] !== store.cookieName) throw new Error('sealed for another cookie');
  const found = store.keys.find((k) => k.kid === header.kid);
  if (found === undefined) throw new Error('sealed with an unknown key');
  return Buffer.from(found.key);
}

/** The sealed value of the cookie, opened and checked, or undefined. Bounded before any parsing. */
async function open(store: CookieStore, text: string): Promise<Sealed | undefined> {
  if (text.length > MAX_COOKIE_SESSION_BYTES || !/^[A-Za-z0-9_.-]+$/.test(text)) return undefined;
  try {
    const jwe = readCompactJwe(text);
    const plaintext = decryptJwe(jwe, keyFor(store, jwe.header));
    const payload: unknown = JSON.parse(new TextDecoder().decode(plaintext));
    // Expired at `exp` (seconds), as a JWT: open while `exp` is after the current second.
    const exp = (payload as { exp?: unknown } | null)?.exp;
    if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= Math.floor(store.clock() / 1000)) return undefined;
    return isSealed(payload) ? payload : undefined;
  } catch {
    return undefined; // another secret or cookie, altered, expired, or an older format
  }
}

/** The session a request works with, over its state. */
function sessionOver(store: CookieStore, state: SessionState): CookieFlowSession {
  const session: CookieFlowSession = {
    get: (key) => (Object.hasOwn(state.data, key) ? state.data[key] : undefined),
    set: (key, value) => {
      // JSON round trip: the sealed copy is what the next request sees, and no key reaches a prototype.
      state.data = { ...state.data, [key]: JSON.parse(JSON.stringify(value)) as unknown };
      state.changed = true;
    },
    delete: (key) => {
      if (!Object.hasOwn(state.data, key)) return;
      const next = { ...state.data };
      delete next[key];
      state.data = next;
      state.changed = true;
    },
    regenerate: () => {
      state.id = newId();
      state.data = {};
      state.expiresAt = store.clock() + store.maxAge;
      state.changed = true;
      state.destroyed = false;
      return Promise.resolve();
    },
    destroy: () => {
      state.data = {};
      state.destroyed = true;
      state.changed = true;
    },
    get id() {
      return state.id;
    },
    get changed() {
      return state.changed;
    },
  };
  store.states.set(session, state);
  return session;
}

function attributes(store: CookieStore, request: Request, maxAgeSeconds: number): string {
  const secure = store.secure ?? new URL(request.url).protocol === 'https:';
  return `; Path=${store.path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** The request's session: its cookie opened, or a new one. */
async function loadSession(store: CookieStore, request: Request): Promise<CookieFlowSession> {
  const text = readCookie(request.headers.get('cookie'), store.cookieName);
  const opened = text === undefined ? undefined : await open(store, text);
  if (opened !== undefined) {
    return sessionOver(store, {
      id: opened.sid,
      data: opened.data,
      expiresAt: opened.exp * 1000,
      changed: false,
      destroyed: false,
    });
  }
  return sessionOver(store, {
    id: newId(),
    data: {},
    expiresAt: store.clock() + store.maxAge,
    changed: false,
    destroyed: false,
  });
}

/** The `Set-Cookie` value for a changed session (sealed, or clearing it), or undefined when unchanged. */
async function commitSession(
  store: CookieStore,
  session: CookieFlowSession,
  request: Request,
): Promise<string | undefined> {
  const { cookieName } = store;
  const state = store.states.get(session);
  if (state === undefined)
    throw new TypeError(`${store.who}: commit takes a session returned by load() of the same store.`);
  if (!state.changed) return undefined;
  if (state.destroyed || Object.keys(state.data).length === 0) return `${cookieName}=${attributes(store, request, 0)}`;
  const payload = { sid: state.id, data: state.data, exp: Math.floor(state.expiresAt / 1000) };
  const sealKey = store.keys[0] as SealKey;
  const value = sealDirA256Gcm(
    { alg: 'dir', enc: 'A256GCM', kid: sealKey.kid, [COOKIE_HEADER_PARAMETER]: cookieName },
    Buffer.from(JSON.stringify(payload)),
    sealKey.key,
  );
  if (value.length + cookieName.length + 1 > MAX_COOKIE_SESSION_BYTES) {
    throw new IdError(
      'session_store_unavailable',
      `The session is too large for a cookie (over ${MAX_COOKIE_SESSION_BYTES} bytes): keep less in it, or use a server-side session.`,
    );
  }
  const seconds = Math.max(1, Math.floor((state.expiresAt - store.clock()) / 1000));
  return `${cookieName}=${value}${attributes(store, request, seconds)}`;
}
