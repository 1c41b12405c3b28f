/**
 * GET /v2/oauth/authorize (spec 4.1): validates the request in a fixed order, then shows the QR
 * page (or, with auto-approval, redirects at once with a code). Also the QR page's status and
 * no-script continue endpoints, which live outside /v2.
 *
 * Request problems never redirect: they get an HTML page with status 400, an error code and a
 * message (RFC 6749 4.1.2.1 for the client and redirect URI; the spec's "HTML page" for the rest).
 *
 * A query string longer than {@link MAX_AUTHORIZE_QUERY_LENGTH} is refused before it is parsed,
 * so before the client and redirect URI checks: nothing in it can be trusted, and refusing it
 * never redirects either. A pending authorization keeps only validated, length-limited values;
 * unknown parameters are ignored and never stored or echoed.
 */
import { isPkceString } from '../pkce.js';
import type { ProviderContext } from './context.js';
import { callbackUrl, issueCode } from './grant.js';
import { bytes, empty, json, redirect, type Answer } from './http/answer.js';
import { singleParam, type ProviderRequest } from './http/request.js';
import type { ProviderRoute } from './router.js';
import { pooledRandomBytes } from './random-pool.js';
import { describeRedirectUriMismatch } from './redirect-uri-hint.js';
import { SUPPORTED_SCOPES } from './scopes.js';
import type { LoginOverrides, PendingAuthorization } from './store.js';
import type { Persona } from './types.js';
import { describeUserAgent, quotaKeyOf } from './user-agent.js';
import { renderErrorPage } from './views/error-page.js';
import { escapeHtml, htmlAnswer, renderPage } from './views/html.js';
import { renderQrPage } from './views/qr-page.js';
import { renderQrSvg } from './views/qr-svg.js';

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * How many numbers the phone offers, one of them the QR page's: someone who saw only the QR
 * code (not the page beside it) picks the right one blindly once in this many tries, and a wrong
 * pick ends the login.
 */
export const MATCH_CHOICES = 12;

/** Path of the authorization endpoint. */
export const AUTHORIZE_PATH = '/v2/oauth/authorize';
/** Path prefix of the mobile app (the QR payload). */
export const MOBILE_PATH = '/mobile-app';
/** Path prefix of the QR page's JSON status endpoint. */
export const STATUS_PATH = '/_provider/qr-status';
/** Path prefix of the no-script continue endpoint. */
export const CONTINUE_PATH = '/_provider/qr-continue';
/** Path prefix of the QR image (SVG) of a pending authorization. */
export const QR_IMAGE_PATH = '/_provider/qr-image';
/** Path prefix of the QR page's Cancel link. */
export const CANCEL_PATH = '/_provider/qr-cancel';

/** Longest accepted `state`. */
export const MAX_STATE_LENGTH = 1024;
/** Longest accepted `nonce`. */
export const MAX_NONCE_LENGTH = 512;
/**
 * Longest accepted authorize query string, in characters (bytes on the wire): 8 KiB, the usual
 * request-line limit of web servers and proxies. The per-parameter limits add up to about 5 KiB.
 */
export const MAX_AUTHORIZE_QUERY_LENGTH = 8 * 1024;
/** CSS pixel size of the QR image. */
const QR_SIZE = 320;
/** The `prompt` values of OIDC Core 3.1.2.1. */
const PROMPT_VALUES = new Set(['none', 'login', 'consent', 'select_account']);

const VISIBLE_ASCII = /^[\x20-\x7e]*$/;

/** A validated authorization request. */
export interface ValidRequest {
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  state: string | undefined;
  nonce: string | undefined;
  codeChallenge: string;
  /** True for `prompt=none`: answered with `login_required` at once (no sign-in session is kept). */
  promptNone: boolean;
  /** `max_age` in seconds, when sent. */
  maxAge: number | undefined;
}

type Validation = { ok: true; request: ValidRequest } | { ok: false; code: string; message: string };

function fail(code: string, message: string): Validation {
  return { ok: false, code, message };
}

/**
 * Validate the query in the order of the issue: client and redirect URI first, then the rest.
 * The query's overall size is checked before this, by the endpoint.
 */
