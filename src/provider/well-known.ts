/**
 * GET /v2/.well-known/jwks.json (spec 2.6, 4.4) and GET /v2/.well-known/openid-configuration
 * (spec 4.5), with the fields the spec lists and those of `discovery-metadata.ts`.
 */
import type { ProviderContext } from './context.js';
import { json } from './http/answer.js';
import type { ProviderRoute } from './router.js';
import { discoveryExtensions, fapiDiscoveryFields, type ProfileMix } from './discovery-metadata.js';
import { ADVERTISED_SCOPES } from './scopes.js';

/** Path of the JWKS. */
export const JWKS_PATH = '/v2/.well-known/jwks.json';
/** Path of the discovery document. */
export const DISCOVERY_PATH = '/v2/.well-known/openid-configuration';

/**
 * The discovery document of an issuer (`{base_url}/v2`), of a provider with or without
 * `strictClientAuth`, and with the FAPI 2.0 fields when some client is registered in that profile.
 */
export function discoveryDocument(
  issuer: string,
  options: { strictClientAuth: boolean } = { strictClientAuth: false },
  mix: ProfileMix = { someFapi: false, allFapi: false },
): Record<string, string | string[] | boolean> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    userinfo_endpoint: `${issuer}/oauth/userinfo`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code'],
    scopes_supported: [...ADVERTISED_SCOPES],
    id_token_signing_alg_values_supported: ['RS256'],
    subject_types_supported: ['pairwise'],
    code_challenge_methods_supported: ['S256'],
    // RFC 9207: every authorization response (code or error) carries `iss`, in both profiles.
    authorization_response_iss_parameter_supported: true,
    ...discoveryExtensions(options, mix),
    ...fapiDiscoveryFields(issuer, mix),
  };
}

function profileMix(ctx: ProviderContext): ProfileMix {
  const clients = [...ctx.config.clients.values()];
  return { someFapi: clients.some((c) => c.profile === 'fapi2'), allFapi: clients.every((c) => c.profile === 'fapi2') };
}

/** The routes of this file. */
export function wellKnownRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    {
      endpoint: 'jwks',
      method: 'GET',
      path: JWKS_PATH,
      failure: 'json',
      handle: async () => json(200, await ctx.keys.jwks(), { 'Cache-Control': 'public, max-age=60' }),
    },
    {
      endpoint: 'discovery',
      method: 'GET',
      path: DISCOVERY_PATH,
      failure: 'json',
      handle: () => json(200, discoveryDocument(ctx.config.issuer, ctx.config, profileMix(ctx)), { 'Cache-Control': 'public, max-age=300' }),
    },
  ];
}
