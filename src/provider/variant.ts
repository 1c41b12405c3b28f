/**
 * How a provider may differ from the spec's service, to rehearse others an app will meet:
 * `issuerPath` (every endpoint moves with the issuer), `authorizationResponseIss: false` (no RFC
 * 9207 `iss`) and `userinfo: false` (no endpoint; `openid` only). Left out: the spec's service.
 */

/** The issuer path of the spec's service. */
export const SPEC_ISSUER_PATH = '/v2';

/** The variant of a provider, validated. */
export interface ProviderVariant {
  /** `''` (the origin) or `/name...`, without a trailing slash. */
  issuerPath: string;
  /** Authorization responses carry `iss` (RFC 9207), and discovery says so. */
  authorizationResponseIss: boolean;
  /** The userinfo endpoint is served (to the clients not registered with `userinfo: false`). */
  userinfo: boolean;
}

/** Checks `basePath`, the prefix the provider is mounted under: '' at the root, else `/name...` without a trailing slash. */
export function checkBasePath(value: unknown, mistakes: string[]): string {
  if (value === undefined || value === '' || value === '/') return '';
  if (typeof value !== 'string' || !/^(?:\/[A-Za-z0-9._~-]{1,64}){1,8}\/?$/.test(value)) {
    mistakes.push(
      'basePath must be a path such as "/idp" (segments of letters, digits, . _ ~ -), the prefix the provider is mounted under',
    );
    return '';
  }
  return value.endsWith('/') ? value.slice(0, -1) : value;
}

/** Checks a client's own `userinfo` option; a client served no userinfo needs no public key. */
export function checkClientUserinfo(
  raw: Record<string, unknown>,
  where: string,
  mistakes: string[],
  providerUserinfo: boolean,
): { ok: boolean; userinfo: boolean; keyless: boolean } {
  const value = raw['userinfo'];
  const ok = value === undefined || typeof value === 'boolean';
  if (!ok)
    mistakes.push(
      `${where}.userinfo must be true (the default) or false (this client is served no userinfo: its sign-in is from the ID token alone)`,
    );
  const served = value !== false && providerUserinfo;
  return {
    ok,
    userinfo: value !== false,
    keyless: !served && raw['publicKey'] === undefined && raw['publicKeys'] === undefined,
  };
}

function checkIssuerPath(value: unknown, mistakes: string[]): string {
  if (value === undefined) return SPEC_ISSUER_PATH;
  if (value === '/' || value === '') return '';
  if (
    typeof value !== 'string' ||
    !/^(?:\/[A-Za-z0-9._~-]{1,64}){1,8}\/?$/.test(value) ||
    /\/\.\.?(?:\/|$)/.test(value)
  ) {
    mistakes.push(
      'issuerPath must be a path such as "/idp" or "/fapi" (segments of letters, digits, . _ ~ -), or "/" for the issuer at the origin; default "/v2"',
    );
    return SPEC_ISSUER_PATH;
  }
  return value.endsWith('/') ? value.slice(0, -1) : value;
}

/** Checks the variant options of `raw`, adding one mistake per problem. */
export function checkVariant(raw: Record<string, unknown>, mistakes: string[]): ProviderVariant {
  const iss = raw['authorizationResponseIss'] ?? true;
  if (typeof iss !== 'boolean')
    mistakes.push(
      'authorizationResponseIss must be true (the default: every authorization response carries iss) or false',
    );
  const userinfo = raw['userinfo'] ?? true;
  if (typeof userinfo !== 'boolean')
    mistakes.push(
      'userinfo must be true (the default) or false (no userinfo endpoint: sign-in from the ID token alone)',
    );
  return {
    issuerPath: checkIssuerPath(raw['issuerPath'], mistakes),
    authorizationResponseIss: iss !== false,
    userinfo: userinfo !== false,
  };
}

/** The path a protocol route is served at: the spec's `/v2/...` path under the issuer path. */
export function servedPath(variant: Pick<ProviderVariant, 'issuerPath'>, specPath: string): string {
  return `${variant.issuerPath}${specPath.slice(SPEC_ISSUER_PATH.length)}`;
}

/** The public URL of a protocol route (a DPoP proof's `htu`): the issuer and the path below it. */
export function endpointUrl(config: { issuer: string }, specPath: string): string {
  return `${config.issuer}${specPath.slice(SPEC_ISSUER_PATH.length)}`;
}

/** True when `client` is served userinfo: the provider serves it, and the client's registration does not turn it off. */
export function servesUserinfo(variant: Pick<ProviderVariant, 'userinfo'>, client: { userinfo: boolean }): boolean {
  return variant.userinfo && client.userinfo;
}

/** True when some registered client is served userinfo: the endpoint is then routed and in discovery. */
export function someUserinfo(
  config: Pick<ProviderVariant, 'userinfo'> & { clients: ReadonlyMap<string, { userinfo: boolean }> },
): boolean {
  if (!config.userinfo) return false;
  for (const client of config.clients.values()) if (client.userinfo) return true;
  return false;
}

/** The `iss` of authorization responses: the issuer, or undefined when the provider sends none. */
export function responseIssuer(config: { issuer: string; authorizationResponseIss: boolean }): string | undefined {
  return config.authorizationResponseIss ? config.issuer : undefined;
}
