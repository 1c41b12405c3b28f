/** The one error the JOSE code throws when it refuses its input; each caller turns it into its own error code. */

/** Why a JWE or JWS was refused. */
export type JweRefusal = 'malformed' | 'crit' | 'failed';

/** Thrown by the `src/jose` functions; `reason` says which refusal, `cause` the runtime's error, if any. */
export class JweRefused extends Error {
  /** Which refusal. */
  readonly reason: JweRefusal;
  /**
   * @param reason which refusal.
   * @param cause the error node:crypto threw, when there was one (kept for the caller's error).
   */
  constructor(reason: JweRefusal, cause?: unknown) {
    super(reason, cause === undefined ? undefined : { cause });
    this.reason = reason;
  }
}
