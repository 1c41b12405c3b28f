/**
 * The shell of every provider page: escaping, the layout, and the security headers (strict CSP,
 * no framing, no referrer, no caching).
 */
import type { Answer } from '../http/answer.js';
import { INLINE_STYLE_SOURCE, QR_SCRIPT, STYLE, STYLESHEET } from './assets.js';

import { escapeHtml } from '../../html.js';

export { escapeHtml };

/** The characters {@link jsonForScript} writes as `\u` escapes. */
const SCRIPT_UNSAFE = /[<>&\u2028\u2029]/;

/** JSON safe to place inside a `<script type="application/json">` element. */
export function jsonForScript(value: unknown): string {
  const json = JSON.stringify(value);
  // Most values (same-origin paths, numbers) hold none of them: one test instead of five passes.
  if (!SCRIPT_UNSAFE.test(json)) return json;
  return json
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

/** A complete page; without `base` (error pages drawn before a request is understood) the stylesheet is inlined. */
export function renderPage(opts: {
  title: string;
  body: string;
  phone?: boolean;
  base?: string;
  qrScript?: boolean;
}): string {
  const script =
    opts.qrScript && opts.base !== undefined ? `<script src="${escapeHtml(opts.base + QR_SCRIPT.path)}"></script>` : '';
  const style =
    opts.base === undefined
      ? `<style>${STYLE}</style>`
      : `<link rel="stylesheet" href="${escapeHtml(opts.base + STYLESHEET.path)}">`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(opts.title)}</title>
${style}
</head>
<body>
<main${opts.phone ? ' class="phone"' : ''}>
<p class="banner">Test identity provider: every person here is fictional.</p>
${opts.body}
</main>
${script}
</body>
</html>
`;
}

/** The security headers of every provider page (the same for all: nothing in them varies per response). */
const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Cache-Control': 'no-store',
  'Content-Security-Policy':
    `default-src 'none'; img-src 'self' data:; style-src 'self' ${INLINE_STYLE_SOURCE}; script-src 'self'; connect-src 'self'; ` +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
});

/** An HTML page answer with the security headers (and any `extra` headers, such as Retry-After). */
export function htmlAnswer(status: number, html: string, extra?: Readonly<Record<string, string>>): Answer {
  return {
    status,
    headers: extra === undefined ? PAGE_HEADERS : { ...PAGE_HEADERS, ...extra },
    body: { type: 'html', html },
  };
}
