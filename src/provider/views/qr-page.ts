/**
 * The QR page: the code to scan (an SVG image served on its own route), the number the phone
 * must match, the same URL as an "open the identity app" link (the primary button on a phone-sized
 * screen), a Cancel link back to the client, and a small script that polls the decision and then
 * sends the browser back to the client.
 */
import { escapeHtml, jsonForScript, renderPage } from './html.js';

/** What the QR page shows and polls. */
export interface QrPageModel {
  clientName: string;
  /** Same-origin URL of the QR code's SVG image. */
  qrImageUrl: string;
  /** CSS pixel size of the QR image (square). */
  qrSize: number;
  /** The mobile-app URL the QR encodes. */
  mobileUrl: string;
  /** The two-digit number the person must pick on the phone. */
  matchCode: string;
  /** Cancel: ends the request and returns to the client with access_denied (same-origin path). */
  cancelUrl: string;
  /** JSON status endpoint of this request (same-origin path). */
  statusUrl: string;
  /** Same decision, for browsers without scripts: redirects when decided (same-origin path). */
  continueUrl: string;
  /** The authorize URL, to start again after expiry. */
  authorizeUrl: string;
  pollIntervalMs: number;
  expiresInSeconds: number;
  /** The provider's base path as browsers see it: the static stylesheet and script are below it. */
  base: string;
}


/** The QR page, with its poll script. */
export function renderQrPage(model: QrPageModel): string {
  const minutes = Math.max(1, Math.round(model.expiresInSeconds / 60));
  // Each value escaped once, however often the page shows it.
  const clientName = escapeHtml(model.clientName);
  const mobileUrl = escapeHtml(model.mobileUrl);
  const matchCode = escapeHtml(model.matchCode);
  const authorizeUrl = escapeHtml(model.authorizeUrl);
  const body = `<h1>Sign in to ${clientName}</h1>
<div id="waiting">
<p>Scan this QR code with the identity app on your phone.</p>
<img class="qr" id="qr" src="${escapeHtml(model.qrImageUrl)}" width="${model.qrSize}" height="${model.qrSize}"
 alt="QR code to sign in with the identity app" data-qr-payload="${mobileUrl}">
<p class="match">When the app asks, pick this number: <strong id="match-code" data-match-code="${matchCode}">${matchCode}</strong></p>
<p class="app-link-row"><span class="muted">Can't scan? </span><a id="cant-scan" class="app-link" href="${mobileUrl}" target="_blank" rel="noopener noreferrer">Open the identity app</a><span class="muted"> on this device.</span></p>
<p id="status" class="muted" role="status">Waiting for approval in the app. This code expires in about ${minutes} minute${minutes === 1 ? '' : 's'}.</p>
<noscript><p><a href="${escapeHtml(model.continueUrl)}">I have answered in the app: continue</a></p></noscript>
<p><a id="cancel" href="${escapeHtml(model.cancelUrl)}">Cancel</a> <span class="muted">and go back to ${clientName}</span></p>
</div>
<div id="mismatch" hidden>
<p data-error-code="number_mismatch"><strong>The number picked on the phone did not match.</strong> This sign-in was stopped and nothing was shared.
If you did not scan this code yourself, someone may have tried to sign in as you.</p>
<p><a id="start-again-mismatch" href="${authorizeUrl}">Start again</a></p>
</div>
<div id="expired" hidden>
<p><strong>This QR code has expired.</strong> Nothing was shared.</p>
<p><a id="start-again" href="${authorizeUrl}">Start again</a></p>
</div>
<script type="application/json" id="qr-config">${jsonForScript({
    statusUrl: model.statusUrl,
    pollIntervalMs: model.pollIntervalMs,
  })}</script>`;
  return renderPage({ title: `Sign in to ${model.clientName}`, body, base: model.base, qrScript: true });
}
