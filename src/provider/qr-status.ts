/**
 * The QR page's helpers outside /v2: its JSON status (polled), the no-script continue link, the
 * QR image, and Cancel. Each finds its pending authorization by the unguessable poll id.
 */
import type { ProviderContext } from './context.js';
import { callbackUrl } from './grant.js';
import { bytes, empty, json, redirect, type Answer } from './http/answer.js';
import type { ProviderRequest } from './http/request.js';
import { endLogin, loginByPollId } from './pending-logins.js';
import type { ProviderRoute } from './router.js';
import { responseIssuer } from './variant.js';
import { STATIC_ASSETS } from './views/assets.js';
import { renderErrorPage } from './views/error-page.js';
import { escapeHtml, htmlAnswer, renderPage } from './views/html.js';
import { renderQrSvg } from './views/qr-svg.js';

const NO_STORE = { 'Cache-Control': 'no-store' };

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
/** CSS pixel size of the QR image. */
export const QR_SIZE = 320;

function pollIdOf(req: ProviderRequest): string {
  const id = req.params['pollId'];
  return typeof id === 'string' && id.length <= 64 ? id : '';
}

const EXPIRED_ANSWER = json(200, { status: 'expired' }, NO_STORE);
const PENDING_ANSWER = json(200, { status: 'pending' }, NO_STORE);
const MISMATCH_ANSWER = json(200, { status: 'mismatch' }, NO_STORE);

function status(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = loginByPollId(ctx.stores, pollIdOf(req));
  if (!pending) return EXPIRED_ANSWER;
  if (pending.status === 'pending') return PENDING_ANSWER;
  if (pending.status === 'mismatch') return MISMATCH_ANSWER;
  return json(200, { status: pending.status, redirectTo: pending.redirectTo }, NO_STORE);
}

/** The page for a poll id that is unknown or whose sign-in request has ended. */
function expiredPage(): Answer {
  return htmlAnswer(
    410,
    renderErrorPage(
      'expired',
      'This sign-in request has expired or does not exist. Start again from the site you were signing in to.',
    ),
  );
}

function continueWithoutScript(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = loginByPollId(ctx.stores, pollIdOf(req));
  if (!pending) return expiredPage();
  else if (pending.status === 'mismatch') {
    return htmlAnswer(403, renderErrorPage('number_mismatch', MISMATCH_MESSAGE));
  } else if (pending.status === 'pending' || pending.redirectTo === undefined) {
    const again = `${ctx.config.basePath}${CONTINUE_PATH}/${pending.pollId}`;
    return htmlAnswer(
      200,
      renderPage({
        base: ctx.config.basePath,
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

/** The QR code of a waiting authorization as SVG, drawn once and kept on the entry. */
function qrImage(ctx: ProviderContext, req: ProviderRequest): Answer {
  const pending = loginByPollId(ctx.stores, pollIdOf(req));
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
  const pending = loginByPollId(ctx.stores, pollIdOf(req));
  if (!pending) return expiredPage();
  if (pending.status === 'approved' && pending.redirectTo !== undefined) {
    return redirect(303, pending.redirectTo, NO_STORE);
  }
  endLogin(ctx.stores, pending);
  ctx.log('authorize', `cancelled on the QR page for client ${pending.clientId}`);
  return redirect(
    303,
    callbackUrl(responseIssuer(ctx.config), pending.redirectUri, { error: 'access_denied', state: pending.state }),
    NO_STORE,
  );
}

/** The routes of this file. */
export function qrStatusRoutes(ctx: ProviderContext): ProviderRoute[] {
  const get = (
    endpoint: ProviderRoute['endpoint'],
    path: string,
    failure: ProviderRoute['failure'],
    handle: ProviderRoute['handle'],
  ): ProviderRoute => ({ endpoint, method: 'GET', path, failure, handle });
  return [
    get('status', `${STATUS_PATH}/:pollId`, 'json', (req) => status(ctx, req)),
    get('continue', `${CONTINUE_PATH}/:pollId`, 'html', (req) => continueWithoutScript(ctx, req)),
    get('status', `${QR_IMAGE_PATH}/:pollId`, 'json', (req) => qrImage(ctx, req)),
    get('continue', `${CANCEL_PATH}/:pollId`, 'html', (req) => cancel(ctx, req)),
    // The pages' stylesheet and script: named by their content's hash, so cached for good.
    ...STATIC_ASSETS.map((asset) =>
      get('status', asset.path, 'json', () =>
        bytes(200, asset.type, asset.body, {
          'Cache-Control': 'public, max-age=31536000, immutable',
          'X-Content-Type-Options': 'nosniff',
        }),
      ),
    ),
  ];
}
