/** Live pending authorizations per source address, so a flood from one address cannot push other people's logins out. */
import type { Clock } from '../clock.js';

/** Per-address counts of live entries, each remembered until its expiry. */
export class PendingQuota {
  /** Address → expiry times (ms) of its live entries. */
  private readonly byAddress = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    /** Most live entries per address. */
    readonly perAddress: number,
    /** Number of addresses past which a full sweep of expired entries runs. */
    private readonly sweepAbove: number,
  ) {}

  /** Live entries of `address`. */
  count(address: string): number {
    return this.live(address).length;
  }

  /** Record one more entry for `address` if under its quota; false when the quota is used up. */
  tryAdd(address: string, expiresAt: number): boolean {
    const live = this.live(address);
    if (live.length >= this.perAddress) return false;
    if (live.length === 0 || expiresAt >= live[live.length - 1]!) {
      live.push(expiresAt);
    } else {
      // The clock stepped back: keep the list in expiry order, so the front is still the oldest.
      let at = live.length;
      while (at > 0 && live[at - 1]! > expiresAt) at -= 1;
      live.splice(at, 0, expiresAt);
    }
    this.byAddress.set(address, live);
    if (this.byAddress.size > this.sweepAbove) this.sweep();
    return true;
  }

  /** Give back one entry of `address` that ends early (cancelled), the one expiring at `expiresAt`. */
  release(address: string, expiresAt: number): void {
    const live = this.byAddress.get(address);
    if (!live) return;
    const i = live.indexOf(expiresAt);
    if (i !== -1) live.splice(i, 1);
    if (live.length === 0) this.byAddress.delete(address);
  }

  /** Forget everything. */
  clear(): void {
    this.byAddress.clear();
  }

  /** The live entries of `address`, in expiry order (one lifetime for all), so dropping expired ones from the front is cheap. */
  private live(address: string): number[] {
    const all = this.byAddress.get(address);
    if (!all) return [];
    const now = this.clock();
    let expired = 0;
    while (expired < all.length && all[expired]! <= now) expired += 1;
    if (expired === all.length) {
      this.byAddress.delete(address);
      return [];
    }
    if (expired > 0) all.splice(0, expired);
    return all;
  }

  private sweep(): void {
    for (const address of [...this.byAddress.keys()]) this.live(address);
  }
}
