/**
 * Used `jti`s of assertions and proofs, kept while they could still be accepted. A full store
 * refuses (503) rather than forget a live `jti`, which would allow a replay; a client past its
 * share (see `createStores`) gets 429 and an audit finding, so one client cannot lock out others.
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
    throw new OAuthRefusal(
      503,
      'temporarily_unavailable',
      'Too many client assertions and DPoP proofs are in flight: try again in a minute.',
      { 'Retry-After': '60' },
    );
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
