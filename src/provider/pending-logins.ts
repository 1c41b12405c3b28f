/**
 * Where a QR login lives while its page is open. A waiting login is in the `pending…` stores and
 * holds a place of its address's quota and of the provider-wide bound; once the phone answers it
 * (approve, deny, a wrong number) it moves to the `answered…` stores, where the QR page still finds
 * its outcome, and gives both places back at once.
 */
import type { PendingAuthorization, PendingStatus, ProviderStores } from './store.js';
import { quotaKeyOf } from './user-agent.js';

/** The login the QR page polls with `pollId`, waiting or answered. */
export function loginByPollId(stores: ProviderStores, pollId: string): PendingAuthorization | undefined {
  return stores.pendingByPollId.get(pollId) ?? stores.answeredByPollId.get(pollId);
}

/** The login the phone opened with `mobileId`, waiting or answered. */
export function loginByMobileId(stores: ProviderStores, mobileId: string): PendingAuthorization | undefined {
  return stores.pendingByMobileId.get(mobileId) ?? stores.answeredByMobileId.get(mobileId);
}

/** Record the phone's answer to a waiting login: it stops counting against any limit, and its QR image is dropped. */
export function answerLogin(
  stores: ProviderStores,
  pending: PendingAuthorization,
  status: Exclude<PendingStatus, 'pending'>,
): void {
  const waiting = pending.status === 'pending';
  pending.status = status;
  pending.qrSvg = undefined; // served only while waiting: freed now, not when the entry expires
  if (!waiting) return;
  stores.pendingByPollId.delete(pending.pollId);
  stores.pendingByMobileId.delete(pending.mobileId);
  stores.pendingQuota.release(quotaKeyOf(pending.address), pending.expiresAt);
  stores.answeredByPollId.set(pending.pollId, pending, pending.expiresAt);
  stores.answeredByMobileId.set(pending.mobileId, pending, pending.expiresAt);
}

/** Forget a login (Cancel on its page), giving back its places if it was still waiting. */
export function endLogin(stores: ProviderStores, pending: PendingAuthorization): void {
  pending.qrSvg = undefined;
  for (const store of [stores.pendingByPollId, stores.answeredByPollId]) store.delete(pending.pollId);
  for (const store of [stores.pendingByMobileId, stores.answeredByMobileId]) store.delete(pending.mobileId);
  if (pending.status === 'pending') stores.pendingQuota.release(quotaKeyOf(pending.address), pending.expiresAt);
}
