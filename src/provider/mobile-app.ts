/**
 * The simulated mobile app (outside /v2), opened by the QR code: it shows who asks and from which
 * browser, and records one decision. Approval needs the QR page's number picked from
 * `MATCH_CHOICES` (number matching against QR relay); a wrong pick ends the authorization. The
 * pending id is 256 random bits; a second or late answer is refused.
 */
import type { ProviderContext } from './context.js';
import { callbackUrl, issueCode } from './grant.js';
import type { Answer } from './http/answer.js';
import { bodyField } from './http/body.js';
import { type ProviderRequest, singleParam } from './http/request.js';
import { MOBILE_PATH, REQUEST_URI_USED } from './authorize.js';
import { answerLogin, loginByMobileId } from './pending-logins.js';
import { useUpRequestUri } from './request-uri.js';
import type { ProviderRoute } from './router.js';
import { responseIssuer } from './variant.js';
import { listPersonas, MAX_PERSONA_SEARCH } from './persona-search.js';
import type { PendingAuthorization } from './store.js';
import { renderErrorPage } from './views/error-page.js';
import { htmlAnswer } from './views/html.js';
import { renderMobileDone, renderMobileMismatch, renderMobilePage } from './views/mobile-page.js';

const EXPIRED_MESSAGE =
  'This sign-in request has expired or does not exist. Start again from the site you were signing in to.';

function pendingOf(ctx: ProviderContext, req: ProviderRequest): PendingAuthorization | undefined {
  const id = req.params['mobileId'];
  return typeof id === 'string' && id.length <= 64 ? loginByMobileId(ctx.stores, id) : undefined;
}

function clientName(ctx: ProviderContext, pending: PendingAuthorization): string {
  return ctx.config.clients.get(pending.clientId)?.name ?? pending.clientId;
}

function alreadyAnswered(pending: PendingAuthorization): Answer {
  const what = pending.status === 'approved' ? 'approved' : pending.status === 'mismatch' ? 'stopped' : 'denied';
  return htmlAnswer(
    409,
    renderErrorPage('already_answered', `This sign-in request was already ${what}. It cannot be answered twice.`, {
      phone: true,
    }),
  );
}

function show(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = pendingOf(ctx, req);
  if (!pending) return htmlAnswer(410, renderErrorPage('expired', EXPIRED_MESSAGE, { phone: true }));
  if (pending.status !== 'pending') return alreadyAnswered(pending);
  const search = singleParam(req.query, 'q', MAX_PERSONA_SEARCH);
  if (!search.ok)
    return htmlAnswer(
      400,
      renderErrorPage('invalid_request', `${search.reason} Search for a shorter part of a name.`, { phone: true }),
    );
  return htmlAnswer(
    200,
    renderMobilePage({
      clientName: clientName(ctx, pending),
      scopes: pending.scopes,
      personas: listPersonas(ctx.personas, search.value ?? ''),
      personaTotal: ctx.personas.length,
      actionUrl: `${ctx.config.basePath}${MOBILE_PATH}/${pending.mobileId}`,
      device: pending.device,
      address: pending.address,
      secondsAgo: Math.max(0, Math.floor((ctx.config.clock() - pending.createdAt) / 1000)),
      matchChoices: pending.matchChoices,
      contextMessage: pending.contextMessage,
      base: ctx.config.basePath,
    }),
  );
}

function decide(ctx: ProviderContext, req: ProviderRequest): Answer {
  if (req.body.kind === 'error') {
    const tooLarge = req.body.status === 413;
    return htmlAnswer(
      tooLarge ? 413 : 400,
      renderErrorPage('invalid_request', tooLarge ? 'The form is too large.' : 'The form could not be read.', {
        phone: true,
      }),
    );
  }
  const pending = pendingOf(ctx, req);
  if (!pending) {
    ctx.log('mobile', 'answer refused: request expired or unknown');
    return htmlAnswer(410, renderErrorPage('expired', EXPIRED_MESSAGE, { phone: true }));
  }
  if (pending.status !== 'pending') {
    ctx.log('mobile', `answer refused for client ${pending.clientId}: already answered`);
    return alreadyAnswered(pending);
  }
  const form = req.body.kind === 'form' ? req.body : { kind: 'none' as const };
  const decision = bodyField(form, 'decision');
  if (decision === 'deny') {
    answerLogin(ctx.stores, pending, 'denied');
    pending.redirectTo = callbackUrl(responseIssuer(ctx.config), pending.redirectUri, {
      error: 'access_denied',
      state: pending.state,
    });
    ctx.log('mobile', `denied for client ${pending.clientId}`);
    return htmlAnswer(200, renderMobileDone('denied', clientName(ctx, pending), ctx.config.basePath));
  }
  if (decision !== 'approve') {
    return htmlAnswer(400, renderErrorPage('invalid_request', 'Choose Approve or Deny.', { phone: true }));
  }
  const match = bodyField(form, 'match');
  if (match === undefined || match === '') {
    return htmlAnswer(
      400,
      renderErrorPage('invalid_request', 'Pick the number shown on the sign-in screen, then Approve.', { phone: true }),
    );
  }
  if (match !== pending.matchCode) {
    answerLogin(ctx.stores, pending, 'mismatch');
    ctx.log('mobile', `number mismatch for client ${pending.clientId}: authorization ended`);
    return htmlAnswer(403, renderMobileMismatch(ctx.config.basePath));
  }
  const persona = ctx.persona(bodyField(form, 'persona') ?? '');
  if (!persona) {
    return htmlAnswer(
      400,
      renderErrorPage('invalid_request', 'Choose a person from the list to sign in as.', { phone: true }),
    );
  }
  // FAPI 2.0: the pushed request is used up now; another window of it approved first ends this one.
  if (pending.requestUriId !== undefined && !useUpRequestUri(ctx, pending.requestUriId)) {
    answerLogin(ctx.stores, pending, 'denied');
    pending.redirectTo = callbackUrl(responseIssuer(ctx.config), pending.redirectUri, {
      error: 'access_denied',
      state: pending.state,
    });
    ctx.log('mobile', `refused for client ${pending.clientId}: request_uri already used`);
    return htmlAnswer(409, renderErrorPage('invalid_request_uri', REQUEST_URI_USED, { phone: true }));
  }
  const code = issueCode(ctx, pending, persona);
  answerLogin(ctx.stores, pending, 'approved');
  const iss = ctx.conformance.responseIss(pending.clientId, ctx.config.issuer, ctx.config.authorizationResponseIss);
  pending.redirectTo = callbackUrl(iss, pending.redirectUri, {
    code,
    state: ctx.conformance.responseState(pending.clientId, pending.state),
  });
  ctx.log('mobile', `approved for client ${pending.clientId}`);
  return htmlAnswer(200, renderMobileDone('approved', clientName(ctx, pending), ctx.config.basePath));
}

/** The routes of this file. */
export function mobileAppRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    {
      endpoint: 'mobile',
      method: 'GET',
      path: `${MOBILE_PATH}/:mobileId`,
      failure: 'html',
      handle: (req) => show(ctx, req),
    },
    {
      endpoint: 'mobile',
      method: 'POST',
      path: `${MOBILE_PATH}/:mobileId`,
      failure: 'html',
      body: {},
      handle: (req) => decide(ctx, req),
    },
  ];
}
