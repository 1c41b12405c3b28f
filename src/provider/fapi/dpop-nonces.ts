/**
 * DPoP server nonces (RFC 9449 section 8) under `dpopNonce`: one current nonce per
 * {@link NONCE_ROTATION_MS}, the previous one accepted one period more. Expiry follows the clock,
 * idle or not.
 */
import { pooledRandomToken } from '../random-pool.js';

/** How long a server nonce is handed out before it is replaced, in ms; it is accepted for as long again. */
export const NONCE_ROTATION_MS = 60_000;

/** The provider's DPoP server nonces (RFC 9449 section 8): the current one and the one before. */
export class DpopNonces {
  #current = pooledRandomToken(16);
  #previous: string | undefined;
  /** When the current nonce was made. */
  #since: number;

  constructor(private readonly clock: () => number) {
    this.#since = clock();
  }

  /** The nonce to hand out now. */
  current(): string {
    this.#rotate(this.clock());
    return this.#current;
  }

  /** True for the current nonce, or the one it replaced while that is within its second period. */
  accepts(nonce: unknown): boolean {
    const current = this.current();
    return typeof nonce === 'string' && (nonce === current || nonce === this.#previous);
  }

  /** Replaces the current nonce once its period is over; the old one stays accepted until two periods after it was made. */
  #rotate(now: number): void {
    const age = now - this.#since;
    if (age <= NONCE_ROTATION_MS) return;
    this.#previous = age <= 2 * NONCE_ROTATION_MS ? this.#current : undefined;
    this.#current = pooledRandomToken(16);
    this.#since = age <= 2 * NONCE_ROTATION_MS ? this.#since + NONCE_ROTATION_MS : now;
  }
}
