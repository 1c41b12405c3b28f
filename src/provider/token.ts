/**
 * POST /v2/oauth/token (spec 4.2): client authentication in constant time, then the single-use,
 * client-bound, redirect-bound, PKCE-checked code (refused past the request's `max_age`), then the
 * tokens. Errors are RFC 6749 5.2 JSON. A FAPI 2.0 client authenticates with `private_key_jwt`
 * and DPoP (`fapi/token-request.ts`), and gets a DPoP-bound token and an encrypted ID token.
 */
import { createHash } from 'node:crypto';
import { epochSeconds } from '../clock.js';
import { isPkceString, randomToken } from '../pkce.js';
import { clientAuthRefusal, isBasicAuthorization } from './client-auth-policy.js';
import type { ResolvedClient } from './config.js';
import { fapiClientNamed, unnamedClientRefusal } from './fapi/client-assertion.js';
import { idTokenAlgOf } from './fapi/registration.js';
import { DpopRefusal } from './fapi/dpop.js';
import { authenticateFapiTokenRequest, encryptIdToken } from './fapi/token-request.js';
import type { ProviderContext } from './context.js';
import { accessTokenHash, secretsEqual } from './crypto.js';
import { json, NO_STORE, oauthError, type Answer } from './http/answer.js';
import { MAX_BODY_BYTES } from './http/body.js';
import { OAuthRefusal } from './http/refusal.js';
import { mediaTypeOf } from './http/media-type.js';
import type { ProviderRequest } from './http/request.js';
import { pooledRandomToken } from './random-pool.js';
import type { ProviderRoute } from './router.js';
import { endpointUrl, servedPath } from './variant.js';

/** Path of the token endpoint. */
export const TOKEN_PATH = '/v2/oauth/token';

const FIELDS = [
  'client_id',
  'client_secret',
  'code',
  'grant_type',
  'code_verifier',
  'redirect_uri',
  'client_assertion_type',
  'client_assertion',
] as const;
type Field = (typeof FIELDS)[number];
const FIELD_MAX_LENGTH = 4096;
/** Compared against for an unknown client, so both paths do the same work; drawn lazily (workers refuse randomness at load). */
let dummySecret: string | undefined;

function readFields(req: ProviderRequest): Partial<Record<Field, string>> {
  const received = req.body;
  if (received.kind === 'other' || received.kind === 'none') {
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'The body must be application/json or application/x-www-form-urlencoded.',
    );
  }
  if (received.kind === 'error') {
    if (received.status === 413) {
      throw new OAuthRefusal(
        413,
        'invalid_request',
        `The body is larger than ${MAX_BODY_BYTES} bytes or has too many parameters.`,
      );
    }
    throw new OAuthRefusal(400, 'invalid_request', received.message);
  }
  const body = received.kind === 'form' ? received.fields : received.value;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OAuthRefusal(400, 'invalid_request', 'The body must be an object of parameters.');
  }
  const out: Partial<Record<Field, string>> = {};
  for (const name of FIELDS) {
    const value = (body as Record<string, unknown>)[name];
    if (value === undefined || value === '') continue;
    if (Array.isArray(value))
      throw new OAuthRefusal(400, 'invalid_request', `The ${name} parameter was sent more than once.`);
    if (typeof value !== 'string')
      throw new OAuthRefusal(400, 'invalid_request', `The ${name} parameter must be a string.`);
    if (value.length > FIELD_MAX_LENGTH)
      throw new OAuthRefusal(400, 'invalid_request', `The ${name} parameter is too long.`);
    out[name] = value;
  }
  return out;
}

