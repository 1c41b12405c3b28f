/**
 * The first check of every JWT and JWE read, on both sides: length and segment count, before any
 * decoding, parsing or key fetch, so a huge token costs one bounded scan.
 */

/** Longest signed ID token read (a compact JWS; the service's are under 2 KB). */
export const MAX_ID_TOKEN_LENGTH = 16 * 1024;
/** Longest encrypted ID token read (a compact JWE around the signed one). */
export const MAX_ENCRYPTED_ID_TOKEN_LENGTH = 64 * 1024;
/** Longest signed userinfo JWT read (OIDC Core 5.3.2), after any JWE around it is opened. */
export const MAX_USERINFO_JWT_LENGTH = 64 * 1024;
/** Longest userinfo `key` read (a JWE of a small symmetric JWK, to an RSA key of at most 8192 bits). */
export const MAX_USERINFO_KEY_LENGTH = 8 * 1024;
/** Longest userinfo attribute (`data` value) read: a JWE of one attribute. */
export const MAX_USERINFO_VALUE_LENGTH = 32 * 1024;
/** Longest client assertion, DPoP proof or request object the provider reads. */
export const MAX_PROVIDER_JWT_LENGTH = 8 * 1024;

/** Segments of a compact JWS (header, payload, signature) and of a compact JWE. */
export const JWS_SEGMENTS = 3;
export const JWE_SEGMENTS = 5;

/**
 * True when `token` is a string of at most `maxLength` characters with exactly `segments`
 * dot-separated parts. Reads at most `maxLength` characters and decodes nothing.
 */
export function withinCompactLimits(token: unknown, segments: 3 | 5, maxLength: number): token is string {
  if (typeof token !== 'string' || token.length > maxLength) return false;
  let dots = 0;
  for (let at = token.indexOf('.'); at !== -1; at = token.indexOf('.', at + 1)) {
    if (++dots >= segments) return false;
  }
  return dots === segments - 1;
}
