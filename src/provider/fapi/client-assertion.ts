/**
 * `private_key_jwt` client authentication (RFC 7523 section 2.2, OpenID Core 9) at PAR and token.
 * Each rule refuses with `invalid_client` (401) and a sentence naming the fix: the jwt-bearer
 * assertion type; an `alg` of {@link FAPI_SIGNING_ALGS} (never `none` or HMAC); a signature by a
 * key of the client's JWKS (a hosted one refetched once for an unknown `kid`); `iss` = `sub` =
 * client id; `aud` exactly the issuer as a string (FAPI 2.0 section 5.3.2.1); `exp` required and
 * at most {@link MAX_ASSERTION_LIFETIME_S} ahead (replay risk, audited); `iat`/`nbf` not in the
 * future beyond {@link CLOCK_SKEW_S}; `jti` required and single-use (audited).
 */
import { rememberJti } from './seen-jtis.js';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { ResolvedClient } from '../config.js';
import type { ProviderContext } from '../context.js';
import { JWS_SEGMENTS, MAX_PROVIDER_JWT_LENGTH, withinCompactLimits } from '../../compact-limits.js';
import { OAuthRefusal } from '../http/refusal.js';
import { ClientKeysUnavailable, type ClientJwks } from './client-jwks.js';
import { algName, FAPI_SIGNING_ALGS, isSigningJwk, type PublicJwk } from './registration.js';

/** The `client_assertion_type` of a JWT client assertion. */
export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** Longest accepted assertion lifetime (its `exp` ahead of now), in seconds. */
export const MAX_ASSERTION_LIFETIME_S = 300;
/** Accepted clock difference, in seconds. */
export const CLOCK_SKEW_S = 60;

function invalidClient(description: string): OAuthRefusal {
  return new OAuthRefusal(401, 'invalid_client', description);
}

/** What a FAPI request carried to authenticate its client. */
export interface AssertionFields {
  client_id?: string | undefined;
  client_assertion_type?: string | undefined;
  client_assertion?: string | undefined;
  client_secret?: string | undefined;
}

/** The registered FAPI client a request names (by `client_id` or the assertion's `iss`), or undefined. */
export function fapiClientNamed(ctx: ProviderContext, fields: AssertionFields): ResolvedClient | undefined {
  let id = fields.client_id;
  if (id === undefined && withinCompactLimits(fields.client_assertion, JWS_SEGMENTS, MAX_PROVIDER_JWT_LENGTH)) {
    try {
      const iss = decodeJwt(fields.client_assertion).iss;
      id = typeof iss === 'string' ? iss : undefined;
    } catch {
      id = undefined;
    }
  }
  const client = id === undefined ? undefined : ctx.config.clients.get(id);
  return client?.profile === 'fapi2' ? client : undefined;
}

/**
 * The refusal (`invalid_client`, 401) of a request that names no registered FAPI client, saying
 * which way: a non-JWT assertion without `client_id`, an `iss` of no FAPI client, or an unknown `client_id`.
 */
export function unnamedClientRefusal(fields: AssertionFields): OAuthRefusal {
  if (fields.client_id === undefined && fields.client_assertion !== undefined) {
    try {
      if (!withinCompactLimits(fields.client_assertion, JWS_SEGMENTS, MAX_PROVIDER_JWT_LENGTH))
        throw new Error('not a compact JWS of a bounded size');
      decodeJwt(fields.client_assertion);
    } catch {
      return invalidClient(
        "The client_assertion is not a JWT (three base64url parts, a JSON payload): sign one with the client's key, iss and sub the client_id (private_key_jwt).",
      );
    }
    return invalidClient(
      'The client assertion iss names no client registered with profile fapi2: make iss and sub the client_id, and send client_id beside it.',
    );
  }
  return invalidClient(
    'The client is not registered, or not named: send client_id and a client_assertion whose iss is the client_id.',
  );
}

/** One local key set per key list (inline, or one fetch): jose then imports each key once. */
const keySets = new WeakMap<readonly PublicJwk[], ReturnType<typeof createLocalJWKSet>>();

function keySetOf(keys: readonly PublicJwk[]): ReturnType<typeof createLocalJWKSet> {
  let set = keySets.get(keys);
  if (set === undefined) {
    set = createLocalJWKSet({ keys: keys.filter(isSigningJwk) as never[] });
    keySets.set(keys, set);
  }
  return set;
}

async function verifyWithKeys(
  ctx: ProviderContext,
  jwks: ClientJwks,
  client: ResolvedClient,
  assertion: string,
): Promise<JWTPayload> {
  const options = {
    issuer: client.clientId,
    subject: client.clientId,
    algorithms: [...FAPI_SIGNING_ALGS],
    requiredClaims: ['exp', 'jti'],
    clockTolerance: CLOCK_SKEW_S,
    currentDate: new Date(ctx.config.clock()),
  };
  for (const refresh of [false, true]) {
    const keys = await jwks.keys(client, refresh);
    try {
      return (await jwtVerify(assertion, keySetOf(keys), options)).payload;
    } catch (err) {
      if (!refresh && err instanceof errors.JWKSNoMatchingKey && client.fapi?.jwksUri !== undefined) continue;
      throw err;
    }
  }
  throw new errors.JWKSNoMatchingKey();
}

