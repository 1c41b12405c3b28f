/** Compact JWE encryption, for what the library seals itself (the cookie session). */
import { createCipheriv, randomBytes } from 'node:crypto';

/**
 * Seals `plaintext` as a compact `dir` + `A256GCM` JWE (RFC 7516): header base64url as AAD, random
 * 96-bit IV, 128-bit tag. On node:crypto because jose's JWE was most of jose in a worker bundle;
 * `test/security/cookie-session-differential.test.ts` shows jose opens these and refuses the same.
 */
export function sealDirA256Gcm(header: Record<string, unknown>, plaintext: Buffer, key: Uint8Array): string {
  const protectedHeader = Buffer.from(JSON.stringify(header)).toString('base64url');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${protectedHeader}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
}
