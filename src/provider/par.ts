/**
 * POST /v2/oauth/par: pushed authorization requests (RFC 9126) of FAPI 2.0 clients, validated by
 * the same function as the authorize query; the `request_uri` is single-use for
 * {@link PUSHED_REQUEST_TTL_S} seconds. At authorize a FAPI client sends `client_id` and
 * `request_uri` only. A base client gets `unauthorized_client`.
 */
import { validateAuthorizeQuery, type Validation } from './authorize-request.js';
import type { ProviderContext } from './context.js';
import { authenticateAssertion, fapiClientNamed, unnamedClientRefusal } from './fapi/client-assertion.js';
import { OAuthRefusal } from './http/refusal.js';
import { DpopRefusal, verifyDpopProof } from './fapi/dpop.js';
import { json, NO_STORE, oauthError, type Answer } from './http/answer.js';
import { MAX_BODY_BYTES } from './http/body.js';
import type { ProviderRequest } from './http/request.js';
import { pooledRandomToken } from './random-pool.js';
import type { ProviderRoute } from './router.js';
import type { ValidRequest } from './valid-request.js';
import { endpointUrl, servedPath } from './variant.js';

/** Path of the pushed authorization request endpoint. */
export const PAR_PATH = '/v2/oauth/par';
/** Lifetime of a `request_uri`, in seconds. */
export const PUSHED_REQUEST_TTL_S = 60;
/** The prefix of every `request_uri` (RFC 9126 section 2.2). */
export const REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** What a pushed request carries to authorize beyond the validated parameters. */
export interface PushedExtras {
  /** The thumbprint of the DPoP key the code will be bound to. */
  dpopJkt: string;
}

/** The outcome of redeeming a `request_uri` at authorize. */
export type Redeemed =
  | { ok: true; request: ValidRequest; extras: PushedExtras }
  | { ok: false; code: string; message: string };

const AUTH_FIELDS = new Set(['client_assertion', 'client_assertion_type', 'client_secret']);
const DPOP_JKT = /^[A-Za-z0-9_-]{43}$/;

/** The body as query-like parameters (arrays kept as repeats), or a refusal. */
function formParams(req: ProviderRequest): URLSearchParams {
  const body = req.body;
  if (body.kind === 'error') {
    throw new OAuthRefusal(
      body.status,
      'invalid_request',
      body.status === 413
        ? `The body is larger than ${MAX_BODY_BYTES} bytes or has too many parameters.`
        : body.message,
    );
  }
  if (body.kind !== 'form')
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'The PAR request must be an application/x-www-form-urlencoded body (RFC 9126).',
    );
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(body.fields)) {
    for (const one of Array.isArray(value) ? value : [value]) params.append(name, one);
  }
  return params;
}

function one(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name);
  if (all.length > 1) throw new OAuthRefusal(400, 'invalid_request', `The ${name} parameter was sent more than once.`);
  return all[0] === '' ? undefined : all[0];
}

