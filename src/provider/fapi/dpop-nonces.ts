/**
 * The DPoP server nonces of a provider with the `dpopNonce` option (RFC 9449 section 8): one
 * current nonce, replaced every {@link NONCE_ROTATION_MS}, and the one before it still accepted.
 */
import { pooledRandomToken } from '../random-pool.js';

/** How long a server nonce is handed out before it is replaced, in ms. */
export const NONCE_ROTATION_MS = 60_000;

/** The provider's DPoP server nonces (RFC 9449 section 8): the current one and the one before. */
export class DpopNonces {
  #current = pooledRandomToken(16);
  #previous: string | undefined;
  #since: number;

  constructor(private readonly clock: () => number) {
    this.#since = clock();
  }

  /** The nonce to hand out now. */
  current(): string {
    if (this.clock() - this.#since > NONCE_ROTATION_MS) {
      this.#previous = this.#current;
      this.#current = pooledRandomToken(16);
      this.#since = this.clock();
    }
    return this.#current;
  }

  /** True for the current nonce or the one just replaced. */
  accepts(nonce: unknown): boolean {
    const now = this.current();
    return typeof nonce === 'string' && (nonce === now || nonce === this.#previous);
  }
}
