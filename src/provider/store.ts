/** The provider's only state: bounded in-memory maps whose entries expire. */
import type { Clock } from '../clock.js';
import { UsedJtis } from './fapi/used-jtis.js';
import { PendingQuota } from './pending-quota.js';
import type { ValidRequest } from './valid-request.js';

interface Entry<V> {
  key: string;
  value: V;
  expiresAt: number;
}

/** Setting-order slots passed over before the list drops them. */
const COMPACT_AFTER = 1024;

/**
 * A map with a size bound and a per-entry expiry; expired entries are never returned, and when full
 * the expired go first, then the oldest. Beside the map, a list in insertion order: walking the
 * `Map` from its start would step over every deleted slot until it is rehashed, on every write.
 * The list is compacted past twice the live entries.
 */
export class ExpiringStore<V> {
  private readonly entries = new Map<string, Entry<V>>();
  /** Entries in setting order from `head` on; some may be gone from the map (deleted, or set again). */
  private order: Entry<V>[] = [];
  private head = 0;
  /**
   * No live entry expires before this: a full store is not walked again until then, so a flood
   * costs each refused request O(1). Lowered by every write, made exact by every full walk.
   */
  private nextExpiry = Number.POSITIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    /** Most entries kept at once. */
    readonly maxSize: number,
  ) {}

  /** Number of entries currently held (expired ones may still count until swept). */
  get size(): number {
    return this.entries.size;
  }

  /** Store `value` under `key` until `expiresAt`. */
  set(key: string, value: V, expiresAt: number): void {
    this.entries.delete(key);
    this.sweepFront();
    if (this.entries.size >= this.maxSize) this.sweepAll();
    while (this.entries.size >= this.maxSize) {
      const oldest = this.front();
      if (oldest === undefined) break;
      this.entries.delete(oldest.key);
    }
    const entry: Entry<V> = { key, value, expiresAt };
    this.entries.set(key, entry);
    this.order.push(entry);
    if (expiresAt < this.nextExpiry) this.nextExpiry = expiresAt;
    this.compact();
  }

  /** The live value under `key`, or undefined when absent or expired. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** When the entry under `key` expires, or undefined when absent or expired. */
  expiresAt(key: string): number | undefined {
    return this.get(key) === undefined ? undefined : this.entries.get(key)?.expiresAt;
  }

  /**
   * True when no entry can be added without evicting a live one (expired entries are dropped
   * first). Stores that must never evict (pending authorizations) check this before `set`.
   */
  isFull(): boolean {
    this.sweepFront();
    if (this.entries.size >= this.maxSize) this.sweepAll();
    return this.entries.size >= this.maxSize;
  }

  /** Remove `key`. */
  delete(key: string): void {
    this.entries.delete(key);
  }

  /** Remove everything. */
  clear(): void {
    this.entries.clear();
    this.order = [];
    this.head = 0;
    this.nextExpiry = Number.POSITIVE_INFINITY;
  }

  /** The oldest entry still in the map (passing over the ones gone from it), or undefined. */
  private front(): Entry<V> | undefined {
    const order = this.order;
    while (this.head < order.length) {
      const entry = order[this.head]!;
      if (this.entries.get(entry.key) === entry) return entry;
      this.head += 1;
    }
    return undefined;
  }

  /** Drop expired entries at the front (the oldest), which is where they gather. */
  private sweepFront(): void {
    const now = this.clock();
    for (let entry = this.front(); entry !== undefined && entry.expiresAt <= now; entry = this.front()) {
      this.entries.delete(entry.key);
    }
  }

  private sweepAll(): void {
    const now = this.clock();
    if (now < this.nextExpiry) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [key, entry] of this.entries) {
      if (entry.expiresAt <= now) this.entries.delete(key);
      else if (entry.expiresAt < next) next = entry.expiresAt;
    }
    this.nextExpiry = next;
  }

  /** Drop the list's passed-over slots, and the entries gone from the map once they outnumber the live ones. */
  private compact(): void {
    const waiting = this.order.length - this.head;
    if (waiting > 2 * this.entries.size + COMPACT_AFTER) {
      this.order = this.order.slice(this.head).filter((entry) => this.entries.get(entry.key) === entry);
      this.head = 0;
    } else if (this.head > COMPACT_AFTER && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.head = 0;
    }
  }
}

/** The decision state of a QR login. */
export type PendingStatus = 'pending' | 'approved' | 'denied' | 'mismatch';

/**
 * An authorization request waiting for the mobile app. It holds only validated, length-limited
 * values (never the raw request), so the entry count bounds the memory.
 */
export interface PendingAuthorization {
  /** Unguessable id in the mobile-app URL (the QR payload). */
  mobileId: string;
  /** Unguessable id the QR page polls with; never shown to the phone. */
  pollId: string;
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string;
  /** `max_age` of the request, in seconds, when sent. */
  maxAge: number | undefined;
  /** FAPI 2.0: the RFC 7638 thumbprint of the DPoP key the code is bound to (`dpop_jkt`). */
  dpopJkt?: string;
  /** FAPI 2.0: the pushed request (random part of its `request_uri`), used up when the person approves. */
  requestUriId?: string;
  /** The message shown on the phone beside the approval (`authentication_context_message`), when sent. */
  contextMessage?: string;
  /** The kind of sign-in (`authentication_context_type`), when sent. */
  contextType?: string;
  /** When the QR page was shown (ms since the epoch). */
  createdAt: number;
  /** When this entry expires (ms since the epoch). */
  expiresAt: number;
  /** Source address of the browser that started the login (shown on the phone, and its quota key). */
  address: string;
  /** Rough browser and system of that browser, from its User-Agent (shown on the phone). */
  device: string;
  /** The two-digit code the QR page shows and the phone must pick. */
  matchCode: string;
  /** The codes the phone offers (`MATCH_CHOICES` of them), one of them `matchCode`. */
  matchChoices: readonly string[];
  /** The QR image, drawn at its first request and kept while the entry waits for an answer (dropped once answered). */
  qrSvg?: string | undefined;
  status: PendingStatus;
  /** Where the QR page sends the browser once decided. */
  redirectTo?: string;
}

