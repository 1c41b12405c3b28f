/**
 * POST /v2/oauth/par: pushed authorization requests (RFC 9126) of FAPI 2.0 clients, validated by
 * the same function as the authorize query; the `request_uri` is usable at authorize for
 * {@link PUSHED_REQUEST_TTL_S} seconds and used up when the person approves (`request-uri.ts`).
 * A DPoP proof or `dpop_jkt` binds the code to a key; without either, the token request's proof
 * does (RFC 9449 section 10). A base client gets `unauthorized_client`.
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

/**
 * The DPoP key a pushed request binds its code to: the proof's, or `dpop_jkt` (which must then
 * match), or none (RFC 9449 section 10: the client's choice; the token request's proof binds it
 * then, and the audit names it, for an app that wants the stronger binding).
 * @throws OAuthRefusal, DpopRefusal
 */
async function dpopBinding(
  ctx: ProviderContext,
  req: ProviderRequest,
  params: URLSearchParams,
  clientId: string,
): Promise<string | undefined> {
  const dpopJkt = one(params, 'dpop_jkt');
  if (dpopJkt !== undefined && !DPOP_JKT.test(dpopJkt)) {
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'The dpop_jkt must be the base64url SHA-256 JWK thumbprint (RFC 7638) of the DPoP public key.',
    );
  }
  if (req.headers.dpop === undefined) {
    if (dpopJkt === undefined) ctx.audit.flag(clientId, 'fapi_par_without_dpop_binding');
    return dpopJkt;
  }
  const proven = await verifyDpopProof(ctx, ctx.dpopNonces, clientId, req.headers.dpop, {
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
  return proven;
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
          'Pushed authorization requests are for clients registered with profile fapi2; this client uses /v2/oauth/authorize directly.',
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
  const boundTo = await dpopBinding(ctx, req, params, client.clientId);
  for (const name of AUTH_FIELDS) params.delete(name);
  if (fields.client_id === undefined) params.set('client_id', client.clientId);
  const result: Validation = validateAuthorizeQuery(ctx, params);
  ctx.audit.authorize(client.clientId, result);
  if (!result.ok) throw parRefusal(result);
  const id = storePushed(ctx, client.clientId, result.request, boundTo);
  ctx.log('par', `request pushed for client ${client.clientId}`);
  return json(201, { request_uri: `${REQUEST_URI_PREFIX}${id}`, expires_in: PUSHED_REQUEST_TTL_S }, NO_STORE);
}

/**
 * The refusal of a pushed request the authorize validation refused: its code, but an unregistered
 * redirect URI is `invalid_request` here, as RFC 9126 section 2.3 names it (the authorize page
 * keeps `redirect_uri_mismatch`, which names the fix to a person).
 */
function parRefusal(result: { code: string; message: string }): OAuthRefusal {
  const code = result.code === 'redirect_uri_mismatch' ? 'invalid_request' : result.code;
  return new OAuthRefusal(code === 'invalid_client' ? 401 : 400, code, result.message);
}

/**
 * Keep a pushed request under a fresh id: usable at authorize for {@link PUSHED_REQUEST_TTL_S}
 * seconds, and kept a QR page's lifetime beyond, so a sign-in begun in time can still use it up.
 */
function storePushed(
  ctx: ProviderContext,
  clientId: string,
  request: ValidRequest,
  dpopJkt: string | undefined,
): string {
  const id = pooledRandomToken(32);
  const now = ctx.config.clock();
  const usableUntil = now + PUSHED_REQUEST_TTL_S * 1000;
  ctx.stores.pushed.set(
    id,
    { clientId, request, dpopJkt, usableUntil, used: false },
    usableUntil + ctx.config.ttl.authorization * 1000,
  );
  return id;
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
