/**
 * GET /v2/oauth/authorize (spec 4.1): validates the request, then shows the QR page (or redirects
 * at once when approval is scripted). Request problems never redirect: a 400 HTML page (RFC 6749
 * 4.1.2.1 for the client and redirect URI). An over-long query is refused before it is parsed, as
 * nothing in it can be trusted; unknown parameters are never stored or echoed. A FAPI 2.0 client
 * sends `client_id` and its `request_uri` (`par.ts`), used up at the approval (`request-uri.ts`).
 */
import {
  AUTHORIZE_PATH,
  MAX_AUTHORIZE_QUERY_LENGTH,
  validateAuthorizeQuery,
  type Validation,
  type ValidRequest,
} from './authorize-request.js';
import type { ProviderContext } from './context.js';
import { callbackUrl, issueCode } from './grant.js';
import { redirect, type Answer } from './http/answer.js';
import type { ProviderRequest } from './http/request.js';
import {
  CANCEL_PATH,
  CONTINUE_PATH,
  MOBILE_PATH,
  QR_IMAGE_PATH,
  QR_SIZE,
  qrStatusRoutes,
  STATUS_PATH,
} from './qr-status.js';
import { redeemRequestUri, useUpRequestUri, type PushedExtras, type Redeemed } from './request-uri.js';
import type { ProviderRoute } from './router.js';
import { base64url, pooledRandomBytes } from './random-pool.js';
import type { LoginOverrides, PendingAuthorization } from './store.js';
import type { Persona } from './types.js';
import { responseIssuer, servedPath } from './variant.js';
import { describeUserAgent, quotaKeyOf } from './user-agent.js';
import { renderErrorPage } from './views/error-page.js';
import { htmlAnswer } from './views/html.js';
import { QrPage } from './views/qr-page.js';

export {
  AUTHORIZE_PATH,
  MAX_AUTHORIZE_QUERY_LENGTH,
  MAX_NONCE_LENGTH,
  MAX_STATE_LENGTH,
  validateAuthorizeQuery,
} from './authorize-request.js';
export type { ValidRequest } from './authorize-request.js';
export { MISMATCH_MESSAGE, MOBILE_PATH } from './qr-status.js';

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * How many numbers the phone offers, one of them the QR page's: someone who saw only the QR code
 * picks right blindly once in this many tries, and a wrong pick ends the login.
 */
export const MATCH_CHOICES = 12;

function authorize(ctx: ProviderContext, page: QrPage, req: ProviderRequest): Answer {
  if (req.rawQuery.length > MAX_AUTHORIZE_QUERY_LENGTH) {
    ctx.log('authorize', 'refused: invalid_request (query too large)');
    return htmlAnswer(
      400,
      renderErrorPage(
        'invalid_request',
        `The request is too large: its query string is longer than ${MAX_AUTHORIZE_QUERY_LENGTH} characters.`,
      ),
    );
  }
  const params = req.query;
  const clientId = params.get('client_id');
  const fapi = clientId !== null && ctx.config.clients.get(clientId)?.profile === 'fapi2';
  // A HEAD (a link checker, a mail scanner, a prefetch) is checked as a GET but changes nothing:
  // no code issued, no sign-in waiting, no scripted answer taken.
  const head = req.method === 'HEAD';
  if (fapi) {
    // Only looked at: the request_uri is used up when the person approves, so a reload works.
    const pushed: Redeemed = redeemRequestUri(ctx, params, !head);
    if (!pushed.ok) return refuse(ctx, params, pushed);
    if (head) return htmlAnswer(200, '');
    return proceed(ctx, page, req, pushed.request, pushed.extras);
  }
  const result: Validation = validateAuthorizeQuery(ctx, params);
  if (!head) ctx.audit.authorize(clientId ?? undefined, result);
  if (!result.ok) return refuse(ctx, params, result);
  if (head) return htmlAnswer(200, '');
  return proceed(ctx, page, req, result.request, undefined);
}

function refuse(ctx: ProviderContext, params: URLSearchParams, result: { code: string; message: string }): Answer {
  ctx.log('authorize', refusalLine(ctx, params, result));
  return htmlAnswer(400, renderErrorPage(result.code, result.message));
}