export function validateAuthorizeQuery(ctx: ProviderContext, params: URLSearchParams): Validation {
  const clientId = singleParam(params, 'client_id', 256);
  if (!clientId.ok) return fail('invalid_request', clientId.reason);
  if (clientId.value === undefined) return fail('invalid_request', 'The client_id parameter is missing.');
  const client = ctx.config.clients.get(clientId.value);
  if (!client) return fail('invalid_client', 'The client_id is not registered with this service.');

  const redirectUri = singleParam(params, 'redirect_uri', 2048);
  if (!redirectUri.ok) return fail('invalid_request', redirectUri.reason);
  if (redirectUri.value === undefined) return fail('invalid_request', 'The redirect_uri parameter is missing.');
  if (!client.redirectUris.has(redirectUri.value)) {
    return fail('redirect_uri_mismatch', describeRedirectUriMismatch(redirectUri.value, client.redirectUris));
  }

  const responseMode = singleParam(params, 'response_mode', 64);
  if (!responseMode.ok) return fail('invalid_request', responseMode.reason);
  if (responseMode.value !== undefined && responseMode.value !== 'query') {
    // Answering a fragment or form_post request in the query would be read by nobody, or by the
    // wrong code: refuse it on this page instead.
    return fail('invalid_request', 'The response_mode must be "query" (or left out); this service answers in the query string only.');
  }

  const responseType = singleParam(params, 'response_type', 64);
  if (!responseType.ok) return fail('invalid_request', responseType.reason);
  if (responseType.value !== 'code') {
    return fail('unsupported_response_type', 'The response_type must be "code".');
  }

  const scope = singleParam(params, 'scope', 1024);
  if (!scope.ok) return fail('invalid_request', scope.reason);
  const scopes = [...new Set((scope.value ?? '').split(' ').filter((s) => s !== ''))];
  if (!scopes.includes('openid')) return fail('invalid_scope', 'The scope must include "openid".');
  const unsupported = scopes.filter((s) => !SUPPORTED_SCOPES.includes(s));
  if (unsupported.length > 0) {
    return fail(
      'invalid_scope',
      `Unsupported scope${unsupported.length === 1 ? '' : 's'}: ${unsupported.slice(0, 5).map((s) => s.slice(0, 64)).join(', ')}. ` +
        `Supported: ${SUPPORTED_SCOPES.join(', ')}.`,
    );
  }

  const method = singleParam(params, 'code_challenge_method', 64);
  if (!method.ok) return fail('invalid_request', method.reason);
  if (method.value !== 'S256') {
    return fail(
      'invalid_request',
      method.value === undefined
        ? 'The code_challenge_method parameter is missing; PKCE with S256 is required.'
        : 'The code_challenge_method must be "S256"; other methods are not supported.',
    );
  }

  const challenge = singleParam(params, 'code_challenge', 256);
  if (!challenge.ok) return fail('invalid_request', challenge.reason);
  if (challenge.value === undefined) return fail('invalid_request', 'The code_challenge parameter is missing.');
  if (!isPkceString(challenge.value)) {
    return fail('invalid_request', 'The code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~.');
  }

  const state = singleParam(params, 'state', MAX_STATE_LENGTH);
  if (!state.ok) return fail('invalid_request', state.reason);
  if (state.value !== undefined && !VISIBLE_ASCII.test(state.value)) {
    return fail('invalid_request', 'The state parameter must contain visible ASCII characters only.');
  }
  const nonce = singleParam(params, 'nonce', MAX_NONCE_LENGTH);
  if (!nonce.ok) return fail('invalid_request', nonce.reason);
  if (nonce.value !== undefined && !VISIBLE_ASCII.test(nonce.value)) {
    return fail('invalid_request', 'The nonce parameter must contain visible ASCII characters only.');
  }

  const prompt = singleParam(params, 'prompt', 256);
  if (!prompt.ok) return fail('invalid_request', prompt.reason);
  const prompts = (prompt.value ?? '').split(' ').filter((p) => p !== '');
  if (prompts.some((p) => !PROMPT_VALUES.has(p))) {
    return fail('invalid_request', 'The prompt parameter may hold only none, login, consent and select_account.');
  }
  if (prompts.includes('none') && prompts.length > 1) {
    return fail('invalid_request', 'prompt=none cannot be combined with other prompt values.');
  }
  const maxAge = singleParam(params, 'max_age', 10);
  if (!maxAge.ok) return fail('invalid_request', maxAge.reason);
  if (maxAge.value !== undefined && !/^\d+$/.test(maxAge.value)) {
    return fail('invalid_request', 'The max_age parameter must be a whole number of seconds.');
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
    },
  };
}

