/**
 * The small HTML page shown when a login fails and the app gave no `failureRedirect`: a title,
 * one escaped sentence and a "try again" link. No stack, no token, no attribute value.
 */
import type { Response } from 'express';
import { escapeHtml } from '../html.js';

/** What the failure page says. */
export interface FailurePage {
  /** HTTP status of the page (401, 403, 500, 502, ...). */
  status: number;
  /** Short heading, e.g. "Sign-in failed". */
  title: string;
  /** One sentence for the user. Escaped before it is written. */
  message: string;
  /** Where the "try again" link points (a same-site path). Omitted: no link. */
  retryHref?: string;
}

/** The page as a complete HTML document. */
export function renderFailurePage(page: FailurePage): string {
  const link =
    page.retryHref === undefined
      ? ''
      : `\n<p><a href="${escapeHtml(page.retryHref)}">Try again</a></p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(page.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style>
</head>
<body>
<h1>${escapeHtml(page.title)}</h1>
<p>${escapeHtml(page.message)}</p>${link}
</body>
</html>
`;
}

/** Sends the page with headers that keep it out of caches and frames. */
export function sendFailurePage(res: Response, page: FailurePage): void {
  res.status(page.status);
  res.set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy':
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  });
  res.send(renderFailurePage(page));
}