/** A valid request (from the query, or pushed): answered at once, or shown the QR page. */
function proceed(
  ctx: ProviderContext,
  page: QrPage,
  req: ProviderRequest,
  request: ValidRequest,
  extras: PushedExtras | undefined,
): Answer {
  const { config, stores } = ctx;
  const now = config.clock();

  if (request.promptNone) {
    // No sign-in session is kept, so a login without interaction is never possible (OIDC Core 3.1.2.6).
    ctx.log('authorize', `prompt=none answered login_required for client ${request.clientId}`);
    return redirect(
      302,
      callbackUrl(responseIssuer(ctx.config), request.redirectUri, { error: 'login_required', state: request.state }),
      NO_STORE,
    );
  }

  ctx.conformance.authorize(request.clientId);
  const scripted = ctx.scripted.take(request.clientId);
  if (scripted !== undefined) {
    return answerAtOnce(
      ctx,
      request,
      extras,
      scripted.deny ? undefined : scripted.persona,
      scripted.overrides,
      'scripted',
    );
  }
  if (config.autoApprove) {
    const persona = request.loginHint !== undefined ? ctx.personas.get(request.loginHint) : config.autoApprove;
    if (persona === undefined) {
      ctx.log('authorize', 'refused: unknown login_hint');
      return htmlAnswer(
        400,
        renderErrorPage(
          'invalid_request',
          `The login_hint names no known person. Known ids: ${ctx.personas.map((p) => p.id).join(', ')}.`,
        ),
      );
    }
    return answerAtOnce(ctx, request, extras, persona, undefined, 'auto-approved');
  }

  const address = req.address;
  const expiresAt = now + config.ttl.authorization * 1000;
  if (stores.pendingByMobileId.isFull() || !stores.pendingQuota.tryAdd(quotaKeyOf(address), expiresAt)) {
    ctx.log('authorize', `refused: too many pending sign-ins for client ${request.clientId}`);
    return htmlAnswer(
      429,
      renderErrorPage(
        'too_many_requests',
        'Too many sign-ins are waiting for an answer from this network. Answer or close the open ones, or try again in a few minutes.',
      ),
      { 'Retry-After': String(config.ttl.authorization) },
    );
  }

  // Every random value of the QR login in one draw: two ids and the numbers.
  const random = pooledRandomBytes(32 + 32 + MATCH_RANDOM_BYTES);
  const { choices, code: matchCode } = matchNumbers(random.subarray(64));
  const mobileId = base64url(random.subarray(0, 32));
  const pollId = base64url(random.subarray(32, 64));
  const pending: PendingAuthorization = {
    mobileId,
    pollId,
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
  if (extras?.dpopJkt !== undefined) pending.dpopJkt = extras.dpopJkt;
  if (extras !== undefined) pending.requestUriId = extras.requestUriId;
  if (request.contextMessage !== undefined) pending.contextMessage = request.contextMessage;
  if (request.contextType !== undefined) pending.contextType = request.contextType;
  stores.pendingByMobileId.set(mobileId, pending, expiresAt);
  stores.pendingByPollId.set(pollId, pending, expiresAt);

  const html = page.render({
    clientName: request.clientName,
    mobileId,
    pollId,
    matchCode,
    // An empty href re-sends the browser's own request: nothing of the query is echoed. A pushed
    // request is usable for a minute only, so start again goes back to the app.
    startAgainHref:
      extras === undefined
        ? ''
        : callbackUrl(responseIssuer(config), request.redirectUri, {
            error: 'access_denied',
            error_description: 'The sign-in was started again.',
            state: request.state,
          }),
  });
  ctx.log('authorize', `QR page shown for client ${request.clientId}`);
  return htmlAnswer(200, html);
}

/** Random bytes drawn for the numbers: enough for {@link MATCH_CHOICES} distinct ones nearly always. */
const MATCH_RANDOM_BYTES = 64;

/**
 * {@link MATCH_CHOICES} distinct two-digit numbers in random order (bytes below 180 give
 * `10 + byte % 90`, others are skipped, so the sample is uniform), and the one the QR page shows.
 */
export function matchNumbers(random: Buffer): { choices: string[]; code: string } {
  // At most twelve numbers: a list to search is cheaper than a set.
  const picked: number[] = [];
  let bytes = random;
  let at = 0;
  let index = -1;
  while (picked.length < MATCH_CHOICES || index < 0) {
    if (at === bytes.length) {
      bytes = pooledRandomBytes(MATCH_RANDOM_BYTES);
      at = 0;
    }
    const byte = bytes[at++]!;
    if (picked.length < MATCH_CHOICES) {
      if (byte < 180 && !picked.includes(10 + (byte % 90))) picked.push(10 + (byte % 90));
    } else if (byte < 252 - (252 % MATCH_CHOICES)) {
      index = byte % MATCH_CHOICES;
    }
  }
  const choices = picked.map((n) => TWO_DIGITS[n]!);
  return { choices, code: choices[index]! };
}

/** The numbers 0 to 99 as text, written once. */
const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, n) => String(n));

