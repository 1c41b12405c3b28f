/**
 * The HTML shell of every provider page: escaping, a shared layout, and the security headers
 * (strict CSP with a per-response script nonce, no framing, no referrer, no caching).
 */
import type { Answer } from '../http/answer.js';

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

/**
 * A static stylesheet or script without its indentation, line breaks (`joinLines`) and CSS
 * comments: done once at start-up, it takes about a kilobyte off every page.
 */
export function compactStatic(text: string, joinLines: boolean): string {
  const lines = text.replace(/\/\*[\s\S]*?\*\//g, '').split('\n').map((line) => line.trim()).filter((line) => line !== '');
  return lines.join(joinLines ? '' : '\n');
}

// Every line ends a rule, a declaration or a block: joining the lines changes nothing.
const STYLE = compactStatic(`
  :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
  body { margin: 0; background: #f2f4f7; color: #1d2433; }
  main { max-width: 32rem; margin: 2rem auto; background: #fff; border-radius: 12px; padding: 1.5rem 2rem;
         box-shadow: 0 1px 4px rgba(0,0,0,.12); }
  main.phone { max-width: 22rem; border: 10px solid #1d2433; border-radius: 28px; }
  h1 { font-size: 1.35rem; margin: 0 0 .75rem; }
  .qr { display: block; margin: 1rem auto; width: 320px; height: 320px; image-rendering: pixelated; background: #fff; }
  .muted { color: #5b6475; font-size: .9rem; }
  .error-code { font-family: ui-monospace, monospace; background: #fdecec; color: #8a1c1c; padding: .1rem .35rem; border-radius: 4px; }
  button { font: inherit; padding: .6rem 1.2rem; border-radius: 8px; border: 1px solid #1d2433; cursor: pointer; }
  button[value=approve] { background: #1a5fd0; color: #fff; border-color: #1a5fd0; }
  select { font: inherit; padding: .4rem; width: 100%; }
  .actions { display: flex; gap: .75rem; margin-top: 1rem; }
  ul { padding-left: 1.25rem; }
  .match { font-size: 1.05rem; }
  .match strong { font-size: 1.6rem; letter-spacing: .1em; font-family: ui-monospace, monospace; }
  .choices { display: grid; grid-template-columns: repeat(4, 1fr); gap: .5rem; margin: .5rem 0 1rem; border: 0; padding: 0; }
  .choices label { text-align: center; border: 1px solid #1d2433; border-radius: 8px; padding: .6rem 0; min-height: 2.75rem;
                   box-sizing: border-box; font-size: 1.3rem; font-family: ui-monospace, monospace; cursor: pointer; }
  .choices input { margin-right: .3rem; }
  .context { background: #f2f4f7; border-radius: 8px; padding: .5rem .75rem; font-size: .9rem; }
  .context dt { font-weight: 600; }
  .context dd { margin: 0 0 .35rem; }
  /* A real phone-sized screen: the page fills it; the drawn phone frame is for desktop viewing only. */
  @media (max-width: 480px) {
    main, main.phone { max-width: none; margin: 0; border: 0; border-radius: 0; box-shadow: none; min-height: 100vh;
                       padding: 1rem; box-sizing: border-box; }
    .qr { width: 240px; height: 240px; }
    .app-link-row .muted { display: none; }
    a.app-link { display: block; text-align: center; background: #1a5fd0; color: #fff; text-decoration: none;
                 padding: .8rem 1.2rem; border-radius: 8px; font-weight: 600; }
  }
  .banner { background: #fff6d6; border: 1px solid #e8cf6a; border-radius: 8px; padding: .5rem .75rem; font-size: .85rem; }
`, true);

/** A complete page. `script` runs with `nonce`; everything else is static. */
export function renderPage(opts: { title: string; body: string; phone?: boolean; script?: string; nonce?: string }): string {
  const script = opts.script && opts.nonce ? `<script nonce="${escapeHtml(opts.nonce)}">${opts.script}</script>` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(opts.title)}</title>
<style>${STYLE}</style>
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

/** The security headers of a provider page (a script runs only with `nonce`). */
function pageHeaders(nonce: string | undefined): Record<string, string> {
  return {
    'Cache-Control': 'no-store',
    'Content-Security-Policy':
      "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; connect-src 'self'; form-action 'self'; " +
      `frame-ancestors 'none'; base-uri 'none'${nonce ? `; script-src 'nonce-${nonce}'` : ''}`,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
}

/** An HTML page answer with the security headers (and any `extra` headers, such as Retry-After). */
export function htmlAnswer(status: number, html: string, nonce?: string, extra: Readonly<Record<string, string>> = {}): Answer {
  return { status, headers: { ...pageHeaders(nonce), ...extra }, body: { type: 'html', html } };
}
