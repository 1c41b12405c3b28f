/**
 * A FAPI 2.0 client at authorize: `client_id` and the `request_uri` of a pushed request
 * (`par.ts`). Parameters repeated beside them are ignored in favour of the pushed ones (RFC 9101
 * sections 5 and 6.3) and refused only when they contradict them; the audit names the repeat. A
 * visit only looks: the `request_uri` is used up when the person approves (FAPI 2.0 section
 * 5.3.2.2), so a reload of the QR page works, and a second approval of the same request does not.
 */
import type { ProviderContext } from './context.js';
import { PUSHED_REQUEST_TTL_S, REQUEST_URI_PREFIX } from './par.js';
import type { ValidRequest } from './valid-request.js';

/** What a pushed request carries to authorize beyond the validated parameters. */
export interface PushedExtras {
  /** The thumbprint of the DPoP key the code will be bound to, when the pushed request named one. */
  dpopJkt: string | undefined;
  /** The random part of the `request_uri`, used up at the approval ({@link useUpRequestUri}). */
  requestUriId: string;
}

/** The outcome of reading a `request_uri` at authorize. */
export type Redeemed =
  | { ok: true; request: ValidRequest; extras: PushedExtras }
  | { ok: false; code: string; message: string };

const OWN_PARAMETERS = new Set(['client_id', 'request_uri']);

function refused(code: string, message: string): Redeemed {
  return { ok: false, code, message };
}

/** The pushed values an authorization parameter repeated at authorize must equal, by name. */
function pushedValues(request: ValidRequest): Record<string, string | undefined> {
  return {
    response_type: 'code',
    redirect_uri: request.redirectUri,
    code_challenge_method: 'S256',
    code_challenge: request.codeChallenge,
    state: request.state,
    nonce: request.nonce,
    max_age: request.maxAge === undefined ? undefined : String(request.maxAge),
    login_hint: request.loginHint,
    authentication_context_message: request.contextMessage,
    authentication_context_type: request.contextType,
  };
}

function sameScopes(sent: string, pushed: readonly string[]): boolean {
  const scopes = new Set(sent.split(' ').filter((s) => s !== ''));
  return scopes.size === pushed.length && pushed.every((s) => scopes.has(s));
}

/** The first parameter repeated beside `request_uri` with a value other than the pushed one, if any. */
export function contradictedParameter(params: URLSearchParams, request: ValidRequest): string | undefined {
  for (const [name, value] of Object.entries(pushedValues(request))) {
    if (value !== undefined && params.getAll(name).some((sent) => sent !== value)) return name;
  }
  return params.getAll('scope').some((sent) => !sameScopes(sent, request.scopes)) ? 'scope' : undefined;
}

/**
 * The pushed request an authorize query names, looked at but not used up. `observe` is false for
 * a HEAD (a link checker, a prefetch): it is checked alike, but the audit is not told.
 */
export function redeemRequestUri(ctx: ProviderContext, params: URLSearchParams, observe = true): Redeemed {
  const clientId = params.get('client_id') ?? '';
  const requestUris = params.getAll('request_uri');
  if (requestUris.length === 0) {
    if (observe) ctx.audit.flag(clientId, 'fapi_raw_authorize_parameters');
    return refused(
      'invalid_request',
      'This client is registered for FAPI 2.0: push the authorization parameters to /v2/oauth/par, then send client_id and request_uri here.',
    );
  }
  if (requestUris.length > 1 || params.getAll('client_id').length > 1)
    return refused('invalid_request', 'Send client_id and request_uri once each.');
  const uri = requestUris[0] ?? '';
  const id = uri.startsWith(REQUEST_URI_PREFIX) ? uri.slice(REQUEST_URI_PREFIX.length) : '';
  const pushed = id === '' || id.length > 64 ? undefined : ctx.stores.pushed.get(id);
  if (pushed === undefined || pushed.clientId !== clientId || pushed.used || ctx.config.clock() >= pushed.usableUntil) {
    return refused(
      'invalid_request_uri',
      `The request_uri is unknown, expired or already used (it lives ${PUSHED_REQUEST_TTL_S} s, until a sign-in with it is approved): push the request again.`,
    );
  }
  const contradicted = contradictedParameter(params, pushed.request);
  if (contradicted !== undefined) {
    return refused(
      'invalid_request',
      `The ${contradicted} sent beside request_uri differs from the pushed one: send only client_id and request_uri (the pushed parameters are the ones used).`,
    );
  }
  if (observe && [...params.keys()].some((name) => !OWN_PARAMETERS.has(name)))
    ctx.audit.flag(clientId, 'fapi_authorize_parameters_repeated');
  return { ok: true, request: pushed.request, extras: { dpopJkt: pushed.dpopJkt, requestUriId: id } };
}

/**
 * Use up the pushed request of an approval: true the first time, false when a sign-in of it was
 * already approved (another window of the same request) or it is gone.
 */
export function useUpRequestUri(ctx: ProviderContext, requestUriId: string): boolean {
  const pushed = ctx.stores.pushed.get(requestUriId);
  if (pushed === undefined || pushed.used) return false;
  pushed.used = true;
  return true;
}