/**
 * The authorize URL of a validated request, for "start again": rebuilt from the known parameters
 * only, so nothing else the browser sent is kept or echoed.
 */
export function startAgainUrl(publicBase: string, request: ValidRequest): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scopes.join(' '),
  });
  if (request.state !== undefined) params.set('state', request.state);
  if (request.nonce !== undefined) params.set('nonce', request.nonce);
  params.set('code_challenge', request.codeChallenge);
  params.set('code_challenge_method', 'S256');
  if (request.maxAge !== undefined) params.set('max_age', String(request.maxAge));
  return `${publicBase}${AUTHORIZE_PATH}?${params.toString()}`;
}

function authorize(ctx: ProviderContext, req: ProviderRequest): Answer {
  const { config, stores } = ctx;
  const now = config.clock();
  if (req.rawQuery.length > MAX_AUTHORIZE_QUERY_LENGTH) {
    ctx.log('authorize', 'refused: invalid_request (query too large)');
    return htmlAnswer(
      400,
      renderErrorPage('invalid_request', `The request is too large: its query string is longer than ${MAX_AUTHORIZE_QUERY_LENGTH} characters.`),
    );
  }
  const params = req.query;
  const result = validateAuthorizeQuery(ctx, params);
  ctx.audit.authorize(params.get('client_id') ?? undefined, result);
  if (!result.ok) {
    ctx.log('authorize', refusalLine(ctx, params, result));
    return htmlAnswer(400, renderErrorPage(result.code, result.message));
  }
  const request = result.request;

  if (request.promptNone) {
    // No sign-in session is kept, so a login without interaction is never possible (OIDC Core 3.1.2.6).
    ctx.log('authorize', `prompt=none answered login_required for client ${request.clientId}`);
    return redirect(302, callbackUrl(ctx.config.issuer, request.redirectUri, { error: 'login_required', state: request.state }), NO_STORE);
  }

  ctx.conformance.authorize(request.clientId);
  const scripted = ctx.scripted.take(request.clientId);
  if (scripted !== undefined) {
    return answerAtOnce(ctx, request, scripted.deny ? undefined : scripted.persona, scripted.overrides, 'scripted');
  }
  if (config.autoApprove) {
    const hint = singleParam(params, 'login_hint', 128);
    const persona = hint.ok && hint.value !== undefined ? ctx.personas.get(hint.value) : config.autoApprove;
    if (persona === undefined) {
      ctx.log('authorize', 'refused: unknown login_hint');
      return htmlAnswer(
        400,
        renderErrorPage('invalid_request', `The login_hint names no known person. Known ids: ${ctx.personas.map((p) => p.id).join(', ')}.`),
      );
    }
    return answerAtOnce(ctx, request, persona, undefined, 'auto-approved');
  }

  const address = req.address;
  const expiresAt = now + config.ttl.authorization * 1000;
  if (stores.pendingByMobileId.isFull() || !stores.pendingQuota.tryAdd(quotaKeyOf(address), expiresAt)) {
    ctx.log('authorize', 'refused: too many pending sign-ins');
    return htmlAnswer(
      429,
      renderErrorPage(
        'too_many_requests',
        'Too many sign-ins are waiting for an answer from this network. Answer or close the open ones, or try again in a few minutes.',
      ),
      undefined,
      { 'Retry-After': String(config.ttl.authorization) },
    );
  }

  // Every random value of the QR login in one draw: two ids, the page's script nonce, the numbers.
  const random = pooledRandomBytes(32 + 32 + 16 + MATCH_RANDOM_BYTES);
  const { choices, code: matchCode } = matchNumbers(random.subarray(80));
  const pending: PendingAuthorization = {
    mobileId: random.subarray(0, 32).toString('base64url'),
    pollId: random.subarray(32, 64).toString('base64url'),
    clientId: request.clientId,
    redirectUri: request.redirectUri,
    scopes: request.scopes,
    state: request.state,
    nonce: request.nonce,
    codeChallenge: request.codeChallenge,
    maxAge: request.maxAge,
    createdAt: now,
    expiresAt,
    address,
    device: describeUserAgent(req.headers['user-agent']),
    matchCode,
    matchChoices: choices,
    status: 'pending',
  };
  stores.pendingByMobileId.set(pending.mobileId, pending, expiresAt);
  stores.pendingByPollId.set(pending.pollId, pending, expiresAt);

  const mobileUrl = `${config.publicBase}${MOBILE_PATH}/${pending.mobileId}`;
  const base = config.basePath;
  const nonce = random.subarray(64, 80).toString('base64');
  const html = renderQrPage(
    {
      clientName: request.clientName,
      // Same-origin relative paths: they work whichever host name the browser used.
      qrImageUrl: `${base}${QR_IMAGE_PATH}/${pending.pollId}`,
      qrSize: QR_SIZE,
      mobileUrl,
      matchCode,
      statusUrl: `${base}${STATUS_PATH}/${pending.pollId}`,
      continueUrl: `${base}${CONTINUE_PATH}/${pending.pollId}`,
      cancelUrl: `${base}${CANCEL_PATH}/${pending.pollId}`,
      authorizeUrl: startAgainUrl(config.publicBase, request),
      pollIntervalMs: config.pollIntervalMs,
      expiresInSeconds: config.ttl.authorization,
    },
    nonce,
  );
  ctx.log('authorize', `QR page shown for client ${request.clientId}`);
  return htmlAnswer(200, html, nonce);
}

