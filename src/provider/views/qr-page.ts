/**
 * The QR page: the code, the number the phone must match, an "open the identity app" link, Cancel,
 * and a script polling the decision. Most of it is the same on every page, so {@link QrPage}
 * renders it once at start-up with markers, and a page is that text with the request's values
 * escaped into place (base64url ids as they are).
 */
import type { Base64url } from '../random-pool.js';
import { escapeHtml, jsonForScript, renderPage } from './html.js';

/** What stays the same on every QR page of one provider. */
export interface QrPageSettings {
  /** The provider's base path as browsers see it: the static stylesheet and script are below it. */
  base: string;
  /** The mobile-app URL the QR encodes, without the pending authorization's mobile id. */
  mobileUrlPrefix: string;
  /** Same-origin path of the QR code's SVG image, without the poll id. */
  qrImagePrefix: string;
  /** CSS pixel size of the QR image (square). */
  qrSize: number;
  /** JSON status endpoint of a request (same-origin path), without the poll id. */
  statusPrefix: string;
  /** Same decision, for browsers without scripts: redirects when decided (same-origin path), without the poll id. */
  continuePrefix: string;
  /** Cancel: ends the request and returns to the client with access_denied (same-origin path), without the poll id. */
  cancelPrefix: string;
  pollIntervalMs: number;
  expiresInSeconds: number;
}

/** What changes from one QR page to the next. */
export interface QrPageValues {
  clientName: string;
  /** The id in the mobile-app URL (the QR payload). */
  mobileId: Base64url;
  /** The id the page polls with and its image, continue and cancel links carry. */
  pollId: Base64url;
  /** The two-digit number the person must pick on the phone. */
  matchCode: string;
  /**
   * Where "Start again" leads after expiry (or a mismatch): empty for the page's own URL (the
   * authorize request sent again), or, for a pushed request, back to the client.
   */
  startAgainHref: string;
}

type Slot = keyof QrPageValues;

const SLOTS: readonly Slot[] = ['clientName', 'mobileId', 'pollId', 'matchCode', 'startAgainHref'];

/** A marker no page text holds (private-use characters), which neither HTML escaping nor JSON changes. */
function marker(slot: Slot): string {
  return `\ue000${SLOTS.indexOf(slot)}\ue001`;
}

const MARKERS = /\ue000(\d)\ue001/g;
const MARKER_CHARACTER = /[\ue000\ue001]/;

/** The QR pages of one provider. */
export class QrPage {
  /** The page's text between the values, escaped: one piece more than there are slots. */
  readonly #pieces: readonly string[];
  /** Which value goes after each piece. */
  readonly #slots: readonly Slot[];

  constructor(settings: QrPageSettings) {
    if (Object.values(settings).some((v) => typeof v === 'string' && MARKER_CHARACTER.test(v))) {
      throw new TypeError('QR page: the base URL or path holds a private-use character (U+E000 or U+E001)');
    }
    const mark = Object.fromEntries(SLOTS.map((slot) => [slot, marker(slot)])) as Record<Slot, string>;
    // Split on the markers: the pieces at the even places, the slot numbers at the odd ones.
    const parts = renderQrPage(settings, mark).split(MARKERS);
    // Pieces cut from a string that held the (two-byte) markers keep two bytes a character; read
    // back from UTF-8 they are one byte a character again, as the page text is.
    this.#pieces = parts.filter((_, i) => i % 2 === 0).map((piece) => Buffer.from(piece, 'utf8').toString('utf8'));
    this.#slots = parts.filter((_, i) => i % 2 === 1).map((n) => SLOTS[Number(n)]!);
  }

  /** The page for one pending authorization. */
  render(values: QrPageValues): string {
    // Each value escaped once, however often the page shows it; the ids are base64url.
    const text: Record<Slot, string> = {
      clientName: escapeHtml(values.clientName),
      mobileId: values.mobileId,
      pollId: values.pollId,
      matchCode: escapeHtml(values.matchCode),
      startAgainHref: escapeHtml(values.startAgainHref),
    };
    const pieces = this.#pieces;
    const slots = this.#slots;
    const parts: string[] = [pieces[0]!];
    for (let i = 0; i < slots.length; i++) parts.push(text[slots[i]!], pieces[i + 1]!);
    // Joined into one flat string: a string built by `+` is a tree of pieces, which measuring
    // and writing it would first copy into one.
    return parts.join('');
  }
}

/** The page's one definition: the settings, and each value as `value` gives it (a marker, at start-up). */
function renderQrPage(settings: QrPageSettings, value: Record<Slot, string>): string {
  const model = {
    qrImageUrl: `${settings.qrImagePrefix}${value.pollId}`,
    qrSize: settings.qrSize,
    mobileUrl: `${settings.mobileUrlPrefix}${value.mobileId}`,
    statusUrl: `${settings.statusPrefix}${value.pollId}`,
    continueUrl: `${settings.continuePrefix}${value.pollId}`,
    cancelUrl: `${settings.cancelPrefix}${value.pollId}`,
    pollIntervalMs: settings.pollIntervalMs,
  };
  const minutes = Math.max(1, Math.round(settings.expiresInSeconds / 60));
  const clientName = escapeHtml(value.clientName);
  const mobileUrl = escapeHtml(model.mobileUrl);
  const matchCode = escapeHtml(value.matchCode);
  const startAgainHref = escapeHtml(value.startAgainHref);
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
<p><a id="start-again-mismatch" href="${startAgainHref}">Start again</a></p>
</div>
<div id="expired" hidden>
<p><strong>This QR code has expired.</strong> Nothing was shared.</p>
<p><a id="start-again" href="${startAgainHref}">Start again</a></p>
</div>
<script type="application/json" id="qr-config">${jsonForScript({
    statusUrl: model.statusUrl,
    pollIntervalMs: model.pollIntervalMs,
  })}</script>`;
  return renderPage({ title: `Sign in to ${value.clientName}`, body, base: settings.base, qrScript: true });
}
