/**
 * A client's public keys at run time: `provider.setClientKeys(clientId, keys)` replaces them,
 * so a test can rehearse the relying party's key rotation (add a key, encrypt to it, drop the old).
 */
import type { webcrypto } from 'node:crypto';
import { resolveClientKeys, type ResolvedConfig } from '../config.js';

/** One public key of a client: a PEM, a JWK (its `kid` is kept), or a key with an explicit `kid`. */
export type ClientPublicKey = string | webcrypto.JsonWebKey | { key: string | webcrypto.JsonWebKey; kid?: string };

/**
 * Replaces the keys of `clientId`.
 * @throws TypeError naming the client or the key at fault.
 */
export function setClientKeys(config: ResolvedConfig, clientId: string, publicKeys: ClientPublicKey[]): void {
  const client = config.clients.get(clientId);
  if (client === undefined) {
    throw new TypeError(`setClientKeys: client "${String(clientId)}" is not registered; known: ${[...config.clients.keys()].join(', ')}.`);
  }
  if (!Array.isArray(publicKeys) || publicKeys.length === 0) {
    throw new TypeError('setClientKeys: publicKeys must be a non-empty array of PEM strings, JWKs or { key, kid }, newest last.');
  }
  const mistakes: string[] = [];
  const keys = resolveClientKeys(publicKeys, 'publicKeys', mistakes);
  if (mistakes.length > 0) throw new TypeError(`setClientKeys: ${mistakes.join('; ')}`);
  client.publicKeys = keys;
}