/** Random bytes drawn for the numbers: enough for {@link MATCH_CHOICES} distinct ones nearly always. */
const MATCH_RANDOM_BYTES = 64;

/**
 * {@link MATCH_CHOICES} different two-digit numbers in random order (a uniform sample without
 * replacement: each byte below 180 gives `10 + byte % 90`, others are skipped), and the one of
 * them, picked uniformly, that the QR page shows. Draws more bytes in the rare case `random`
 * runs out.
 */
export function matchNumbers(random: Buffer): { choices: string[]; code: string } {
  const picked = new Set<number>();
  let bytes = random;
  let at = 0;
  let index = -1;
  while (picked.size < MATCH_CHOICES || index < 0) {
    if (at === bytes.length) {
      bytes = pooledRandomBytes(MATCH_RANDOM_BYTES);
      at = 0;
    }
    const byte = bytes[at++]!;
    if (picked.size < MATCH_CHOICES) {
      if (byte < 180) picked.add(10 + (byte % 90));
    } else if (byte < 252 - (252 % MATCH_CHOICES)) {
      index = byte % MATCH_CHOICES;
    }
  }
  const choices = [...picked].map(String);
  return { choices, code: choices[index]! };
}

/** Redirects back at once: with a code for `persona`, or `error=access_denied` when there is none. */
function answerAtOnce(
  ctx: ProviderContext,
  request: ValidRequest,
  persona: Persona | undefined,
  overrides: LoginOverrides | undefined,
  how: string,
): Answer {
  if (persona === undefined) {
    ctx.log('authorize', `${how}: denied for client ${request.clientId}`);
    const denied = { error: 'access_denied', error_description: 'The person declined.', state: request.state };
    return redirect(302, callbackUrl(ctx.config.issuer, request.redirectUri, denied), NO_STORE);
  }
  const code = issueCode(ctx, request, persona, overrides);
  ctx.log('authorize', `${how} for client ${request.clientId}`);
  const state = ctx.conformance.responseState(request.clientId, request.state);
  return redirect(302, callbackUrl(ctx.config.issuer, request.redirectUri, { code, state }), NO_STORE);
}

function pollIdOf(req: ProviderRequest): string {
  const id = req.params['pollId'];
  return typeof id === 'string' && id.length <= 64 ? id : '';
}

const EXPIRED_ANSWER = json(200, { status: 'expired' }, NO_STORE);
const PENDING_ANSWER = json(200, { status: 'pending' }, NO_STORE);
const MISMATCH_ANSWER = json(200, { status: 'mismatch' }, NO_STORE);

function status(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = ctx.stores.pendingByPollId.get(pollIdOf(req));
  if (!pending) return EXPIRED_ANSWER;
  if (pending.status === 'pending') return PENDING_ANSWER;
  if (pending.status === 'mismatch') return MISMATCH_ANSWER;
  return json(200, { status: pending.status, redirectTo: pending.redirectTo }, NO_STORE);
}