function describe(err: unknown): string {
  if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) {
    return 'No registered signing key of the client matches the assertion: name its kid in the header, and register the public key (jwks or jwksUri).';
  }
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return 'The client assertion signature does not verify with the registered key.';
  if (err instanceof errors.JWTExpired)
    return 'The client assertion has expired: make a fresh one for each request, with exp a minute ahead.';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss' || err.claim === 'sub')
      return 'The client assertion iss and sub must both be the client_id.';
    if (err.claim === 'nbf') return 'The client assertion nbf is in the future: check the clock.';
    if (err.claim === 'exp' || err.claim === 'jti') return `The client assertion has no ${err.claim}: it is required.`;
    return `The client assertion claim ${err.claim} is invalid: ${err.reason}.`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed)
    return `The client assertion alg is not accepted: sign with ${FAPI_SIGNING_ALGS.join(', ')}.`;
  if (err instanceof ClientKeysUnavailable) return `The client's public keys could not be had: ${err.message}.`;
  return 'The client assertion is not a valid signed JWT.';
}

/**
 * Authenticate a FAPI client by its assertion, for `issuer`; flags the audit on a reused `jti`
 * or a long-lived assertion.
 * @throws OAuthRefusal with `invalid_client` (401) on any failure.
 */
export async function authenticateAssertion(
  ctx: ProviderContext,
  jwks: ClientJwks,
  client: ResolvedClient,
  fields: AssertionFields,
): Promise<void> {
  if (fields.client_secret !== undefined) {
    ctx.audit.flag(client.clientId, 'fapi_client_secret_sent');
    throw invalidClient(
      'This client is registered for FAPI 2.0: it authenticates with private_key_jwt (client_assertion), never client_secret.',
    );
  }
  if (fields.client_assertion === undefined || fields.client_assertion_type === undefined) {
    throw invalidClient(
      `Send client_assertion_type=${JWT_BEARER} and a client_assertion signed with the client's key (private_key_jwt).`,
    );
  }
  if (fields.client_assertion_type !== JWT_BEARER)
    throw invalidClient(`The client_assertion_type must be ${JWT_BEARER}.`);
  if (fields.client_id !== undefined && fields.client_id !== client.clientId) {
    throw invalidClient('The client_id differs from the client assertion iss.');
  }
  // Size and shape first: nothing is decoded, and the client's jwksUri not fetched, for an oversized assertion.
  if (!withinCompactLimits(fields.client_assertion, JWS_SEGMENTS, MAX_PROVIDER_JWT_LENGTH)) {
    throw invalidClient(
      `The client_assertion is not a compact JWS of three parts and at most ${MAX_PROVIDER_JWT_LENGTH} characters.`,
    );
  }
  let alg: unknown;
  let crit: unknown;
  try {
    ({ alg, crit } = decodeProtectedHeader(fields.client_assertion));
  } catch {
    throw invalidClient('The client_assertion is not a compact JWS.');
  }
  // No JWS extension is understood: a crit header fails closed, before the client's keys are fetched.
  if (crit !== undefined)
    throw invalidClient(
      'The client assertion header names critical extensions (crit); none is understood: sign without crit.',
    );
  if (!FAPI_SIGNING_ALGS.includes(alg as (typeof FAPI_SIGNING_ALGS)[number])) {
    throw invalidClient(
      `The client assertion alg ${algName(alg)} is not accepted: sign with ${FAPI_SIGNING_ALGS.join(', ')} (ES256 recommended); never none or an HMAC.`,
    );
  }
  let payload: JWTPayload;
  try {
    payload = await verifyWithKeys(ctx, jwks, client, fields.client_assertion);
  } catch (err) {
    throw invalidClient(describe(err));
  }
  const issuer = ctx.config.issuer;
  if (payload.aud !== issuer) {
    const why = Array.isArray(payload.aud)
      ? 'an array'
      : payload.aud === undefined
        ? 'missing'
        : 'another value (an endpoint URL is not accepted)';
    throw invalidClient(`The client assertion aud must be the issuer ${issuer} as a single string; it is ${why}.`);
  }
  const now = Math.floor(ctx.config.clock() / 1000);
  const exp = payload.exp as number;
  if (exp - now > MAX_ASSERTION_LIFETIME_S) {
    ctx.audit.flag(client.clientId, 'client_assertion_long_lived');
    throw invalidClient(
      `The client assertion exp is ${exp - now} s ahead; make it expire within ${MAX_ASSERTION_LIFETIME_S} s (a fresh assertion per request).`,
    );
  }
  if (typeof payload.iat === 'number' && payload.iat > now + CLOCK_SKEW_S) {
    throw invalidClient('The client assertion iat is in the future: check the clock.');
  }
  const jti = payload.jti;
  if (typeof jti !== 'string' || jti === '' || jti.length > 256)
    throw invalidClient('The client assertion jti must be a string of 1 to 256 characters, new for each assertion.');
  const key = `assertion\u0000${client.clientId}\u0000${jti}`;
  if (ctx.stores.usedJtis.has(key)) {
    ctx.audit.flag(client.clientId, 'client_assertion_jti_reused');
    throw invalidClient(
      'The client assertion jti was already used: make a fresh assertion, with a new jti, for each request.',
    );
  }
  rememberJti(ctx, client.clientId, key, (exp + CLOCK_SKEW_S) * 1000);
}