/** Why an approval of a pushed request already approved (in another window) is refused. */
export const REQUEST_URI_USED =
  'This sign-in was already approved in another window: its request_uri is used up. Start again from the app.';

/** Redirects back at once: with a code for `persona`, or `error=access_denied` when there is none. */
function answerAtOnce(
  ctx: ProviderContext,
  request: ValidRequest,
  extras: PushedExtras | undefined,
  persona: Persona | undefined,
  overrides: LoginOverrides | undefined,
  how: string,
): Answer {
  if (persona === undefined) {
    ctx.log('authorize', `${how}: denied for client ${request.clientId}`);
    const denied = { error: 'access_denied', error_description: 'The person declined.', state: request.state };
    return redirect(302, callbackUrl(responseIssuer(ctx.config), request.redirectUri, denied), NO_STORE);
  }
  if (extras !== undefined && !useUpRequestUri(ctx, extras.requestUriId)) {
    ctx.log('authorize', `refused: invalid_request_uri for client ${request.clientId}: already used`);
    return htmlAnswer(400, renderErrorPage('invalid_request_uri', REQUEST_URI_USED));
  }
  const code = issueCode(ctx, { ...request, dpopJkt: extras?.dpopJkt }, persona, overrides);
  ctx.log('authorize', `${how} for client ${request.clientId}`);
  const state = ctx.conformance.responseState(request.clientId, request.state);
  const iss = ctx.conformance.responseIss(request.clientId, ctx.config.issuer, ctx.config.authorizationResponseIss);
  return redirect(302, callbackUrl(iss, request.redirectUri, { code, state }), NO_STORE);
}

/** The log line of a refused authorization request: its code, its client when registered, and the mismatch. */
function refusalLine(ctx: ProviderContext, params: URLSearchParams, result: { code: string; message: string }): string {
  const clientId = params.get('client_id');
  const known = clientId !== null && ctx.config.clients.has(clientId) ? ` for client ${clientId}` : '';
  // An unknown id is quoted as JSON (no line break or control character reaches the log), at most 256 characters as read.
  const unknown =
    result.code === 'invalid_client' && clientId !== null
      ? `: client_id ${JSON.stringify(clientId.slice(0, 256))} is not registered`
      : '';
  return `refused: ${result.code}${known}${unknown}${result.code === 'redirect_uri_mismatch' ? `: ${result.message}` : ''}`;
}

/** The routes of this file. */
export function authorizeRoutes(ctx: ProviderContext): ProviderRoute[] {
  const { basePath: base, publicBase } = ctx.config;
  const page = new QrPage({
    base,
    mobileUrlPrefix: `${publicBase}${MOBILE_PATH}/`,
    // Same-origin relative paths: they work whichever host name the browser used.
    qrImagePrefix: `${base}${QR_IMAGE_PATH}/`,
    qrSize: QR_SIZE,
    statusPrefix: `${base}${STATUS_PATH}/`,
    continuePrefix: `${base}${CONTINUE_PATH}/`,
    cancelPrefix: `${base}${CANCEL_PATH}/`,
    pollIntervalMs: ctx.config.pollIntervalMs,
    expiresInSeconds: ctx.config.ttl.authorization,
  });
  return [
    {
      endpoint: 'authorize',
      method: 'GET',
      path: servedPath(ctx.config, AUTHORIZE_PATH),
      failure: 'html',
      handle: (req) => authorize(ctx, page, req),
    },
    ...qrStatusRoutes(ctx),
  ];
}
