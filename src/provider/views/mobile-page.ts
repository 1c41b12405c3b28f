/**
 * The simulated mobile app: a phone-sized page that names the client, lists what it asks for,
 * and lets the tester pick a persona and approve or deny.
 */
import type { Persona } from '../types.js';
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
  personas: readonly Persona[];
  actionUrl: string;
}

/** The approval page. */
export function renderMobilePage(model: MobilePageModel): string {
  const items = model.scopes
    .map((s) => `<li data-scope="${escapeHtml(s)}">${escapeHtml(SCOPE_LABELS[s] ?? s)}</li>`)
    .join('\n');
  const options = model.personas
    .map((p) => `<option value="${escapeHtml(p.id)}">${escapeHtml(p['profile.name'])}</option>`)
    .join('\n');
  const body = `<h1>${escapeHtml(model.clientName)} wants you to sign in</h1>
<p>It will receive:</p>
<ul id="requested-attributes">
${items}
</ul>
<form method="post" action="${escapeHtml(model.actionUrl)}">
<label for="persona">Sign in as</label>
<select id="persona" name="persona">
${options}
</select>
<div class="actions">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`;
  return renderPage({ title: `Sign in to ${model.clientName}`, body, phone: true });
}

/** The page after a decision. */
export function renderMobileDone(decision: 'approved' | 'denied', clientName: string): string {
  const text =
    decision === 'approved'
      ? `You approved the sign-in to ${escapeHtml(clientName)}. You can return to your computer.`
      : `You declined the sign-in to ${escapeHtml(clientName)}. Nothing was shared.`;
  return renderPage({
    title: decision === 'approved' ? 'Approved' : 'Declined',
    phone: true,
    body: `<h1>${decision === 'approved' ? 'Approved' : 'Declined'}</h1><p id="outcome" data-outcome="${decision}">${text}</p>`,
  });
}
