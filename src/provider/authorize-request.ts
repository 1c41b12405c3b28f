/**
 * The parameters of an authorization request (spec 4.1), validated client and redirect URI first.
 * The authorize query and a pushed request (RFC 9126, FAPI 2.0) share it, so both meet the same rules.
 */
import { contextMessageProblem, MAX_CONTEXT_MESSAGE_LENGTH } from '../context-message.js';
import { isPkceString } from '../pkce.js';
import type { ProviderContext } from './context.js';
import { paramReader } from './http/request.js';
import { describeRedirectUriMismatch } from './redirect-uri-hint.js';
import { SUPPORTED_SCOPES } from './scopes.js';
import type { ValidRequest } from './valid-request.js';
import { servesUserinfo } from './variant.js';

/** Path of the authorization endpoint. */
export const AUTHORIZE_PATH = '/v2/oauth/authorize';

/** Longest accepted `state`. */
export const MAX_STATE_LENGTH = 1024;
/** Longest accepted `nonce`. */
export const MAX_NONCE_LENGTH = 512;
export { MAX_CONTEXT_MESSAGE_LENGTH };
/**
 * Longest accepted authorize query string: 8 KiB, the usual request-line limit of web servers and
 * proxies (the per-parameter limits add up to about 5 KiB).
 */
export const MAX_AUTHORIZE_QUERY_LENGTH = 8 * 1024;
/** The `prompt` values of OIDC Core 3.1.2.1. */
const PROMPT_VALUES = new Set(['none', 'login', 'consent', 'select_account']);

const VISIBLE_ASCII = /^[\x20-\x7e]*$/;

export type { ValidRequest } from './valid-request.js';

/** An `authentication_context_type`, written as the national service's are (`APP_AUTHENTICATION_DEFAULT`). */
const CONTEXT_TYPE = /^[A-Z][A-Z0-9_]{0,63}$/;

/** The outcome of validating an authorization request. */
export type Validation = { ok: true; request: ValidRequest } | { ok: false; code: string; message: string };

function fail(code: string, message: string): Validation {
  return { ok: false, code, message };
}

