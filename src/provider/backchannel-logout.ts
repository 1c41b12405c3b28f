/**
 * The provider's end of back-channel logout (OpenID Connect Back-Channel Logout 1.0): each sign-in
 * is a provider session with its own `sid` (in the ID token); signing a person out POSTs a logout
 * token, signed like the client's ID tokens with `typ: logout+jwt` and a short `exp`, to every
 * client of theirs that registered a `backchannelLogoutUri`. Deliveries run in the background with
 * a bounded timeout, never holding up whoever signed out; one that is not answered 200 is an
 * audit finding for that client.
 */
import type { ResolvedClient } from './config.js';
import type { ProviderContext } from './context.js';
import { idTokenAlgOf } from './fapi/registration.js';
import { pooledRandomToken } from './random-pool.js';
import type { ProviderSession, ProviderSessions, ProviderSignOut } from './provider-sessions.js';
import { epochSeconds } from '../clock.js';

export type { ProviderSignOut } from './provider-sessions.js';

/** The member of `events` that makes a JWT a logout token. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** How long a logout token is valid: 2 minutes, in seconds. */
export const LOGOUT_TOKEN_TTL_S = 120;
/** Longest wait for a relying party's answer: 5 seconds. */
export const BACKCHANNEL_TIMEOUT_MS = 5_000;

/** What one delivery of a logout token came to. */
export interface BackchannelDelivery {
  clientId: string;
  /** `ok` (answered 200), `refused` (another status), `unreachable` or `timeout`. */
  outcome: 'ok' | 'refused' | 'unreachable' | 'timeout';
  /** The relying party's HTTP status, when it answered. */
  status?: number;
}

/**
 * Signs out: ends the named provider sessions and sends a logout token to each of their clients
 * with a `backchannelLogoutUri`. Resolves once every delivery has settled (each within
 * {@link BACKCHANNEL_TIMEOUT_MS}); a caller answering a person does not wait for it.
 * @throws TypeError when neither `persona` nor `sid` is given.
 */
export async function signOutAtProvider(
  ctx: ProviderContext,
  sessions: ProviderSessions,
  signOut: ProviderSignOut,
): Promise<BackchannelDelivery[]> {
  if (typeof signOut !== 'object' || signOut === null || (signOut.persona === undefined && signOut.sid === undefined))
    throw new TypeError('signOut: give the persona to sign out everywhere, or the sid of one provider session.');
  const deliveries = sessions.end(signOut).flatMap((session) => {
    const client = ctx.config.clients.get(session.clientId);
    return client?.backchannelLogoutUri === undefined ? [] : [deliver(ctx, client, session)];
  });
  return Promise.all(deliveries);
}

/** The logout token for one provider session at one client. */
async function logoutToken(ctx: ProviderContext, client: ResolvedClient, session: ProviderSession & { sid: string }) {
  const iat = epochSeconds(ctx.config.clock);
  const claims = {
    iss: ctx.config.issuer,
    aud: client.clientId,
    iat,
    exp: iat + LOGOUT_TOKEN_TTL_S,
    jti: pooledRandomToken(16),
    sub: session.sub,
    sid: session.sid,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  };
  return ctx.keys.sign(claims, idTokenAlgOf(client), 'logout+jwt');
}

/** POSTs the logout token; never rejects: the outcome is returned, and a failure is an audit finding. */
async function deliver(
  ctx: ProviderContext,
  client: ResolvedClient,
  session: ProviderSession & { sid: string },
): Promise<BackchannelDelivery> {
  const uri = client.backchannelLogoutUri as string;
  let delivery: BackchannelDelivery;
  try {
    const token = await logoutToken(ctx, client, session);
    const res = await fetch(uri, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: token }).toString(),
      signal: AbortSignal.timeout(BACKCHANNEL_TIMEOUT_MS),
    });
    await res.body?.cancel();
    delivery = { clientId: client.clientId, outcome: res.status === 200 ? 'ok' : 'refused', status: res.status };
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    delivery = { clientId: client.clientId, outcome: timedOut ? 'timeout' : 'unreachable' };
  }
  ctx.log(
    'backchannel_logout',
    `client ${client.clientId}: ${delivery.outcome}${delivery.status === undefined ? '' : ` (${delivery.status})`}`,
  );
  if (delivery.outcome !== 'ok') ctx.audit.flag(client.clientId, 'backchannel_logout_failed');
  return delivery;
}
