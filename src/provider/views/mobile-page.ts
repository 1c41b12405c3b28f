/**
 * The simulated mobile app: a phone-sized page that names the client, lists what it asks for,
 * and lets the tester pick a persona and approve or deny.
 */
import { MAX_LISTED_PERSONAS, MAX_PERSONA_SEARCH, type PersonaListing } from '../persona-search.js';
import { escapeHtml, renderPage } from './html.js';

/** Human labels of the scopes. */
export const SCOPE_LABELS: Readonly<Record<string, string>> = Object.freeze({
  openid: 'An identifier for you, unique to this service',
  'profile.name': 'Full name',
  'profile.nric_number': 'Identity number (NRIC/FIN)',
  'profile.passport_expiry_date': 'Passport expiry date',
});

/** What the approval page shows. */
export interface MobilePageModel {
  clientName: string;
  scopes: readonly string[];
  /** The personas to list (at most {@link MAX_LISTED_PERSONAS}), and how many match the search. */
  personas: PersonaListing;
  /** Personas in all: past {@link MAX_LISTED_PERSONAS} the page offers a search. */
  personaTotal: number;
  actionUrl: string;
  /** The browser that started the login, e.g. "Chrome on Windows". */
  device: string;
  /** Its source address. */
  address: string;
  /** Seconds since its QR page was shown. */
  secondsAgo: number;
  /** Two-digit numbers to pick from (twelve); one is on the QR page. */
  matchChoices: readonly string[];
  /** The app's message about this login (`authentication_context_message`, at most 100 characters), when sent. */
  contextMessage?: string | undefined;
  /** The provider's base path as browsers see it: the static stylesheet is below it. */
  base: string;
}

function ago(seconds: number): string {
  if (seconds < 5) return 'just now';
  if (seconds < 90) return `${seconds} seconds ago`;
  return `${Math.round(seconds / 60)} minutes ago`;
}

/** The search over many personas: a GET form back to this page, and how many it lists of how many match. */
function personaSearch(actionUrl: string, query: string, listed: number, matching: number): string {
  const shown =
    matching === 0
      ? 'No person matches.'
      : listed < matching
        ? `Listing ${listed} of ${matching}: search to narrow.`
        : `Listing all ${matching}.`;
  return `<form method="get" action="${escapeHtml(actionUrl)}" id="persona-search" role="search">
<label for="persona-q">Find the person to sign in as (name or id)</label>
<input id="persona-q" name="q" type="search" maxlength="${MAX_PERSONA_SEARCH}" value="${escapeHtml(query)}">
<button type="submit">Search</button>
<p class="muted" id="persona-count">${shown}</p>
</form>
`;
}

/** The approval page. */
export function renderMobilePage(model: MobilePageModel): string {
  const items = model.scopes
    .map((s) => `<li data-scope="${escapeHtml(s)}">${escapeHtml(SCOPE_LABELS[s] ?? s)}</li>`)
    .join('\n');
  const { listed, matching, query } = model.personas;
  const options = listed
    .map((p) => `<option value="${escapeHtml(p.id)}">${escapeHtml(p['profile.name'])}</option>`)
    .join('\n');
  const choices = model.matchChoices
    .map(
      (c, i) =>
        `<label><input type="radio" name="match" value="${escapeHtml(c)}"${i === 0 ? ' required' : ''}>${escapeHtml(c)}</label>`,
    )
    .join('\n');
  const message =
    model.contextMessage === undefined
      ? ''
      : `<p id="context-message"><strong>${escapeHtml(model.clientName)} says:</strong> ${escapeHtml(model.contextMessage)}</p>\n`;
  const body = `<h1>${escapeHtml(model.clientName)} wants you to sign in</h1>
${message}<dl class="context" id="login-context">
<dt>Sign-in started on</dt><dd id="context-device">${escapeHtml(model.device)}</dd>
<dt>From the address</dt><dd id="context-address">${escapeHtml(model.address)}</dd>
<dt>QR code shown</dt><dd id="context-age">${escapeHtml(ago(model.secondsAgo))}</dd>
</dl>
<p class="muted">If this is not the screen in front of you, someone else is trying to sign in as you: press Deny.</p>
<p>It will receive:</p>
<ul id="requested-attributes">
${items}
</ul>
${model.personaTotal > MAX_LISTED_PERSONAS ? personaSearch(model.actionUrl, query, listed.length, matching) : ''}<form method="post" action="${escapeHtml(model.actionUrl)}">
<p id="match-prompt">Pick the number shown on the screen where you scanned the code:</p>
<fieldset class="choices" aria-labelledby="match-prompt">
${choices}
</fieldset>
<label for="persona">Sign in as</label>
<select id="persona" name="persona">
${options}
</select>
<div class="actions">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
</div>
</form>`;
  return renderPage({ title: `Sign in to ${model.clientName}`, body, phone: true, base: model.base });
}

/** The page after a wrong number was picked. */
export function renderMobileMismatch(base: string): string {
  return renderPage({
    title: 'Sign-in stopped',
    phone: true,
    base,
    body: `<h1>Sign-in stopped</h1>
<p id="outcome" data-outcome="mismatch" data-error-code="number_mismatch">That number is not the one on the sign-in screen, so this sign-in was stopped and nothing was shared.</p>
<p>If you scanned a code someone sent you or showed you, it was someone else's sign-in: do not scan it again.</p>`,
  });
}

/** The page after a decision. */
export function renderMobileDone(decision: 'approved' | 'denied', clientName: string, base: string): string {
  const text =
    decision === 'approved'
      ? `You approved the sign-in to ${escapeHtml(clientName)}. You can return to your computer.`
      : `You declined the sign-in to ${escapeHtml(clientName)}. Nothing was shared.`;
  return renderPage({
    title: decision === 'approved' ? 'Approved' : 'Declined',
    phone: true,
    base,
    body: `<h1>${decision === 'approved' ? 'Approved' : 'Declined'}</h1><p id="outcome" data-outcome="${decision}">${text}</p>`,
  });
}
