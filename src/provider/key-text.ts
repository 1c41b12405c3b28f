/** Keys given as text: PEM as it is, or a JWK / JWKS as its JSON (from a file or an environment variable). */

/** JSON text (it starts with `{`) as its value, other text and non-text as given; undefined, with a mistake naming `name`, for bad JSON. */
export function parsedIfJson(value: unknown, name: string, mistakes: string[]): unknown {
  if (typeof value !== 'string' || !value.trimStart().startsWith('{')) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    mistakes.push(`${name} starts with "{" but is not valid JSON (a JWK or JWKS)`);
    return undefined;
  }
}
