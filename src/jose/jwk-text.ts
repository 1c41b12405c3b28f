/**
 * A key given as JWK JSON text: a string whose first non-space character is `{`, as an environment
 * variable or a secret store holds the JWK files `nd-id-provider init` writes. Parsed once, where
 * the key is imported; the text is never echoed.
 */

/** True when `value` is a string whose first non-space character is `{`. */
export function isJwkText(value: unknown): value is string {
  return typeof value === 'string' && value.trimStart().startsWith('{');
}

/**
 * The JWK object of JWK JSON text.
 * @throws TypeError naming `what` when the text is not one JSON object. Never echoes the text.
 */
export function parseJwkText(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, so it is not passed on.
    throw new TypeError(
      `${what} starts with "{" but is not valid JSON: give the private JWK as one JSON object (the whole contents of the .jwk.json file), or the key as PEM text`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new TypeError(`${what} must be one private JWK as a JSON object, or the key as PEM text`);
  }
  return parsed as Record<string, unknown>;
}
