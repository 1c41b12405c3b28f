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
import type { Request, Response } from 'express';
import type { ProviderContext, ProviderRoute } from './context.js';
import { encryptUserinfo } from './crypto.js';
import { mediaType, parseForm, readBodyText, sendJson, sendOAuthError } from './http.js';
import { attributesFor } from './scopes.js';

/** Path of the userinfo endpoint. */
export const USERINFO_PATH = '/v2/oauth/userinfo';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

function invalidToken(res: Response, description: string): void {
  sendOAuthError(res, 401, 'invalid_token', description, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
}

function invalidRequest(res: Response, description: string): void {
  sendOAuthError(res, 400, 'invalid_request', description, { 'WWW-Authenticate': 'Bearer error="invalid_request"' });
}

/** The access token of a POST form body: undefined when absent, null when unusable. */
async function formToken(req: Request): Promise<string | undefined | null> {
  if (req.method !== 'POST' || mediaType(req) !== 'application/x-www-form-urlencoded') return undefined;
  let value: unknown;
  try {
    const text = await readBodyText(req);
    // undefined: a body parser of the app ahead of the provider read it already.
    value = text === undefined ? (req.body as Record<string, unknown> | undefined)?.['access_token'] : parseForm(text)['access_token'];
  } catch {
    return null;
  }
  if (value === undefined || value === '') return undefined;
  return typeof value === 'string' && value.length <= 2048 && B64TOKEN.test(value) ? value : null;
}

async function userinfo(ctx: ProviderContext, req: Request, res: Response): Promise<void> {
  const header = req.headers.authorization;
  const inBody = await formToken(req);
  const hasHeader = header !== undefined && header !== '';
  if (hasHeader && inBody !== undefined) {
    ctx.log('userinfo', 'refused: invalid_request (400): the access token was sent two ways');
    invalidRequest(res, 'Send the access token one way only: the Authorization header or the form body, not both.');
    return;
  }
  if (!hasHeader && inBody === undefined) {
    ctx.log('userinfo', 'refused: (401) no access token');
    res.writeHead(401, { 'WWW-Authenticate': 'Bearer', 'Cache-Control': 'no-store', Pragma: 'no-cache', 'Content-Length': '0' }).end();
    return;
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
    invalidToken(res, 'The access token is invalid, expired or revoked.');
    return;
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
  sendJson(res, 200, answer, { 'Cache-Control': 'no-store', Pragma: 'no-cache' });
}

/** The routes of this file. */
export function userinfoRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    { endpoint: 'userinfo', method: 'get', path: USERINFO_PATH, failure: 'json', handle: (req, res) => userinfo(ctx, req, res) },
    { endpoint: 'userinfo', method: 'post', path: USERINFO_PATH, failure: 'json', handle: (req, res) => userinfo(ctx, req, res) },
  ];
}
