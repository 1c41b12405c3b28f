/** Decrypting the service's userinfo attributes with `jose`, as any relying party would. */
import type { KeyObject } from 'node:crypto';
import { compactDecrypt } from 'jose';

/** The attributes of a userinfo body `{ sub, key, data }`: the block key with the private key, then each value. */
export async function decryptAttributes(body: unknown, privateKey: KeyObject): Promise<Record<string, string>> {
  const { key, data } = body as { key: string; data: Record<string, string> };
  const jwk = JSON.parse(new TextDecoder().decode((await compactDecrypt(key, privateKey)).plaintext)) as { k: string };
  const blockKey = Buffer.from(jwk.k, 'base64url');
  const out: Record<string, string> = {};
  for (const [name, jwe] of Object.entries(data)) {
    out[name] = new TextDecoder().decode((await compactDecrypt(jwe, blockKey)).plaintext);
  }
  return out;
}