/** Credentials from `Authorization: Basic`, undefined when that header is not Basic. */
function basicCredentials(req: ProviderRequest): { clientId: string; clientSecret: string } | undefined {
  const header = req.headers.authorization;
  if (header === undefined || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const bad = new OAuthRefusal(401, 'invalid_client', 'The HTTP Basic credentials are malformed.', {
    'WWW-Authenticate': 'Basic realm="nd-id-provider"',
  });
  if (colon <= 0) throw bad;
  try {
    // RFC 6749 2.3.1: both parts are form-urlencoded before being joined.
    const unform = (s: string): string => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: unform(decoded.slice(0, colon)), clientSecret: unform(decoded.slice(colon + 1)) };
  } catch {
    throw bad;
  }
}

/** With `strictClientAuth`: refuses (and audits) a form body or HTTP Basic, which spec 4.2 does not name. */
function refuseOutsideSpec(ctx: ProviderContext, req: ProviderRequest, body: Partial<Record<Field, string>>): void {
  const basic = isBasicAuthorization(req.headers.authorization);
  const refusal = clientAuthRefusal(ctx.config.strictClientAuth, { mediaType: mediaTypeOf(req.headers), basic });
  if (refusal === undefined) return;
  const clientId = (basic ? basicCredentials(req)?.clientId : undefined) ?? body.client_id;
  if (clientId !== undefined) ctx.audit.flag(clientId, 'client_auth_outside_spec');
  throw new OAuthRefusal(refusal.status, refusal.error, refusal.description, refusal.headers);
}

function authenticateClient(
  ctx: ProviderContext,
  req: ProviderRequest,
  body: Partial<Record<Field, string>>,
): ResolvedClient {
  const basic = basicCredentials(req);
  if (basic && body.client_secret !== undefined) {
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'Use one client authentication method: HTTP Basic or client_secret in the body, not both.',
    );
  }
  if (basic && body.client_id !== undefined && body.client_id !== basic.clientId) {
    throw new OAuthRefusal(400, 'invalid_request', 'The client_id in the body differs from the one in HTTP Basic.');
  }
  const clientId = basic?.clientId ?? body.client_id;
  const secret = basic?.clientSecret ?? body.client_secret;
  if (clientId === undefined) throw new OAuthRefusal(400, 'invalid_request', 'The client_id parameter is missing.');
  if (secret === undefined) throw new OAuthRefusal(400, 'invalid_request', 'The client_secret parameter is missing.');
  const client = ctx.config.clients.get(clientId);
  const matches = secretsEqual(secret, client?.clientSecret ?? (dummySecret ??= randomToken(32)));
  if (!client || !matches) {
    if (client) ctx.audit.flag(client.clientId, 'client_secret_wrong');
    // Every 401 names a scheme (RFC 9110 15.5.2), whichever way the credentials came (RFC 6749 5.2).
    throw new OAuthRefusal(401, 'invalid_client', 'Client authentication failed.', {
      'WWW-Authenticate': 'Basic realm="nd-id-provider"',
    });
  }
  return client;
}

/** Time claims whose numeric overrides are seconds relative to now. */
const RELATIVE_TIME_CLAIMS = new Set(['exp', 'iat', 'nbf', 'auth_time']);

/** `claims` with the scripted overrides of one login applied (`undefined` removes a claim). */
function applyClaimOverrides(
  claims: Record<string, unknown>,
  overrides: Readonly<Record<string, unknown>> | undefined,
  now: number,
): Record<string, unknown> {
  if (overrides === undefined) return claims;
  const out: Record<string, unknown> = { ...claims };
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete out[name];
    else out[name] = RELATIVE_TIME_CLAIMS.has(name) && typeof value === 'number' ? now + value : value;
  }
  return out;
}

function pkceMatches(verifier: string, challenge: string): boolean {
  return secretsEqual(createHash('sha256').update(verifier, 'ascii').digest('base64url'), challenge);
}

/** The client a token request named (registered ones only), for the log line of a refusal. */
interface Named {
  clientId?: string;
}

