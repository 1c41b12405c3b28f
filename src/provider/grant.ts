/**
 * Issuing an authorization code once a person has approved, and building the redirect back to
 * the client. Shared by the mobile app and by auto-approval.
 */
import { epochSeconds } from '../clock.js';
import type { ProviderContext } from './context.js';
import { pooledRandomToken } from './random-pool.js';
import type { LoginOverrides } from './store.js';
import type { Persona } from './types.js';

/** What an approved request carries into its code. */
export interface GrantRequest {
  clientId: string;
  redirectUri: string;
  scopes: readonly string[];
  nonce: string | undefined;
  codeChallenge: string;
  /** `max_age` of the request, in seconds, when sent. */
  maxAge: number | undefined;
  /** FAPI 2.0: the thumbprint of the DPoP key the code is bound to. */
  dpopJkt?: string | undefined;
}

/**
 * Stores a fresh single-use code for `persona`. This call is the person's approval: the ID token's
 * `auth_time`. `overrides` are a scripted login's (`approveNext`).
 */
export function issueCode(
  ctx: ProviderContext,
  request: GrantRequest,
  persona: Persona,
  overrides?: LoginOverrides,
): string {
  const code = pooledRandomToken(32);
  ctx.stores.codes.set(
    code,
    {
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      scopes: request.scopes,
      nonce: request.nonce,
      codeChallenge: request.codeChallenge,
      personaId: persona.id,
      authTime: epochSeconds(ctx.config.clock),
      maxAge: request.maxAge,
      ...(overrides === undefined ? {} : { overrides }),
      ...(request.dpopJkt === undefined ? {} : { dpopJkt: request.dpopJkt }),
      used: false,
      accessTokens: [],
    },
    ctx.config.clock() + ctx.config.ttl.code * 1000,
  );
  return code;
}

/**
 * Every redirect back to a client, success or error: the parameters (undefined ones left out) and
 * always the RFC 9207 `iss`, so the app can tell which provider answered (mix-up defence).
 */
export function callbackUrl(
  issuer: string | undefined,
  redirectUri: string,
  params: Record<string, string | undefined>,
): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.append(name, value);
  }
  // Left out only by the conformance case `iss_param_missing`.
  if (issuer !== undefined) url.searchParams.append('iss', issuer);
  return url.toString();
}
