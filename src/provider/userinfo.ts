/**
 * GET and POST /v2/oauth/userinfo (spec 4.3, OIDC Core 5.3.1): the bearer token's subject, and
 * the person's attributes for the granted scopes, encrypted end to end with a fresh block key
 * per response.
 *
 * The token comes in `Authorization: Bearer` (GET or POST) or, for POST only, as the form body
 * parameter `access_token` (RFC 6750 2.2); never in the query, never two ways at once. A request
 * with no credentials at all gets a bare `Bearer` challenge with no error code (RFC 6750 3.1); a
 * bad, expired or revoked token gets `error="invalid_token"`.
 */
import type { ProviderContext } from './context.js';
import { encryptUserinfo } from './crypto.js';
import { empty, json, NO_STORE, oauthError, type Answer } from './http/answer.js';
import { mediaTypeOf } from './http/media-type.js';
import type { ProviderRequest } from './http/request.js';
import type { ProviderRoute } from './router.js';
import { attributesFor } from './scopes.js';

/** Path of the userinfo endpoint. */
export const USERINFO_PATH = '/v2/oauth/userinfo';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
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
  if (hasHeader) {
    const match = header.length <= 2048 ? BEARER.exec(header.trim()) : null;
    token = match?.[1];
  } else {
    token = inBody ?? undefined;
  }
  const record = token !== undefined ? ctx.stores.accessTokens.get(token) : undefined;
  if (!record) {
    ctx.log('userinfo', 'refused: invalid_token (401): the access token is invalid, expired or revoked');
    return invalidToken('The access token is invalid, expired or revoked.');
  }
  ctx.audit.userinfo(record.clientId, token ?? '');
  const client = ctx.config.clients.get(record.clientId);
  const persona = ctx.persona(record.personaId);
  if (!client || !persona) throw new Error('access token refers to an unknown client or persona');
  const attributes = { ...attributesFor(persona, record.scopes), ...record.dataOverrides };
  const clientKey = client.publicKeys[client.publicKeys.length - 1]!;
  const { key, data } = await encryptUserinfo(clientKey, attributes);
  const answer = await ctx.conformance.userinfo(token ?? '', { sub: record.sub, key, data }, clientKey, attributes);
  ctx.log('userinfo', `served client ${client.clientId}`);
  return json(200, answer, NO_STORE);
}

/** The routes of this file. */
export function userinfoRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    { endpoint: 'userinfo', method: 'GET', path: USERINFO_PATH, failure: 'json', handle: (req) => userinfo(ctx, req) },
    { endpoint: 'userinfo', method: 'POST', path: USERINFO_PATH, failure: 'json', body: {}, handle: (req) => userinfo(ctx, req) },
  ];
}
