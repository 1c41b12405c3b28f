/** GET the JWKS (spec 2.6, 4.4) and the discovery document (spec 4.5, plus `discovery-metadata.ts`), under the issuer path. */
import type { ProviderContext } from './context.js';
import { json } from './http/answer.js';
import type { ProviderRoute } from './router.js';
import { discoveryExtensions, fapiDiscoveryFields, profileMixOf, type ProfileMix } from './discovery-metadata.js';
import { ADVERTISED_SCOPES } from './scopes.js';
import { servedPath, someUserinfo } from './variant.js';

/** What a provider serves beyond its clients, for its discovery document. Left out: the spec's service. */
export interface ServedOptions {
  strictClientAuth: boolean;
  /** Authorization responses carry `iss`. Default true. */
  authorizationResponseIss?: boolean;
  /** Some client is served userinfo. Default true. */
  userinfo?: boolean;
}

/** Path of the JWKS. */
export const JWKS_PATH = '/v2/.well-known/jwks.json';
/** Path of the discovery document. */
export const DISCOVERY_PATH = '/v2/.well-known/openid-configuration';

/** The discovery document of an issuer, describing exactly what is served to the registered clients. */
function discoveryDocument(
  issuer: string,
  options: ServedOptions = { strictClientAuth: false },
  mix: ProfileMix = { someFapi: false, allFapi: false },
): Record<string, string | string[] | boolean> {
  const userinfo = options.userinfo !== false;
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    ...(userinfo ? { userinfo_endpoint: `${issuer}/oauth/userinfo` } : {}),
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code'],
    // Without userinfo no attribute can be delivered: `openid` is the one scope accepted.
    scopes_supported: userinfo ? [...ADVERTISED_SCOPES] : ['openid'],
    id_token_signing_alg_values_supported: [...(mix.signingAlgs ?? ['RS256'])],
    subject_types_supported: ['pairwise'],
    code_challenge_methods_supported: ['S256'],
    // RFC 9207: every authorization response (code or error) carries `iss`, in both profiles,
    // unless the provider is configured to leave it out; then the field is left out too.
    ...(options.authorizationResponseIss === false ? {} : { authorization_response_iss_parameter_supported: true }),
    // Back-Channel Logout 1.0, 2.1: logout tokens are sent, with the sid the ID tokens carry.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    ...discoveryExtensions(options, mix, userinfo),
    ...fapiDiscoveryFields(issuer, mix),
  };
}

/** The routes of this file. */
export function wellKnownRoutes(ctx: ProviderContext): ProviderRoute[] {
  const { config } = ctx;
  // The clients and options are fixed at start-up: the document is made once.
  const served = {
    strictClientAuth: config.strictClientAuth,
    authorizationResponseIss: config.authorizationResponseIss,
    userinfo: someUserinfo(config),
  };
  const document = discoveryDocument(config.issuer, served, profileMixOf(config.clients.values()));
  return [
    {
      endpoint: 'jwks',
      method: 'GET',
      path: servedPath(ctx.config, JWKS_PATH),
      failure: 'json',
      handle: async () => json(200, await ctx.keys.jwks(), { 'Cache-Control': 'public, max-age=60' }),
    },
    {
      endpoint: 'discovery',
      method: 'GET',
      path: servedPath(ctx.config, DISCOVERY_PATH),
      failure: 'json',
      handle: () => json(200, document, { 'Cache-Control': 'public, max-age=300' }),
    },
  ];
}
