/** A refused OAuth request, thrown where it is found and answered as RFC 6749 5.2 JSON by the token and PAR endpoints. */

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
