/** The error page of the browser-facing endpoints (authorize and the mobile app). */
import { escapeHtml, renderPage } from './html.js';

/** Page showing an error code and a sentence. */
export function renderErrorPage(code: string, message: string, opts: { phone?: boolean } = {}): string {
  return renderPage({
    title: 'Sign-in error',
    phone: opts.phone,
    body: `<h1>Sign-in cannot continue</h1>
<p data-error-code="${escapeHtml(code)}">Error: <span class="error-code">${escapeHtml(code)}</span></p>
<p id="error-message">${escapeHtml(message)}</p>`,
  });
}
