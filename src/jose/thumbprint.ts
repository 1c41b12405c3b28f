/** RFC 7638 JWK thumbprints (SHA-256, base64url): the `kid` of the app's keys and the DPoP `jkt`. */
import { createHash, createPublicKey, type KeyObject } from 'node:crypto';

/** The public members of each key type (RFC 7518 6, RFC 8037 2): what a thumbprint covers, and all a public JWK holds. */
export const PUBLIC_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'x', 'y'],
  RSA: ['e', 'n'],
  OKP: ['crv', 'x'],
};

/** RFC 7638 SHA-256 thumbprint of a public JWK; synchronous, so keys get their `kid` at construction. */
export function jwkThumbprint(jwk: { kty: string; [member: string]: unknown }): string {
  const members = [...(PUBLIC_MEMBERS[jwk.kty] ?? []), 'kty'].sort();
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(String(jwk[m]))}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

/** RFC 7638 JWK thumbprint (SHA-256, base64url) of an RSA key's public part. */
export function rsaThumbprint(key: KeyObject): string {
  return jwkThumbprint(
    (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'jwk' }) as { kty: string },
  );
}
