/**
 * The used `jti`s with a count per FAPI client (its share: the size over the number of FAPI
 * clients). Entries are filed by the whole second they may be forgotten, so dropping expired ones
 * is O(1) amortised whatever order lifetimes end in. A live entry is never dropped: that would
 * allow a replay.
 */
import type { Clock } from '../../clock.js';

/** What {@link UsedJtis.tryAdd} did. */
export type JtiAdd = 'added' | 'full' | 'share_used_up';

interface Filed {
  key: string;
  clientId: string;
}

export class UsedJtis {
  /** Key → the second at which it may be forgotten. */
  readonly #dueAt = new Map<string, number>();
  /** Second → the entries forgotten once it has begun. */
  readonly #bySecond = new Map<number, Filed[]>();
  readonly #perClient = new Map<string, number>();
  /** Every second before this one has been swept (set by the first sweep: the clock is read only when the store is used). */
  #sweptTo = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly clock: Clock,
    /** Most live entries kept at once. */
    readonly maxSize: number,
    /** Most live entries one client may hold. */
    readonly share: number,
  ) {}

  /** Number of entries held (those due in the current second may still count). */
  get size(): number {
    return this.#dueAt.size;
  }

  /** True when `key` was remembered and its assertion or proof may still be accepted. */
  has(key: string): boolean {
    this.#sweep();
    return this.#dueAt.has(key);
  }

  /**
   * Remembers `key` of `clientId` until `expiresAt`, or answers `full` / `share_used_up` and adds
   * nothing. A key already held stays (callers refuse a reused `jti` first, with {@link has}).
   */
  tryAdd(key: string, clientId: string, expiresAt: number): JtiAdd {
    this.#sweep();
    if (this.#dueAt.has(key)) return 'added';
    if (this.#dueAt.size >= this.maxSize) return 'full';
    const held = this.#perClient.get(clientId) ?? 0;
    if (held >= this.share) return 'share_used_up';
    // The first whole second at or after the expiry, and never one already swept (a clock
    // stepped back, or an expiry already past): kept a little longer, never less.
    const second = Math.max(Math.ceil(expiresAt / 1000), this.#sweptTo);
    this.#dueAt.set(key, second);
    const filed = this.#bySecond.get(second);
    if (filed === undefined) this.#bySecond.set(second, [{ key, clientId }]);
    else filed.push({ key, clientId });
    this.#perClient.set(clientId, held + 1);
    return 'added';
  }

  /** Live entries held for `clientId`. */
  heldBy(clientId: string): number {
    this.#sweep();
    return this.#perClient.get(clientId) ?? 0;
  }

  /** Forget everything. */
  clear(): void {
    this.#dueAt.clear();
    this.#bySecond.clear();
    this.#perClient.clear();
    this.#sweptTo = Number.NEGATIVE_INFINITY;
  }

  /** Drops the entries of every second that has begun since the last sweep. */
  #sweep(): void {
    const now = Math.floor(this.clock() / 1000);
    if (now < this.#sweptTo) return;
    if (this.#bySecond.size === 0) {
      this.#sweptTo = now + 1;
      return;
    }
    if (now - this.#sweptTo + 1 <= this.#bySecond.size) {
      for (let second = this.#sweptTo; second <= now; second += 1) this.#drop(second);
    } else {
      // A long jump of the clock: fewer filed seconds than seconds passed, so walk those instead.
      for (const second of [...this.#bySecond.keys()]) if (second <= now) this.#drop(second);
    }
    this.#sweptTo = now + 1;
  }

  #drop(second: number): void {
    const filed = this.#bySecond.get(second);
    if (filed === undefined) return;
    this.#bySecond.delete(second);
    for (const { key, clientId } of filed) {
      this.#dueAt.delete(key);
      const held = (this.#perClient.get(clientId) ?? 1) - 1;
      if (held > 0) this.#perClient.set(clientId, held);
      else this.#perClient.delete(clientId);
    }
  }
}
