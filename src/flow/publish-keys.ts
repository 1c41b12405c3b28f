/** The app's public key set for FAPI 2.0 registration by `jwks_uri`: body and headers, for every adapter. */
import type { PublicJwks } from '../client/fapi-config.js';

/** Anything that gives the app's public key set: an `IdClient` with `profile: 'fapi2'`, or an `NdIdStrategy` built on one. */
export interface KeyPublisher {
  /** The app's public keys; undefined (or a throw) when the client does not speak the fapi2 profile. */
  publicJwks(): PublicJwks | undefined;
}

/** Default path of the JWKS route, below where the routes are mounted. */
export const DEFAULT_JWKS_PATH = '/jwks.json';

/** Headers of a JWKS answer: the RFC 7517 media type, cacheable for five minutes (a rotation is seen within that). */
export const JWKS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'application/jwk-set+json',
  'Cache-Control': 'public, max-age=300',
  'X-Content-Type-Options': 'nosniff',
});

/**
 * The JSON of the key set, or undefined when `publisher` has none.
 * @throws TypeError when `publisher` is not a {@link KeyPublisher}.
 */
export function jwksBody(publisher: KeyPublisher): string | undefined {
  const set = publisher.publicJwks();
  return set === undefined ? undefined : JSON.stringify(set);
}

/** `value` when it has a `publicJwks()` method, else a TypeError naming `who` and `option`. */
export function checkKeyPublisher(value: unknown, who: string, option: string): KeyPublisher {
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as Partial<KeyPublisher>).publicJwks !== 'function'
  ) {
    throw new TypeError(
      `${who}: ${option} must be the NdIdStrategy or IdClient (profile: 'fapi2') whose public keys to serve`,
    );
  }
  const publisher = value as KeyPublisher;
  if (publisher.publicJwks() === undefined) {
    throw new TypeError(
      `${who}: ${option} speaks the base profile, which has no keys to publish; construct it with profile: 'fapi2'`,
    );
  }
  return publisher;
}
