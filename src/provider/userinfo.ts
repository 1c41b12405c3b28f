/**
 * GET and POST /v2/oauth/userinfo (spec 4.3, OIDC Core 5.3.1): the token's subject and the
 * granted attributes, encrypted with a fresh block key per response. The token comes as
 * `Authorization: Bearer`, or for POST as the `access_token` form parameter (RFC 6750 2.2), never
 * in the query nor two ways at once; no credentials get a bare challenge (RFC 6750 3.1). A
 * DPoP-bound token comes only as `Authorization: DPoP` with a proof carrying `ath` (RFC 9449
 * section 7). A `userinfo: false` client gets 403 `insufficient_scope`.
 */
import type { ProviderContext } from './context.js';
import { encryptUserinfo } from './crypto.js';
import { DpopRefusal, verifyDpopProof } from './fapi/dpop.js';
import { FAPI_SIGNING_ALGS } from './fapi/registration.js';
import { empty, json, NO_STORE, oauthError, type Answer } from './http/answer.js';
import { OAuthRefusal } from './http/refusal.js';
import { mediaTypeOf } from './http/media-type.js';
import type { ProviderRequest } from './http/request.js';
import type { ProviderRoute } from './router.js';
import { attributesFor } from './scopes.js';
import { endpointUrl, servedPath, servesUserinfo, someUserinfo } from './variant.js';

/** Path of the userinfo endpoint. */
export const USERINFO_PATH = '/v2/oauth/userinfo';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
const DPOP = /^DPoP ([A-Za-z0-9\-._~+/]+=*)$/i;

