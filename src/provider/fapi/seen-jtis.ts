/**
 * The used `jti`s of client assertions and DPoP proofs, each kept until its assertion or proof
 * could no longer be accepted. A full store refuses new requests (503) rather than forget a live
 * `jti`: forgetting one would let its assertion or proof be replayed.
 *
 * Each FAPI client holds at most its share of the store (its size divided by the number of FAPI
 * clients, see `createStores`): a client past its share is refused (429) and audited
 * (`jti_share_used_up`), so one client's flood cannot fill the store and lock the others out.
 */
import type { ProviderContext } from '../context.js';
import { OAuthRefusal } from '../http/refusal.js';

/**
 * Remembers `key`, a `jti` sent by `clientId`, until `expiresAt` (ms).
 * @throws OAuthRefusal 503 `temporarily_unavailable` when the store is full of live entries, 429
 * `temporarily_unavailable` when the client holds its whole share of it.
 */
export function rememberJti(ctx: ProviderContext, clientId: string, key: string, expiresAt: number): void {
  const { usedJtis } = ctx.stores;
  const added = usedJtis.tryAdd(key, clientId, expiresAt);
  if (added === 'full') {
    throw new OAuthRefusal(503, 'temporarily_unavailable', 'Too many client assertions and DPoP proofs are in flight: try again in a minute.', { 'Retry-After': '60' });
  }
  if (added === 'share_used_up') {
    ctx.audit.flag(clientId, 'jti_share_used_up');
    throw new OAuthRefusal(
      429,
      'temporarily_unavailable',
      `This client has ${usedJtis.share} client assertions and DPoP proofs in flight, its share of the provider's store of used jti values: send one assertion and one proof per request, and try again in a minute.`,
      { 'Retry-After': '60' },
    );
  }
}
