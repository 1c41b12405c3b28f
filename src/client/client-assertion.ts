/**
 * `private_key_jwt` client authentication (RFC 7523, OpenID Connect Core 9): a short-lived JWT
 * signed with the app's current assertion key, made fresh for every call (PAR and token).
 */
import { randomUUID } from 'node:crypto';
import { epochSeconds, type Clock } from '../clock.js';
import type { SigningKey } from './fapi-keys.js';
import { encodeJwsHeader, signWithHeader, signWithSigner } from '../jose/jws-sign.js';

/** The lifetime of a client assertion, in seconds (FAPI 2.0 asks for a short one; the provider may refuse longer ones). */
export const CLIENT_ASSERTION_LIFETIME_S = 60;

/** The `client_assertion_type` of a JWT bearer assertion (RFC 7523 2.2). */
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/**
 * A client assertion: `iss` = `sub` = the client id, `aud` = the issuer, `iat` now, `exp` one
 * minute later, and a fresh random `jti`. The header names the key's `kid` and `alg`. Signed in
 * process, synchronously, or by the key's signer (an HSM or a KMS), asynchronously.
 */
export function createClientAssertion(
  key: SigningKey,
  clientId: string,
  issuer: string,
  clock: Clock,
): string | Promise<string> {
  const now = epochSeconds(clock);
  const claims = {
    iss: clientId,
    sub: clientId,
    aud: issuer,
    jti: randomUUID(),
    iat: now,
    exp: now + CLIENT_ASSERTION_LIFETIME_S,
  };
  let header = headers.get(key);
  if (header === undefined) {
    header = encodeJwsHeader({ typ: 'JWT', kid: key.kid }, key.alg);
    headers.set(key, header);
  }
  const signer = key.signer;
  if (signer !== undefined) return signWithSigner(header, claims, (input) => signer.sign(input), key.alg);
  return signWithHeader(header, claims, key.key, key.alg);
}

/** Each assertion key's header segment, encoded at its first assertion (a key's `kid` and `alg` never change). */
const headers = new WeakMap<SigningKey, string>();
