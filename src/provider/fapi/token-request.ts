/**
 * The FAPI 2.0 side of the token endpoint: the client's `private_key_jwt` (never a secret or
 * Basic), its DPoP key, and the signed ID token nested in a JWE to the client's `enc` key
 * (RFC 7516, `cty: "JWT"`).
 */
import { createPublicKey, type JsonWebKey as NodeJwk, type KeyObject } from 'node:crypto';
import { CompactEncrypt } from 'jose';
import type { ResolvedClient } from '../config.js';
import type { ProviderContext } from '../context.js';
import type { ProviderRequest } from '../http/request.js';
import { OAuthRefusal } from '../http/refusal.js';
import { type AssertionFields, authenticateAssertion } from './client-assertion.js';
import { ClientKeysUnavailable } from './client-jwks.js';
import { verifyDpopProof } from './dpop.js';
import { encryptionKeyKind, fitsEncryptionAlg, type PublicJwk } from './registration.js';

/**
 * Authenticate a FAPI client's token request and check its DPoP proof; the thumbprint of the
 * proof key. `tokenUrl` is the token endpoint's public URL (the proof's `htu`).
 * @throws OAuthRefusal, DpopRefusal
 */
export async function authenticateFapiTokenRequest(
  ctx: ProviderContext,
  client: ResolvedClient,
  req: ProviderRequest,
  fields: AssertionFields,
  tokenUrl: string,
): Promise<string> {
  if (req.headers.authorization !== undefined) {
    if (/^basic /i.test(req.headers.authorization)) ctx.audit.flag(client.clientId, 'fapi_client_secret_sent');
    throw new OAuthRefusal(
      401,
      'invalid_client',
      'This client is registered for FAPI 2.0: authenticate with a client_assertion (private_key_jwt) in the body, not an Authorization header.',
    );
  }
  await authenticateAssertion(ctx, ctx.clientJwks, client, fields);
  return verifyDpopProof(ctx, ctx.dpopNonces, client.clientId, req.headers.dpop, { method: 'POST', url: tokenUrl });
}

async function encryptionKey(ctx: ProviderContext, client: ResolvedClient): Promise<PublicJwk | undefined> {
  const alg = client.fapi?.idTokenEncryption.alg;
  if (alg === undefined) return undefined;
  for (const refresh of [false, true]) {
    let keys: readonly PublicJwk[];
    try {
      keys = await ctx.clientJwks.keys(client, refresh);
    } catch (err) {
      if (err instanceof ClientKeysUnavailable)
        throw new OAuthRefusal(401, 'invalid_client', `The client's public keys could not be had: ${err.message}.`);
      throw err;
    }
    const fitting = keys.filter((k) => fitsEncryptionAlg(k, alg));
    // The first fitting key: an app lists its current key first (later ones are kept for rotation).
    if (fitting.length > 0) return fitting[0];
    if (client.fapi?.jwksUri === undefined) break;
  }
  return undefined;
}

/** Encryption keys imported once per JWK object, as KeyObjects: cheaper for jose's ECDH-ES than CryptoKeys (docs/internals.md). */
const importedKeys = new WeakMap<PublicJwk, KeyObject>();

/**
 * The signed ID token `jws` encrypted to the client's first fitting `enc` key (its current one).
 * @throws OAuthRefusal (`invalid_client`) when the client has no such key; the audit records it.
 */
export async function encryptIdToken(ctx: ProviderContext, client: ResolvedClient, jws: string): Promise<string> {
  const registered = client.fapi?.idTokenEncryption;
  const jwk = await encryptionKey(ctx, client);
  if (registered === undefined || jwk === undefined) {
    ctx.audit.flag(client.clientId, 'id_token_encryption_key_missing');
    throw new OAuthRefusal(
      401,
      'invalid_client',
      `The client's JWKS has no key to encrypt the ID token with ${registered?.alg ?? 'its registered algorithm'}: publish ${encryptionKeyKind(registered?.alg)} public key with use enc.`,
    );
  }
  let key = importedKeys.get(jwk);
  if (key === undefined) {
    key = createPublicKey({ key: jwk as NodeJwk, format: 'jwk' });
    importedKeys.set(jwk, key);
  }
  return new CompactEncrypt(new TextEncoder().encode(jws))
    .setProtectedHeader({
      alg: registered.alg,
      enc: registered.enc,
      cty: 'JWT',
      ...(jwk.kid === undefined ? {} : { kid: jwk.kid }),
    })
    .encrypt(key);
}
