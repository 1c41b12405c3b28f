/**
 * Issuing an authorization code once a person has approved, and building the redirect back to
 * the client. Shared by the mobile app and by auto-approval.
 */
import { randomToken } from '../pkce.js';
import type { ProviderContext } from './context.js';
import type { Persona } from './types.js';

/** What an approved request carries into its code. */
export interface GrantRequest {
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  nonce: string | undefined;
  codeChallenge: string;
}

/** Store a fresh single-use authorization code for `persona` and return it. */
export function issueCode(ctx: ProviderContext, request: GrantRequest, persona: Persona): string {
  const code = randomToken(32);
  ctx.stores.codes.set(
    code,
    {
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      nonce: request.nonce,
      codeChallenge: request.codeChallenge,
      personaId: persona.id,
      used: false,
      accessTokens: [],
    },
    ctx.config.clock() + ctx.config.ttl.code * 1000,
  );
  return code;
}

/** `redirectUri` with the given query parameters appended (undefined ones left out). */
export function callbackUrl(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.toString();
}
