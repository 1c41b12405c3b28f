/**
 * Trailing slashes dropped by a scan from the end: the expression `/\/+$/` is quadratic on a long
 * run of slashes that does not end the string, and these strings come from requests and flags.
 */

/** `text` without its trailing `/` characters. */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}