async function exchange(ctx: ProviderContext, req: ProviderRequest, named: Named): Promise<Answer> {
  const { config, stores } = ctx;
  const body = readFields(req);
  // The client named in the body or in HTTP Basic, so a refusal's log line says whose request it was.
  const namedId = body.client_id ?? basicCredentials(req)?.clientId;
  if (namedId !== undefined && config.clients.has(namedId)) named.clientId = namedId;
  const fapiClient = fapiClientNamed(ctx, { ...body, client_id: namedId });
  let dpopJkt: string | undefined;
  let client: ResolvedClient;
  if (fapiClient !== undefined) {
    named.clientId = fapiClient.clientId;
    dpopJkt = await authenticateFapiTokenRequest(ctx, fapiClient, req, body, endpointUrl(config, TOKEN_PATH));
    client = fapiClient;
  } else {
    // An assertion alone names its client by its iss: one that names none is refused as a failed
    // client authentication, as at PAR, not as a missing client_id.
    if (body.client_assertion !== undefined && body.client_id === undefined && req.headers.authorization === undefined)
      throw unnamedClientRefusal(body);
    refuseOutsideSpec(ctx, req, body);
    client = authenticateClient(ctx, req, body);
  }
  named.clientId = client.clientId;

  if (body.grant_type === undefined)
    throw new OAuthRefusal(400, 'invalid_request', 'The grant_type parameter is missing.');
  if (body.grant_type !== 'authorization_code') {
    throw new OAuthRefusal(400, 'unsupported_grant_type', 'Only grant_type=authorization_code is supported.');
  }
  if (body.code === undefined) throw new OAuthRefusal(400, 'invalid_request', 'The code parameter is missing.');
  if (body.redirect_uri === undefined)
    throw new OAuthRefusal(400, 'invalid_request', 'The redirect_uri parameter is missing.');
  // Every code carries a code_challenge: without its verifier the grant fails PKCE (RFC 7636 4.6).
  if (body.code_verifier === undefined)
    throw new OAuthRefusal(
      400,
      'invalid_grant',
      'The code_verifier parameter is missing: send the PKCE verifier of the login.',
    );
  if (!isPkceString(body.code_verifier)) {
    throw new OAuthRefusal(
      400,
      'invalid_request',
      'The code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.',
    );
  }

  const now = config.clock();
  const record = stores.codes.get(body.code);
  if (!record || record.clientId !== client.clientId) {
    throw new OAuthRefusal(
      400,
      'invalid_grant',
      'The authorization code is invalid, expired, or was issued to another client.',
    );
  }
  if (record.used) {
    ctx.audit.flag(client.clientId, 'code_redeemed_twice');
    for (const token of record.accessTokens) stores.accessTokens.delete(token);
    record.accessTokens = [];
    throw new OAuthRefusal(
      400,
      'invalid_grant',
      'The authorization code was already used; the tokens issued from it are revoked.',
    );
  }
  // Single use: consumed at the first attempt, and remembered for the access-token lifetime so a
  // replay can still revoke what it issued.
  record.used = true;
  stores.codes.set(body.code, record, now + Math.max(config.ttl.code, config.ttl.accessToken) * 1000);

  if (record.redirectUri !== body.redirect_uri) {
    throw new OAuthRefusal(400, 'invalid_grant', 'The redirect_uri differs from the one of the authorization request.');
  }
  if (!pkceMatches(body.code_verifier, record.codeChallenge)) {
    ctx.audit.flag(client.clientId, 'token_request_without_verifier_match');
    throw new OAuthRefusal(400, 'invalid_grant', 'The code_verifier does not match the code_challenge.');
  }
  if (record.dpopJkt !== undefined && record.dpopJkt !== dpopJkt) {
    ctx.audit.flag(client.clientId, 'dpop_key_not_bound');
    throw new OAuthRefusal(
      400,
      'invalid_grant',
      'The DPoP proof key is not the one the authorization was bound to (dpop_jkt): use the same DPoP key pair for the whole login.',
    );
  }
  const persona = ctx.persona(record.personaId);
  if (!persona) throw new Error('persona of a code is missing');

  const sub = ctx.subjectFor(client.clientId, persona.id);
  const accessToken = pooledRandomToken(32);
  const iat = epochSeconds(config.clock);
  const exp = iat + config.ttl.accessToken;
  if (record.maxAge !== undefined && iat > record.authTime + record.maxAge) {
    throw new OAuthRefusal(
      400,
      'invalid_grant',
      'The sign-in is older than the max_age of the authorization request; start again.',
    );
  }
  // Listed before signing: a replay while this redemption signs and encrypts revokes it too.
  const issued = record.accessTokens;
  issued.push(accessToken);
  const alg = idTokenAlgOf(client);
  const signedIdToken = await ctx.conformance.signIdToken(
    client.clientId,
    alg,
    accessToken,
    applyClaimOverrides(
      {
        iss: config.issuer,
        sub,
        aud: client.clientId,
        ...(record.nonce !== undefined ? { nonce: record.nonce } : {}),
        exp,
        iat,
        auth_time: record.authTime,
        at_hash: accessTokenHash(accessToken, alg),
        // The provider session of this sign-in: a back-channel logout names it.
        sid: ctx.sessions.start(client.clientId, persona.id, sub),
      },
      record.overrides?.claims,
      iat,
    ),
  );
  const sealed = dpopJkt !== undefined && ctx.conformance.encryptsIdToken(accessToken);
  const idToken = sealed ? await encryptIdToken(ctx, client, signedIdToken) : signedIdToken;
  if (record.accessTokens !== issued || !issued.includes(accessToken)) {
    throw new OAuthRefusal(
      400,
      'invalid_grant',
      'The authorization code was used twice; the tokens issued from it are revoked.',
    );
  }
  stores.accessTokens.set(
    accessToken,
    {
      clientId: client.clientId,
      personaId: persona.id,
      sub,
      scopes: record.scopes,
      ...(record.overrides?.data === undefined ? {} : { dataOverrides: record.overrides.data }),
      ...(dpopJkt === undefined ? {} : { dpopJkt }),
    },
    now + config.ttl.accessToken * 1000,
  );
  ctx.log('token', `tokens issued to client ${client.clientId}`);
  const tokens = {
    access_token: accessToken,
    id_token: idToken,
    token_type: dpopJkt === undefined ? 'Bearer' : 'DPoP',
    expires_in: config.ttl.accessToken,
  };
  const answer = json(200, ctx.conformance.tokenBody(accessToken, tokens), NO_STORE);
  if (!sealed) return answer;
  return {
    ...answer,
    sealedIdToken: { jws: signedIdToken, encrypt: (jws: string) => encryptIdToken(ctx, client, jws) },
  };
}

async function token(ctx: ProviderContext, req: ProviderRequest): Promise<Answer> {
  const named: Named = {};
  try {
    return await exchange(ctx, req, named);
  } catch (caught) {
    let err = caught;
    if (err instanceof DpopRefusal)
      err = new OAuthRefusal(
        400,
        err.error,
        err.description,
        err.nonce === undefined ? {} : { 'DPoP-Nonce': err.nonce },
      );
    if (!(err instanceof OAuthRefusal)) throw err;
    // Every refusal, one line: the code, the client when registered, and the fixed sentence (never a value sent).
    ctx.log(
      'token',
      `refused: ${err.error} (${err.status})${named.clientId !== undefined ? ` for client ${named.clientId}` : ''}: ${err.description}`,
    );
    return oauthError(err.status, err.error, err.description, err.headers);
  }
}

/** The routes of this file. */
export function tokenRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    {
      endpoint: 'token',
      method: 'POST',
      path: servedPath(ctx.config, TOKEN_PATH),
      failure: 'json',
      body: {},
      handle: (req) => token(ctx, req),
    },
  ];
}
