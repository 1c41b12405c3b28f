/**
 * A refusal of an OAuth request, thrown where it is found and turned into its RFC 6749 5.2 JSON
 * answer (`error`, `error_description`, not cached) by the endpoint: the token and PAR endpoints
 * and the FAPI 2.0 checks they share.
 */

/** A refused request: its status, RFC error code, the sentence saying what to fix, and headers. */
export class OAuthRefusal extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
  }
}
