/**
 * DPoP (RFC 9449): the key pair a login's code and tokens are bound to, the proofs sent with the
 * PAR, token and userinfo calls, and the server nonces remembered between calls.
 *
 * A login's key pair is made when the login starts and kept, as a private JWK, in the pending
 * login (the session) until the callback has read the attributes; it is never logged and never
 * leaves the session. Sessions held in a cookie must be sealed (`createCookieSession` is).
 */
import { createHash, createPrivateKey, randomUUID, type KeyObject } from 'node:crypto';
import { generateEcJwkPair } from '../keys.js';
import { epochSeconds, type Clock } from '../clock.js';
import { jwkThumbprint, publicJwk } from './fapi-keys.js';
import { encodeJwsHeader, signWithHeader } from '../jose/jws-sign.js';

/** The only DPoP proof algorithm used. */
export const DPOP_ALGORITHM = 'ES256';

/** A DPoP key pair, ready to sign proofs. */
export interface DpopKey {
  /** The private key. */
  readonly privateKey: KeyObject;
  /** The public JWK sent in each proof's header (`kty`, `crv`, `x`, `y`). */
  readonly publicJwk: Readonly<{ kty: string; crv: string; x: string; y: string }>;
  /** RFC 7638 thumbprint of the public key: the `dpop_jkt` sent with the pushed request. */
  readonly jkt: string;
}

/** How a login's DPoP key is kept between the login and the callback: the private EC P-256 JWK members. */
export interface StoredDpopKey {
  crv: 'P-256';
  x: string;
  y: string;
  d: string;
}

/** True when `value` has the shape of a {@link StoredDpopKey}. */
export function isStoredDpopKey(value: unknown): value is StoredDpopKey {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return v.crv === 'P-256' && typeof v.x === 'string' && typeof v.y === 'string' && typeof v.d === 'string';
}

/** A fresh P-256 key pair for one login, and the form it is kept in (see {@link generateEcJwkPair} for why through a JWK). */
export function generateDpopKey(): { key: DpopKey; stored: StoredDpopKey } {
  const { privateJwk: jwk } = generateEcJwkPair('P-256');
  const stored: StoredDpopKey = { crv: 'P-256', x: String(jwk.x), y: String(jwk.y), d: String(jwk.d) };
  const key = importDpopKey(stored);
  rememberStarted(stored, key);
  return { key, stored };
}

/**
 * The key kept by {@link generateDpopKey}, ready to sign again: the key this process made for the
 * login when the callback comes back to it (taken once), else imported from what was kept.
 */
export function restoreDpopKey(stored: StoredDpopKey): DpopKey {
  const id = startedId(stored);
  const started = startedKeys.get(id);
  startedKeys.delete(id);
  return started !== undefined && started.until > Date.now() ? started.key : importDpopKey(stored);
}

function importDpopKey(stored: StoredDpopKey): DpopKey {
  const privateKey = createPrivateKey({ key: { kty: 'EC', ...stored }, format: 'jwk' });
  return dpopKeyOf(privateKey, stored);
}

/**
 * The keys of logins this process started, until their callback takes them or the login's
 * lifetime (the default `loginTtl`, 10 minutes) ends, whichever comes first: importing a kept key
 * costs a JWK import (Node checks the point, a scalar multiplication). Keyed by every member of
 * the kept key, so only the very key a login kept finds its entry; at most this many, oldest
 * first. A login finished on another instance, or after that time, imports its key from the
 * session instead, so an abandoned login's key object lives no longer than the login.
 */
const startedKeys = new Map<string, { key: DpopKey; until: number }>();
const MAX_STARTED_KEYS = 1024;
/** How long a started login's key object is kept: the default login lifetime (`DEFAULT_LOGIN_TTL_MS`). */
export const STARTED_KEY_LIFETIME_MS = 10 * 60 * 1000;

function startedId(stored: StoredDpopKey): string {
  return `${stored.crv}.${stored.x}.${stored.y}.${stored.d}`;
}

function rememberStarted(stored: StoredDpopKey, key: DpopKey): void {
  const now = Date.now();
  dropStartedKeys(now);
  if (startedKeys.size >= MAX_STARTED_KEYS) startedKeys.delete(startedKeys.keys().next().value as string);
  startedKeys.set(startedId(stored), { key, until: now + STARTED_KEY_LIFETIME_MS });
}

/**
 * Drops the kept keys whose login lifetime has ended by `now` (oldest first: the map is in start
 * order) and returns how many are kept. Called at each login start; `now` is given by tests.
 */
export function dropStartedKeys(now = Date.now()): number {
  for (const [id, entry] of startedKeys) {
    if (entry.until > now) break;
    startedKeys.delete(id);
  }
  return startedKeys.size;
}