/** An issued authorization code. */
export interface AuthorizationCode {
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  nonce: string | undefined;
  codeChallenge: string;
  personaId: string;
  /** When the person approved (seconds since the epoch): the ID token's `auth_time`. */
  authTime: number;
  /** `max_age` of the request, in seconds, when sent. */
  maxAge: number | undefined;
  /** Per-login overrides from `approveNext` (ID-token claims, attribute values), if any. */
  overrides?: LoginOverrides;
  /** FAPI 2.0: the thumbprint of the DPoP key the code is bound to; the token request must prove it. */
  dpopJkt?: string;
  /** Set at the first redemption attempt; any later attempt is a replay. */
  used: boolean;
  /** Access tokens issued from this code, revoked if the code is replayed. */
  accessTokens: string[];
}

/** An issued access token. */
export interface AccessTokenRecord {
  clientId: string;
  personaId: string;
  sub: string;
  scopes: readonly string[];
  /** Attribute values that replace the persona's for this login (`approveNext({ data })`). */
  dataOverrides?: Readonly<Record<string, string>>;
  /** FAPI 2.0: the thumbprint of the DPoP key the token is bound to (`cnf.jkt`); userinfo needs a proof of it. */
  dpopJkt?: string;
}

/**
 * A pushed authorization request (RFC 9126): authorize may show it until `usableUntil` (a reload
 * works), and it is used up when the person approves (`used`). The entry outlives `usableUntil` by
 * the QR page's lifetime, so an approval after it still finds the request and marks it used.
 */
export interface PushedRequest {
  clientId: string;
  /** The validated parameters, exactly as authorize validates its query. */
  request: ValidRequest;
  /** The thumbprint of the DPoP key the code will be bound to; without it, the token request's proof binds it. */
  dpopJkt: string | undefined;
  /** Until when (ms since the epoch) authorize accepts the `request_uri`: its `expires_in`. */
  usableUntil: number;
  /** Set when a person approved a sign-in of it: no second approval, no further visit. */
  used: boolean;
}

/**
 * What one scripted login (`approveNext`) changes: ID-token claims to set or, as `undefined`,
 * remove (`exp`, `iat`, `nbf`, `auth_time` as numbers: seconds from now), and attribute values.
 */
export interface LoginOverrides {
  claims?: Readonly<Record<string, unknown>>;
  data?: Readonly<Record<string, string>>;
}

/** All state of one provider. */
export interface ProviderStores {
  /** QR logins waiting for the phone's answer: the provider-wide bound counts these only, and never evicts one. */
  pendingByMobileId: ExpiringStore<PendingAuthorization>;
  pendingByPollId: ExpiringStore<PendingAuthorization>;
  /** QR logins answered on the phone, kept until their expiry for the QR page to pick up (the oldest go first when full). */
  answeredByMobileId: ExpiringStore<PendingAuthorization>;
  answeredByPollId: ExpiringStore<PendingAuthorization>;
  /** Waiting QR logins per source address. */
  pendingQuota: PendingQuota;
  codes: ExpiringStore<AuthorizationCode>;
  accessTokens: ExpiringStore<AccessTokenRecord>;
  /** Pushed authorization requests by the random part of their `request_uri`. */
  pushed: ExpiringStore<PushedRequest>;
  /** `jti` values of client assertions and DPoP proofs seen, until they could no longer be accepted anyway. */
  usedJtis: UsedJtis;
}

/** The most live `jti`s each of `fapiClients` FAPI clients may hold in a store of `storeSize`: an equal share. */
function jtiShareOf(storeSize: number, fapiClients: number): number {
  return Math.max(1, Math.floor(storeSize / Math.max(1, fapiClients)));
}

/** Empty stores with the given bounds; `clients`, when given, sets each FAPI client's share of `usedJtis`. */
export function createStores(
  clock: Clock,
  bounds: {
    maxPending: number;
    maxPendingPerAddress: number;
    maxCodes: number;
    maxAccessTokens: number;
    clients?: ReadonlyMap<string, { profile: string }>;
  },
): ProviderStores {
  const usedJtisSize = 2 * Math.max(bounds.maxCodes, bounds.maxAccessTokens);
  const fapiClients = [...(bounds.clients?.values() ?? [])].filter((client) => client.profile === 'fapi2').length;
  return {
    pendingByMobileId: new ExpiringStore(clock, bounds.maxPending),
    pendingByPollId: new ExpiringStore(clock, bounds.maxPending),
    answeredByMobileId: new ExpiringStore(clock, bounds.maxPending),
    answeredByPollId: new ExpiringStore(clock, bounds.maxPending),
    pendingQuota: new PendingQuota(clock, bounds.maxPendingPerAddress, bounds.maxPending),
    codes: new ExpiringStore(clock, bounds.maxCodes),
    accessTokens: new ExpiringStore(clock, bounds.maxAccessTokens),
    pushed: new ExpiringStore(clock, bounds.maxPending),
    // Every assertion and proof is short-lived, so the bound is that of the busiest store, twice.
    usedJtis: new UsedJtis(clock, usedJtisSize, jtiShareOf(usedJtisSize, fapiClients)),
  };
}
