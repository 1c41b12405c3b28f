/** `provider.setClientKeys(clientId, keys)`, to rehearse the relying party's key rotation. */
import { resolveClientKeys, type ResolvedConfig } from '../config.js';
import type { ClientPublicKey } from '../types.js';

export type { ClientPublicKey };

/**
 * Replaces the keys of `clientId`.
 * @throws TypeError naming the client or the key at fault.
 */
export function setClientKeys(config: ResolvedConfig, clientId: string, publicKeys: ClientPublicKey[]): void {
  const client = config.clients.get(clientId);
  if (client === undefined) {
    throw new TypeError(
      `setClientKeys: client "${String(clientId)}" is not registered; known: ${[...config.clients.keys()].join(', ')}.`,
    );
  }
  if (!Array.isArray(publicKeys) || publicKeys.length === 0) {
    throw new TypeError(
      'setClientKeys: publicKeys must be a non-empty array of PEM strings, JWKs or { key, kid }, newest last.',
    );
  }
  const mistakes: string[] = [];
  const keys = resolveClientKeys(publicKeys, 'publicKeys', mistakes);
  if (mistakes.length > 0) throw new TypeError(`setClientKeys: ${mistakes.join('; ')}`);
  client.publicKeys = keys;
}
