/** Trailing slashes removed by a scan: `/\/+$/` is quadratic on long slash runs, and these strings come from requests. */

/** `text` without its trailing `/` characters. */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}
