/** Safe return paths: the value comes from the query string, so it must never point at another site. */

/** Longest return path kept, in characters. Longer ones fall back to the default. */
export const MAX_RETURN_TO_LENGTH = 2048;

// C0 controls, DEL and C1 controls. Browsers strip tabs and newlines from URLs, which turns
// "/\t/evil.example" into "//evil.example".
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * `value` when it is a same-site path safe to redirect to, else `undefined`: at most
 * {@link MAX_RETURN_TO_LENGTH} characters, one leading `/`, no `//`, no backslash, no scheme, no
 * control characters, also once decoded (`/%0a/evil`). Returned percent-encoded, ready for `Location`.
 */
export function safeReturnTo(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  if (value.length === 0 || value.length > MAX_RETURN_TO_LENGTH) return undefined;
  if (!value.startsWith('/')) return undefined;
  if (value.includes('//') || value.includes('\\')) return undefined;
  if (CONTROL_CHARACTERS.test(value)) return undefined;
  // Percent-encoded slashes, backslashes and controls can be decoded by a proxy or framework
  // before the redirect is followed; refuse them rather than guess.
  if (/%(2f|5c|[01][0-9a-f]|7f)/i.test(value)) return undefined;
  // A scheme can only appear before the first `/`, and the value starts with `/`, so a `:` here
  // is harmless to the URL parser; still, check the whole value resolves on our own origin.
  let resolved: URL;
  try {
    resolved = new URL(value, 'http://same-site.invalid');
  } catch {
    return undefined;
  }
  if (resolved.origin !== 'http://same-site.invalid') return undefined;
  // The URL serializer percent-encodes what a Location header cannot carry (`/中文` becomes
  // `/%E4%B8%AD%E6%96%87`) and leaves existing escapes alone.
  const path = `${resolved.pathname}${resolved.search}${resolved.hash}`;
  return path.startsWith('/') && !path.startsWith('//') && path.length <= MAX_RETURN_TO_LENGTH * 9 ? path : undefined;
}