function continueWithoutScript(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = ctx.stores.pendingByPollId.get(pollIdOf(req));
  if (!pending) {
    return htmlAnswer(410, renderErrorPage('expired', 'This sign-in request has expired or does not exist. Start again from the site you were signing in to.'));
  } else if (pending.status === 'mismatch') {
    return htmlAnswer(403, renderErrorPage('number_mismatch', MISMATCH_MESSAGE));
  } else if (pending.status === 'pending' || pending.redirectTo === undefined) {
    const again = `${ctx.config.basePath}${CONTINUE_PATH}/${pending.pollId}`;
    return htmlAnswer(
      200,
      renderPage({
        title: 'Waiting for the app',
        body: `<h1>Still waiting</h1><p>Answer the request in the identity app, then <a href="${escapeHtml(again)}">continue</a>.</p>`,
      }),
    );
  }
  return redirect(303, pending.redirectTo, NO_STORE);
}

/** What the QR page says after a wrong number was picked on the phone. */
export const MISMATCH_MESSAGE =
  'The number picked on the phone did not match the one on this page, so this sign-in was stopped. Nothing was shared. ' +
  'If you did not scan this code yourself, someone may have tried to sign in as you.';

/**
 * The QR code of a pending authorization, as SVG; only while it waits for an answer. Drawn once
 * per login and kept on the pending entry (a reload or a second tab is not a new render).
 */
function qrImage(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = ctx.stores.pendingByPollId.get(pollIdOf(req));
  if (pending?.status !== 'pending') return empty(404, NO_STORE);
  const seconds = Math.max(0, Math.floor((pending.expiresAt - ctx.config.clock()) / 1000));
  pending.qrSvg ??= renderQrSvg(`${ctx.config.publicBase}${MOBILE_PATH}/${pending.mobileId}`, QR_SIZE);
  return bytes(200, 'image/svg+xml', pending.qrSvg, {
    // The browser keeps it while the code lives: a reload of the page's image is not a new render.
    'Cache-Control': `private, max-age=${seconds}`,
    'Content-Security-Policy': "default-src 'none'",
    'X-Content-Type-Options': 'nosniff',
  });
}

/** Cancel on the QR page: ends the pending authorization and returns to the client with access_denied. */
function cancel(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = ctx.stores.pendingByPollId.get(pollIdOf(req));
  if (!pending) {
    return htmlAnswer(410, renderErrorPage('expired', 'This sign-in request has expired or does not exist. Start again from the site you were signing in to.'));
  }
  if (pending.status === 'approved' && pending.redirectTo !== undefined) {
    return redirect(303, pending.redirectTo, NO_STORE);
  }
  ctx.stores.pendingByPollId.delete(pending.pollId);
  ctx.stores.pendingByMobileId.delete(pending.mobileId);
  ctx.stores.pendingQuota.release(quotaKeyOf(pending.address), pending.expiresAt);
  ctx.log('authorize', `cancelled on the QR page for client ${pending.clientId}`);
  return redirect(303, callbackUrl(ctx.config.issuer, pending.redirectUri, { error: 'access_denied', state: pending.state }), NO_STORE);
}

/** The log line of a refused authorization request: its code, its client when registered, and the mismatch. */
function refusalLine(ctx: ProviderContext, params: URLSearchParams, result: { code: string; message: string }): string {
  const clientId = params.get('client_id');
  const known = clientId !== null && ctx.config.clients.has(clientId) ? ` for client ${clientId}` : '';
  return `refused: ${result.code}${known}${result.code === 'redirect_uri_mismatch' ? `: ${result.message}` : ''}`;
}

/** The routes of this file. */
export function authorizeRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    { endpoint: 'authorize', method: 'GET', path: AUTHORIZE_PATH, failure: 'html', handle: (req) => authorize(ctx, req) },
    { endpoint: 'status', method: 'GET', path: `${STATUS_PATH}/:pollId`, failure: 'json', handle: (req) => status(ctx, req) },
    { endpoint: 'continue', method: 'GET', path: `${CONTINUE_PATH}/:pollId`, failure: 'html', handle: (req) => continueWithoutScript(ctx, req) },
    { endpoint: 'status', method: 'GET', path: `${QR_IMAGE_PATH}/:pollId`, failure: 'json', handle: (req) => qrImage(ctx, req) },
    { endpoint: 'continue', method: 'GET', path: `${CANCEL_PATH}/:pollId`, failure: 'html', handle: (req) => cancel(ctx, req) },
  ];
}
