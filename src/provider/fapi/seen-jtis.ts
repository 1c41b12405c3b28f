/**
 * The used `jti`s of client assertions and DPoP proofs, each kept until its assertion or proof
 * could no longer be accepted. A full store refuses new requests (503) rather than forget a live
 * `jti`: forgetting one would let its assertion or proof be replayed.
 */
import type { ProviderContext } from '../context.js';
import { OAuthRefusal } from '../http/refusal.js';

/**
 * Remembers `key` until `expiresAt` (ms).
 * @throws OAuthRefusal 503 `temporarily_unavailable` when the store is full of live entries.
 */
export function rememberJti(ctx: ProviderContext, key: string, expiresAt: number): void {
  if (ctx.stores.seenJtis.tryAdd(key, true, expiresAt)) return;
  throw new OAuthRefusal(503, 'temporarily_unavailable', 'Too many client assertions and DPoP proofs are in flight: try again in a minute.', { 'Retry-After': '60' });
}