async function push(ctx: ProviderContext, req: ProviderRequest): Promise<Answer> {
  const params = formParams(req);
  const fields = {
    client_id: one(params, 'client_id'),
    client_assertion_type: one(params, 'client_assertion_type'),
    client_assertion: one(params, 'client_assertion'),
    client_secret: one(params, 'client_secret'),
  };
  const client = fapiClientNamed(ctx, fields);
  if (client === undefined) {
    const named = fields.client_id !== undefined && ctx.config.clients.has(fields.client_id);
    throw named
      ? new OAuthRefusal(
          400,
          'unauthorized_client',
          'Pushed authorization requests are for clients registered with profile "fapi2"; this client uses /v2/oauth/authorize directly.',
        )
      : unnamedClientRefusal(fields);
  }
  await authenticateAssertion(ctx, ctx.clientJwks, client, fields);
  if (params.has('request_uri'))
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'A pushed request must not carry request_uri (RFC 9126 section 2.1).',
    );
  if (params.has('request'))
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'Request objects are not supported: push the parameters themselves.',
    );
  const dpopJkt = one(params, 'dpop_jkt');
  if (dpopJkt !== undefined && !DPOP_JKT.test(dpopJkt)) {
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'The dpop_jkt must be the base64url SHA-256 JWK thumbprint (RFC 7638) of the DPoP public key.',
    );
  }
  let boundTo = dpopJkt;
  if (req.headers.dpop !== undefined) {
    const proven = await verifyDpopProof(ctx, ctx.dpopNonces, client.clientId, req.headers.dpop, {
      method: 'POST',
      url: endpointUrl(ctx.config, PAR_PATH),
    });
    if (dpopJkt !== undefined && dpopJkt !== proven) {
      throw new OAuthRefusal(
        400,
        'invalid_dpop_proof',
        'The dpop_jkt differs from the thumbprint of the DPoP proof key: bind the login to one key.',
      );
    }
    boundTo = proven;
  }
  if (boundTo === undefined) {
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'FAPI 2.0 binds the code to a DPoP key: send a DPoP proof header (or dpop_jkt) with the pushed request.',
    );
  }
  for (const name of AUTH_FIELDS) params.delete(name);
  if (fields.client_id === undefined) params.set('client_id', client.clientId);
  const result: Validation = validateAuthorizeQuery(ctx, params);
  ctx.audit.authorize(client.clientId, result);
  if (!result.ok) throw new OAuthRefusal(result.code === 'invalid_client' ? 401 : 400, result.code, result.message);
  const id = pooledRandomToken(32);
  ctx.stores.pushed.set(
    id,
    { clientId: client.clientId, request: result.request, dpopJkt: boundTo },
    ctx.config.clock() + PUSHED_REQUEST_TTL_S * 1000,
  );
  ctx.log('par', `request pushed for client ${client.clientId}`);
  return json(201, { request_uri: `${REQUEST_URI_PREFIX}${id}`, expires_in: PUSHED_REQUEST_TTL_S }, NO_STORE);
}

async function par(ctx: ProviderContext, req: ProviderRequest): Promise<Answer> {
  try {
    return await push(ctx, req);
  } catch (err) {
    if (err instanceof DpopRefusal) {
      ctx.log('par', `refused: ${err.error} (400): ${err.description}`);
      return oauthError(400, err.error, err.description, err.nonce === undefined ? {} : { 'DPoP-Nonce': err.nonce });
    }
    if (!(err instanceof OAuthRefusal)) throw err;
    ctx.log('par', `refused: ${err.error} (${err.status}): ${err.description}`);
    return oauthError(err.status, err.error, err.description, err.headers);
  }
}

/** The pushed request an authorize query names, taken (single use) unless `take` is false (a HEAD only looks). */
export function redeemRequestUri(ctx: ProviderContext, params: URLSearchParams, take = true): Redeemed {
  const clientId = params.get('client_id') ?? '';
  const extra = [...new Set(params.keys())].filter((name) => name !== 'client_id' && name !== 'request_uri');
  const requestUris = params.getAll('request_uri');
  if (requestUris.length === 0 || extra.length > 0) {
    ctx.audit.flag(clientId, 'fapi_raw_authorize_parameters');
    return {
      ok: false,
      code: 'invalid_request',
      message:
        requestUris.length === 0
          ? 'This client is registered for FAPI 2.0: push the authorization parameters to /v2/oauth/par, then send only client_id and request_uri here.'
          : `This client is registered for FAPI 2.0: send only client_id and request_uri here (remove ${extra
              .slice(0, 5)
              .map((n) => n.slice(0, 32))
              .join(', ')}).`,
    };
  }
  if (requestUris.length > 1 || params.getAll('client_id').length > 1)
    return { ok: false, code: 'invalid_request', message: 'Send client_id and request_uri once each.' };
  const uri = requestUris[0] ?? '';
  const id = uri.startsWith(REQUEST_URI_PREFIX) ? uri.slice(REQUEST_URI_PREFIX.length) : '';
  const pushed = id === '' || id.length > 64 ? undefined : ctx.stores.pushed.get(id);
  if (pushed === undefined || pushed.clientId !== clientId) {
    return {
      ok: false,
      code: 'invalid_request_uri',
      message: `The request_uri is unknown, already used or expired (it lives ${PUSHED_REQUEST_TTL_S} s and works once): push the request again.`,
    };
  }
  if (take) ctx.stores.pushed.delete(id);
  return { ok: true, request: pushed.request, extras: { dpopJkt: pushed.dpopJkt } };
}

/** The routes of this file. */
export function parRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    {
      endpoint: 'par',
      method: 'POST',
      path: servedPath(ctx.config, PAR_PATH),
      failure: 'json',
      body: {},
      handle: (req) => par(ctx, req),
    },
  ];
}
