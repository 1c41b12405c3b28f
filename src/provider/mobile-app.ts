/**
 * The simulated mobile app (outside /v2): the page the QR code opens. It shows the client's
 * name, the context of the browser that started the login (device, address, how long ago) and
 * the requested attributes, and records one decision: approve as a persona, or deny. Approval
 * needs the number shown on the QR page picked from three (number matching against QR relay);
 * a wrong pick ends the authorization.
 * The pending id in its URL is 256 random bits; a second answer, or an answer after expiry,
 * is refused with a clear page.
 */
import express, { type Request, type Response } from 'express';
import type { ProviderContext, ProviderRoute } from './context.js';
import { callbackUrl, issueCode } from './grant.js';
import { errorStatus, MAX_BODY_BYTES, MAX_FORM_PARAMETERS, runMiddleware } from './http.js';
import { MOBILE_PATH } from './authorize.js';
import type { PendingAuthorization } from './store.js';
import { renderErrorPage } from './views/error-page.js';
import { sendHtml } from './views/html.js';
import { renderMobileDone, renderMobileMismatch, renderMobilePage } from './views/mobile-page.js';

const formParser = express.urlencoded({ extended: false, limit: MAX_BODY_BYTES, parameterLimit: MAX_FORM_PARAMETERS });

const EXPIRED_MESSAGE =
  'This sign-in request has expired or does not exist. Start again from the site you were signing in to.';

function pendingOf(ctx: ProviderContext, req: Request): PendingAuthorization | undefined {
  const id = req.params['mobileId'];
  return typeof id === 'string' && id.length <= 64 ? ctx.stores.pendingByMobileId.get(id) : undefined;
}

function clientName(ctx: ProviderContext, pending: PendingAuthorization): string {
  return ctx.config.clients.get(pending.clientId)?.name ?? pending.clientId;
}

function alreadyAnswered(res: Response, pending: PendingAuthorization): void {
  const what = pending.status === 'approved' ? 'approved' : pending.status === 'mismatch' ? 'stopped' : 'denied';
  sendHtml(
    res,
    409,
    renderErrorPage('already_answered', `This sign-in request was already ${what}. It cannot be answered twice.`, { phone: true }),
  );
}

function show(ctx: ProviderContext, req: Request, res: Response): void {
  const pending = pendingOf(ctx, req);
  if (!pending) {
    sendHtml(res, 410, renderErrorPage('expired', EXPIRED_MESSAGE, { phone: true }));
    return;
  }
  if (pending.status !== 'pending') {
    alreadyAnswered(res, pending);
    return;
  }
  sendHtml(
    res,
    200,
    renderMobilePage({
      clientName: clientName(ctx, pending),
      scopes: pending.scopes,
      personas: ctx.personas,
      actionUrl: `${MOBILE_PATH}/${pending.mobileId}`,
      device: pending.device,
      address: pending.address,
      secondsAgo: Math.max(0, Math.floor((ctx.config.clock() - pending.createdAt) / 1000)),
      matchChoices: pending.matchChoices,
    }),
  );
}

function field(body: unknown, name: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

async function decide(ctx: ProviderContext, req: Request, res: Response): Promise<void> {
  try {
    await runMiddleware(formParser, req, res);
  } catch (err) {
    const tooLarge = errorStatus(err) === 413;
    sendHtml(
      res,
      tooLarge ? 413 : 400,
      renderErrorPage('invalid_request', tooLarge ? 'The form is too large.' : 'The form could not be read.', { phone: true }),
    );
    return;
  }
  const pending = pendingOf(ctx, req);
  if (!pending) {
    ctx.log('mobile', 'answer refused: request expired or unknown');
    sendHtml(res, 410, renderErrorPage('expired', EXPIRED_MESSAGE, { phone: true }));
    return;
  }
  if (pending.status !== 'pending') {
    ctx.log('mobile', 'answer refused: already answered');
    alreadyAnswered(res, pending);
    return;
  }
  const decision = field(req.body, 'decision');
  if (decision === 'deny') {
    pending.status = 'denied';
    pending.redirectTo = callbackUrl(pending.redirectUri, { error: 'access_denied', state: pending.state });
    ctx.log('mobile', `denied for client ${pending.clientId}`);
    sendHtml(res, 200, renderMobileDone('denied', clientName(ctx, pending)));
    return;
  }
  if (decision !== 'approve') {
    sendHtml(res, 400, renderErrorPage('invalid_request', 'Choose Approve or Deny.', { phone: true }));
    return;
  }
  const match = field(req.body, 'match');
  if (match === undefined || match === '') {
    sendHtml(res, 400, renderErrorPage('invalid_request', 'Pick the number shown on the sign-in screen, then Approve.', { phone: true }));
    return;
  }
  if (match !== pending.matchCode) {
    pending.status = 'mismatch';
    ctx.log('mobile', `number mismatch for client ${pending.clientId}: authorization ended`);
    sendHtml(res, 403, renderMobileMismatch());
    return;
  }
  const persona = ctx.persona(field(req.body, 'persona') ?? '');
  if (!persona) {
    sendHtml(res, 400, renderErrorPage('invalid_request', 'Choose a person from the list to sign in as.', { phone: true }));
    return;
  }
  const code = issueCode(ctx, pending, persona);
  pending.status = 'approved';
  pending.redirectTo = callbackUrl(pending.redirectUri, { code, state: ctx.conformance.responseState(pending.clientId, pending.state) });
  ctx.log('mobile', `approved for client ${pending.clientId}`);
  sendHtml(res, 200, renderMobileDone('approved', clientName(ctx, pending)));
}

/** The routes of this file. */
export function mobileAppRoutes(ctx: ProviderContext): ProviderRoute[] {
  return [
    { endpoint: 'mobile', method: 'get', path: `${MOBILE_PATH}/:mobileId`, failure: 'html', handle: (req, res) => show(ctx, req, res) },
    { endpoint: 'mobile', method: 'post', path: `${MOBILE_PATH}/:mobileId`, failure: 'html', handle: (req, res) => decide(ctx, req, res) },
  ];
}