/** Validates the query, client and redirect URI first; the endpoint has checked its size already. */
export function validateAuthorizeQuery(ctx: ProviderContext, params: URLSearchParams): Validation {
  const param = paramReader(params);
  const clientId = param('client_id', 256);
  if (!clientId.ok) return fail('invalid_request', clientId.reason);
  if (clientId.value === undefined) return fail('invalid_request', 'The client_id parameter is missing.');
  const client = ctx.config.clients.get(clientId.value);
  if (!client) {
    // The id as sent (the page escapes it), so a typo shows: the app and this service disagree on it.
    return fail(
      'invalid_client',
      `The client_id ${JSON.stringify(clientId.value)} is not registered with this service: check the app's clientId (ND_ID_CLIENT_ID) against the clientId in the service's clients.json.`,
    );
  }
  const userinfo = servesUserinfo(ctx.config, client);

  const redirectUri = param('redirect_uri', 2048);
  if (!redirectUri.ok) return fail('invalid_request', redirectUri.reason);
  if (redirectUri.value === undefined) return fail('invalid_request', 'The redirect_uri parameter is missing.');
  if (!client.redirectUris.has(redirectUri.value)) {
    return fail('redirect_uri_mismatch', describeRedirectUriMismatch(redirectUri.value, client.redirectUris));
  }

  const responseMode = param('response_mode', 64);
  if (!responseMode.ok) return fail('invalid_request', responseMode.reason);
  if (responseMode.value !== undefined && responseMode.value !== 'query') {
    // Answering a fragment or form_post request in the query would be read by nobody, or by the
    // wrong code: refuse it on this page instead.
    return fail(
      'invalid_request',
      'The response_mode must be query (or left out); this service answers in the query string only.',
    );
  }

  const responseType = param('response_type', 64);
  if (!responseType.ok) return fail('invalid_request', responseType.reason);
  if (responseType.value !== 'code') {
    return fail('unsupported_response_type', 'The response_type must be code.');
  }

  const scope = param('scope', 1024);
  if (!scope.ok) return fail('invalid_request', scope.reason);
  const scopes = [...new Set((scope.value ?? '').split(' ').filter((s) => s !== ''))];
  if (!scopes.includes('openid')) return fail('invalid_scope', 'The scope must include openid.');
  const unsupported = scopes.filter((s) => !SUPPORTED_SCOPES.includes(s));
  if (unsupported.length > 0) {
    return fail(
      'invalid_scope',
      `Unsupported scope${unsupported.length === 1 ? '' : 's'}: ${unsupported
        .slice(0, 5)
        .map((s) => s.slice(0, 64))
        .join(', ')}. ` + `Supported: ${SUPPORTED_SCOPES.join(', ')}.`,
    );
  }

  const attributeScopes = userinfo ? [] : scopes.filter((s) => s !== 'openid');
  if (attributeScopes.length > 0) {
    return fail(
      'invalid_scope',
      `This client is served no userinfo, so openid is the only scope: the person is the one of the ID token. Remove ${attributeScopes.slice(0, 5).join(', ')}.`,
    );
  }

  const method = param('code_challenge_method', 64);
  if (!method.ok) return fail('invalid_request', method.reason);
  if (method.value !== 'S256') {
    return fail(
      'invalid_request',
      method.value === undefined
        ? 'The code_challenge_method parameter is missing; PKCE with S256 is required.'
        : 'The code_challenge_method must be S256; other methods are not supported.',
    );
  }

  const challenge = param('code_challenge', 256);
  if (!challenge.ok) return fail('invalid_request', challenge.reason);
  if (challenge.value === undefined) return fail('invalid_request', 'The code_challenge parameter is missing.');
  if (!isPkceString(challenge.value)) {
    return fail('invalid_request', 'The code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.');
  }

  const state = param('state', MAX_STATE_LENGTH);
  if (!state.ok) return fail('invalid_request', state.reason);
  if (state.value !== undefined && !VISIBLE_ASCII.test(state.value)) {
    return fail('invalid_request', 'The state parameter must contain visible ASCII characters only.');
  }
  const nonce = param('nonce', MAX_NONCE_LENGTH);
  if (!nonce.ok) return fail('invalid_request', nonce.reason);
  if (nonce.value !== undefined && !VISIBLE_ASCII.test(nonce.value)) {
    return fail('invalid_request', 'The nonce parameter must contain visible ASCII characters only.');
  }

  const prompt = param('prompt', 256);
  if (!prompt.ok) return fail('invalid_request', prompt.reason);
  const prompts = (prompt.value ?? '').split(' ').filter((p) => p !== '');
  if (prompts.some((p) => !PROMPT_VALUES.has(p))) {
    return fail('invalid_request', 'The prompt parameter may hold only none, login, consent and select_account.');
  }
  if (prompts.includes('none') && prompts.length > 1) {
    return fail('invalid_request', 'prompt=none cannot be combined with other prompt values.');
  }
  const maxAge = param('max_age', 10);
  if (!maxAge.ok) return fail('invalid_request', maxAge.reason);
  if (maxAge.value !== undefined && !/^\d+$/.test(maxAge.value)) {
    return fail('invalid_request', 'The max_age parameter must be a whole number of seconds.');
  }

  const hint = param('login_hint', 128);
  const contextMessage = param('authentication_context_message', 4 * MAX_CONTEXT_MESSAGE_LENGTH);
  if (!contextMessage.ok) return fail('invalid_request', contextMessage.reason);
  const messageProblem = contextMessage.value === undefined ? undefined : contextMessageProblem(contextMessage.value);
  if (messageProblem !== undefined) {
    return fail(
      'invalid_request',
      `The authentication_context_message ${messageProblem} (it is shown on the phone beside the approval).`,
    );
  }

  const contextType = param('authentication_context_type', 64);
  if (!contextType.ok) return fail('invalid_request', contextType.reason);
  if (contextType.value !== undefined && !CONTEXT_TYPE.test(contextType.value)) {
    return fail(
      'invalid_request',
      'The authentication_context_type must be a name of capitals, digits and underscores, such as APP_AUTHENTICATION_DEFAULT.',
    );
  }

  return {
    ok: true,
    request: {
      clientId: client.clientId,
      clientName: client.name,
      redirectUri: redirectUri.value,
      scopes,
      state: state.value,
      nonce: nonce.value,
      codeChallenge: challenge.value,
      promptNone: prompts.includes('none'),
      maxAge: maxAge.value === undefined ? undefined : Number(maxAge.value),
      loginHint: hint.ok ? hint.value : undefined,
      contextMessage: contextMessage.value,
      contextType: contextType.value,
    },
  };
}
