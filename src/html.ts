/** HTML escaping, shared by every page the library and the provider render. */

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const HTML_SPECIAL = /[&<>"']/;
const MARKUP = /[<>"']/;

/** Escape text for an HTML element body or a quoted attribute value. */
export function escapeHtml(text: string): string {
  // Most values (names, paths, ids) hold none: one test instead of a replacement pass.
  if (!HTML_SPECIAL.test(text)) return text;
  // A URL with a query holds only ampersands: one plain replacement, no function per match.
  if (!MARKUP.test(text)) return text.replaceAll('&', '&amp;');
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}
