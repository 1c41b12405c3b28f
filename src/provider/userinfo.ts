/**
 * GET /v2/oauth/userinfo (spec 4.3): the bearer token's subject, and the person's attributes
 * for the granted scopes, encrypted end to end with a fresh block key per response.
 */
import type { Request, Response } from 'express';
import type { ProviderContext, ProviderRoute } from './context.js';
import { encryptUserinfo } from './crypto.js';
import { sendOAuthError } from './http.js';
import { attributesFor } from './scopes.js';

/** Path of the userinfo endpoint. */
export const USERINFO_PATH = '/v2/oauth/userinfo';

const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

function invalidToken(res: Response, description: string): void {
  sendOAuthError(res, 401, 'invalid_token', description, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
}

async function userinfo(ctx: ProviderContext, req: Request, res: Response): Promise<void> {
  const header = req.headers.authorization;
  if (header === undefined || header === '') {
    invalidToken(res, 'An access token is required: send Authorization: Bearer <access_token>.');
    return;
  }
  const match = header.length <= 2048 ? BEARER.exec(header.trim()) : null;
  const record = match ? ctx.stores.accessTokens.get(match[1]!) : undefined;
  if (!record) {
    ctx.log('userinfo', 'refused: invalid or expired access token');
    invalidToken(res, 'The access token is invalid, expired or revoked.');
    return;
  }
  const client = ctx.config.clients.get(record.clientId);
  const persona = ctx.persona(record.personaId);
  if (!client || !persona) throw new Error('access token refers to an unknown client or persona');
  const { key, data } = await encryptUserinfo(client.publicKey, attributesFor(persona, record.scopes));
  ctx.log('userinfo', `served client ${client.clientId}`);
  res.status(200).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
  res.json({ sub: record.sub, key, data });
}

/** The routes of this file. */
export function userinfoRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [{ endpoint: 'userinfo', method: 'get', path: USERINFO_PATH, failure: 'json', handle: (req, res) => userinfo(ctx, req, res) }];
}
