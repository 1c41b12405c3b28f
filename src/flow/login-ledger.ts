/**
 * What this process remembers of the logins it started, to explain a failed callback ("already
 * redeemed 3 s ago", "came back on another host"). It never decides whether a login may
 * complete, is bounded (oldest first) and holds only the flow's login hashes, nothing replayable.
 */
import type { LedgerRecord } from './diagnose.js';
import { wellFormedHost } from './display-host.js';

/** Default number of logins remembered per process. */
export const DEFAULT_LEDGER_SIZE = 10_000;

/** A bounded record of started logins, keyed by a hash of their state. */
export class LoginLedger {
  private readonly records = new Map<string, LedgerRecord>();

  /** @param maxSize most records kept; the oldest are dropped first. */
  constructor(private readonly maxSize: number = DEFAULT_LEDGER_SIZE) {}

  /** Records a login started on `host`; a host that is not well-formed is kept as `''` (it is the requester's text). */
  started(key: string, host: string, now: number, returnTo?: string): void {
    this.records.delete(key);
    this.records.set(key, {
      startedAt: now,
      host: wellFormedHost(host) ?? '',
      outcome: 'pending',
      outcomeAt: now,
      ...(returnTo === undefined ? {} : { returnTo }),
    });
    if (this.records.size > this.maxSize) {
      const oldest = this.records.keys().next().value;
      if (oldest !== undefined) this.records.delete(oldest);
    }
  }

  /** Records what became of a login this process started; unknown keys are ignored. */
  settle(key: string, outcome: LedgerRecord['outcome'], now: number): void {
    const record = this.records.get(key);
    if (record === undefined) return;
    record.outcome = outcome;
    record.outcomeAt = now;
  }

  /** Records that another login of the same session completed (a sign-in) while the login with `key` was pending. */
  siblingSignedIn(key: string, now: number): void {
    const record = this.records.get(key);
    if (record?.outcome === 'pending') record.siblingSignedInAt = now;
  }

  /** What this process remembers of the login with `key`, if it started it. */
  lookup(key: string): LedgerRecord | undefined {
    const record = this.records.get(key);
    return record === undefined ? undefined : { ...record };
  }

  /** Number of records held. */
  get size(): number {
    return this.records.size;
  }
}
