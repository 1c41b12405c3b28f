/**
 * The page shown when a login fails and the app gave no `failureRedirect` or `renderFailure`:
 * one escaped sentence, links, the log reference and (outside production) the diagnosis. No
 * stack, token or attribute value. Sent with {@link FAILURE_PAGE_HEADERS}.
 */
import { escapeHtml } from '../html.js';

/** What the failure page says. */
export interface FailurePage {
  /** HTTP status of the page (401, 403, 500, 502, ...). */
  status: number;
  /** Short heading, e.g. "Sign-in failed". */
  title: string;
  /** One sentence for the person. Escaped before it is written. */
  message: string;
  /** Where the "try again" link points (a same-site path). Omitted: no link. */
  retryHref?: string;
  /** Where the "home" link points. Default `'/'`. */
  homeHref?: string;
  /** The reference id of the log line about this failure, shown so support can find it. */
  reference?: string;
  /** For the developer: cause and fix. Shown only when given; callers give it only outside production. */
  developer?: { code: string; cause: string; fix: string };
}

const STYLE = `
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",sans-serif}
body{margin:0;background:#f2f4f7;color:#1d2433;line-height:1.5}
main{max-width:32rem;margin:2rem auto;background:#fff;border-radius:12px;padding:1.5rem 2rem;box-shadow:0 1px 4px rgba(0,0,0,.12)}
h1{font-size:1.35rem;margin:0 0 .75rem}
.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin-top:1.25rem}
.actions a{padding:.55rem 1.1rem;border-radius:8px;border:1px solid #1a5fd0;color:#1a5fd0;text-decoration:none}
.actions a.primary{background:#1a5fd0;color:#fff}
.actions a:focus-visible{outline:3px solid #f0b400;outline-offset:2px}
.reference{color:#4b5565;font-size:.9rem}
code{font-family:ui-monospace,monospace}
.developer{margin-top:1.5rem;border:1px solid #e8cf6a;background:#fff8e1;border-radius:8px;padding:.25rem 1rem}
.developer h2{font-size:1rem;margin:.5rem 0}
@media (max-width:30rem){main{margin:0;border-radius:0;min-height:100vh;box-sizing:border-box;padding:1.25rem}}
`;

/** The page as a complete HTML document. */
export function renderFailurePage(page: FailurePage): string {
  const actions: string[] = [];
  if (page.retryHref !== undefined)
    actions.push(`<a class="primary" href="${escapeHtml(page.retryHref)}">Try again</a>`);
  actions.push(`<a href="${escapeHtml(page.homeHref ?? '/')}">Go to the home page</a>`);
  const reference =
    page.reference === undefined
      ? ''
      : `\n<p class="reference">If you contact support, quote reference <code>${escapeHtml(page.reference)}</code>.</p>`;
  const developer =
    page.developer === undefined
      ? ''
      : `\n<section class="developer" aria-labelledby="dev-h"><h2 id="dev-h">For the developer (not shown in production)</h2>
<p><code>${escapeHtml(page.developer.code)}</code>: ${escapeHtml(page.developer.cause)}</p>
<p><strong>Fix:</strong> ${escapeHtml(page.developer.fix)}</p></section>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(page.title)}</h1>
<p>${escapeHtml(page.message)}</p>${reference}
<nav class="actions" aria-label="What next">${actions.join('')}</nav>${developer}
</main>
</body>
</html>
`;
}

/** The headers of the page: keep it out of caches and frames, and run nothing in it. */
export const FAILURE_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
});