/** A DPoP key from an app-wide EC P-256 private key (the `dpopKey` option). */
export function dpopKeyFromKeyObject(privateKey: KeyObject): DpopKey {
  const jwk = publicJwk(privateKey, undefined, 'sig', DPOP_ALGORITHM);
  return dpopKeyOf(privateKey, { crv: 'P-256', x: String(jwk.x), y: String(jwk.y), d: '' });
}

function dpopKeyOf(privateKey: KeyObject, stored: StoredDpopKey): DpopKey {
  const publicJwk = Object.freeze({ kty: 'EC', crv: stored.crv, x: stored.x, y: stored.y });
  return { privateKey, publicJwk, jkt: jwkThumbprint(publicJwk) };
}

/** What one proof covers. */
export interface DpopProofInput {
  /** The HTTP method. */
  htm: 'GET' | 'POST';
  /** The request URL; its query and fragment are left out of `htu` (RFC 9449 4.2). */
  url: URL;
  /** The server's last `DPoP-Nonce`, when it gave one. */
  nonce?: string | undefined;
  /** The access token sent with this request (userinfo): its hash becomes `ath`. */
  accessToken?: string;
  clock: Clock;
}

/** A DPoP proof JWT: header `typ: dpop+jwt`, `alg: ES256`, the public `jwk`; claims `htm`, `htu`, `iat`, a fresh `jti`, and `nonce`/`ath` when given. */
export function createDpopProof(key: DpopKey, input: DpopProofInput): string {
  const claims: Record<string, string | number> = {
    htm: input.htm,
    htu: `${input.url.origin}${input.url.pathname}`,
    iat: epochSeconds(input.clock),
    jti: randomUUID(),
  };
  if (input.nonce !== undefined) claims.nonce = input.nonce;
  if (input.accessToken !== undefined)
    claims.ath = createHash('sha256').update(input.accessToken, 'ascii').digest('base64url');
  return signWithHeader(proofHeader(key.publicJwk), claims, key.privateKey, DPOP_ALGORITHM);
}

/** The proof header segment of each DPoP public JWK (frozen), encoded at its first proof: a login signs three. */
const proofHeaders = new WeakMap<DpopKey['publicJwk'], string>();

function proofHeader(jwk: DpopKey['publicJwk']): string {
  let header = proofHeaders.get(jwk);
  if (header === undefined) {
    header = encodeJwsHeader(
      { typ: 'dpop+jwt', jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } },
      DPOP_ALGORITHM,
    );
    // Only a frozen JWK can be trusted to stay what the header says.
    if (Object.isFrozen(jwk)) proofHeaders.set(jwk, header);
  }
  return header;
}

/**
 * Most nonces remembered: one per server origin and DPoP key, so per login with per-login keys.
 * The oldest goes first; a login whose nonce went only meets one more challenge.
 */
const MAX_NONCES = 1024;

/**
 * The last `DPoP-Nonce` each server origin gave to the calls of one DPoP key (`scope`, its
 * thumbprint), used in that key's next proof to it (RFC 9449 8, 9). A nonce one login learned is
 * never sent by another login's key, so concurrent logins cannot answer each other's challenges.
 */
export class DpopNonces {
  readonly #byScope = new Map<string, string>();

  /** The nonce to put in the next proof to `url`'s origin, by the key `scope`, if the server gave one. */
  for(url: URL, scope = ''): string | undefined {
    return this.#byScope.get(`${url.origin} ${scope}`);
  }

  /** Remembers the `DPoP-Nonce` header of an answer from `url` to a proof of `scope` (ignored when absent or not a plausible nonce). */
  remember(url: URL, header: string | string[] | undefined, scope = ''): string | undefined {
    const value = Array.isArray(header) ? header[0] : header;
    // RFC 9449 8.1: nonce = 1*NQCHAR; bounded so a hostile server cannot grow our proofs.
    if (value === undefined || value.length === 0 || value.length > 512 || !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(value))
      return undefined;
    const key = `${url.origin} ${scope}`;
    this.#byScope.delete(key);
    if (this.#byScope.size >= MAX_NONCES) {
      const oldest = this.#byScope.keys().next().value;
      if (oldest !== undefined) this.#byScope.delete(oldest);
    }
    this.#byScope.set(key, value);
    return value;
  }
}

/** True when an answer is a `use_dpop_nonce` challenge: the OAuth error body, or the `WWW-Authenticate: DPoP error="use_dpop_nonce"` of a resource server. */
export function isNonceChallenge(status: number, oauthError: unknown, wwwAuthenticate: string | undefined): boolean {
  if (status !== 400 && status !== 401) return false;
  if (oauthError === 'use_dpop_nonce') return true;
  if (wwwAuthenticate === undefined || wwwAuthenticate.length > 2048) return false;
  return /^\s*dpop\s/i.test(wwwAuthenticate) && wwwAuthenticate.includes('error="use_dpop_nonce"');
}