/** A 401 of a DPoP-bound token (RFC 9449 section 7.1), naming the DPoP scheme and its algorithms. */
function dpopChallenge(error: string, description: string, extra: Record<string, string> = {}): Answer {
  return oauthError(401, error, description, {
    'WWW-Authenticate': `DPoP error="${error}", algs="${FAPI_SIGNING_ALGS.join(' ')}"`,
    ...extra,
  });
}
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function invalidToken(description: string): Answer {
  return oauthError(401, 'invalid_token', description, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
}

function invalidRequest(description: string): Answer {
  return oauthError(400, 'invalid_request', description, { 'WWW-Authenticate': 'Bearer error="invalid_request"' });
}

/** The access token of a POST form body: undefined when absent, null when unusable. */
function formToken(req: ProviderRequest): string | undefined | null {
  if (req.method !== 'POST') return undefined;
  if (mediaTypeOf(req.headers) !== 'application/x-www-form-urlencoded') return undefined;
  if (req.body.kind === 'error') return null;
  if (req.body.kind !== 'form') return undefined;
  const value: unknown = req.body.fields['access_token'];
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' && value.length <= 2048 && B64TOKEN.test(value) ? value : null;
}

async function userinfo(ctx: ProviderContext, req: ProviderRequest): Promise<Answer> {
  const header = req.headers.authorization;
  const inBody = formToken(req);
  const hasHeader = header !== undefined && header !== '';
  if (hasHeader && inBody !== undefined) {
    ctx.log('userinfo', 'refused: invalid_request (400): the access token was sent two ways');
    return invalidRequest('Send the access token one way only: the Authorization header or the form body, not both.');
  }
  if (!hasHeader && inBody === undefined) {
    ctx.log('userinfo', 'refused: (401) no access token');
    return empty(401, { 'WWW-Authenticate': 'Bearer', ...NO_STORE });
  }
  let token: string | undefined;
  let scheme: 'Bearer' | 'DPoP' = 'Bearer';
  if (hasHeader) {
    const trimmed = header.length <= 2048 ? header.trim() : '';
    const dpop = DPOP.exec(trimmed);
    if (dpop !== null) scheme = 'DPoP';
    token = dpop?.[1] ?? BEARER.exec(trimmed)?.[1];
  } else {
    token = inBody ?? undefined;
  }
  const record = token !== undefined ? ctx.stores.accessTokens.get(token) : undefined;
  if (!record) {
    ctx.log('userinfo', 'refused: invalid_token (401): the access token is invalid, expired or revoked');
    return scheme === 'DPoP'
      ? dpopChallenge('invalid_token', 'The access token is invalid, expired or revoked.')
      : invalidToken('The access token is invalid, expired or revoked.');
  }
  if (record.dpopJkt !== undefined || scheme === 'DPoP') {
    const refusal = await checkDpop(ctx, req, scheme, token ?? '', record.clientId, record.dpopJkt);
    if (refusal !== undefined) return refusal;
  }
  const client = ctx.config.clients.get(record.clientId);
  const persona = ctx.persona(record.personaId);
  if (!client || !persona) throw new Error('access token refers to an unknown client or persona');
  if (!servesUserinfo(ctx.config, client)) {
    ctx.log('userinfo', `refused: insufficient_scope (403) for client ${client.clientId}: registered without userinfo`);
    const description =
      'This client is registered without userinfo: the person is the one of the ID token (its sub and claims).';
    return oauthError(403, 'insufficient_scope', description, {
      'WWW-Authenticate':
        scheme === 'DPoP'
          ? `DPoP error="insufficient_scope", algs="${FAPI_SIGNING_ALGS.join(' ')}"`
          : 'Bearer error="insufficient_scope"',
    });
  }
  ctx.audit.userinfo(record.clientId, token ?? '');
  const attributes = { ...attributesFor(persona, record.scopes), ...record.dataOverrides };
  const clientKey = client.publicKeys[client.publicKeys.length - 1]!;
  const { key, data } = await encryptUserinfo(clientKey, attributes);
  const answer = await ctx.conformance.userinfo(token ?? '', { sub: record.sub, key, data }, clientKey, attributes);
  ctx.log('userinfo', `served client ${client.clientId}`);
  return json(200, answer, NO_STORE);
}

/** The DPoP checks of a userinfo call (RFC 9449 section 7): undefined when it may go on, else the refusal. */
async function checkDpop(
  ctx: ProviderContext,
  req: ProviderRequest,
  scheme: 'Bearer' | 'DPoP',
  token: string,
  clientId: string,
  bound: string | undefined,
): Promise<Answer | undefined> {
  if (bound === undefined) {
    ctx.log('userinfo', `refused: invalid_token (401) for client ${clientId}: a token not DPoP-bound sent as DPoP`);
    return dpopChallenge('invalid_token', 'This access token is not DPoP-bound: send it with Authorization: Bearer.');
  }
  if (scheme !== 'DPoP') {
    ctx.audit.flag(clientId, 'dpop_bearer_scheme_used');
    ctx.log('userinfo', `refused: invalid_token (401) for client ${clientId}: a DPoP-bound token sent as Bearer`);
    return dpopChallenge(
      'invalid_token',
      'This access token is DPoP-bound: send it as Authorization: DPoP <token>, with a DPoP proof carrying ath.',
    );
  }
  let jkt: string;
  try {
    jkt = await verifyDpopProof(ctx, ctx.dpopNonces, clientId, req.headers.dpop, {
      method: req.method === 'HEAD' ? 'GET' : req.method,
      url: endpointUrl(ctx.config, USERINFO_PATH),
      accessToken: token,
      boundJkt: bound,
    });
  } catch (err) {
    if (err instanceof OAuthRefusal) {
      ctx.log('userinfo', `refused: ${err.error} (${err.status}) for client ${clientId}: ${err.description}`);
      return oauthError(err.status, err.error, err.description, err.headers);
    }
    if (!(err instanceof DpopRefusal)) throw err;
    ctx.log('userinfo', `refused: ${err.error} (401) for client ${clientId}: ${err.description}`);
    return dpopChallenge(err.error, err.description, err.nonce === undefined ? {} : { 'DPoP-Nonce': err.nonce });
  }
  if (jkt !== bound) {
    ctx.audit.flag(clientId, 'dpop_key_not_bound');
    ctx.log('userinfo', `refused: invalid_token (401) for client ${clientId}: the DPoP proof key is not the bound one`);
    return dpopChallenge(
      'invalid_token',
      "The DPoP proof key is not the key this access token is bound to (cnf.jkt): use the login's DPoP key.",
    );
  }
  return undefined;
}

/** The routes of this file. */
export function userinfoRoutes(ctx: ProviderContext): ProviderRoute[] {
  if (!someUserinfo(ctx.config)) return [];
  const path = servedPath(ctx.config, USERINFO_PATH);
  return [
    { endpoint: 'userinfo', method: 'GET', path, failure: 'json', handle: (req) => userinfo(ctx, req) },
    { endpoint: 'userinfo', method: 'POST', path, failure: 'json', body: {}, handle: (req) => userinfo(ctx, req) },
  ];
}
