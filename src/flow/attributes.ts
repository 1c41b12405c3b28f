/**
 * The data rule: the app gets exactly the requested scopes the service returned, as own
 * properties; a scope named `__proto__` or `constructor` is an ordinary key.
 */

/** Scope names that are not attributes. */
const NON_ATTRIBUTE_SCOPES: ReadonlySet<string> = new Set(['openid']);

/** The requested scope names, from a space-separated string or an array. */
export function scopeList(scope: string | readonly string[]): string[] {
  return typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [...scope];
}

/** What {@link requestedAttributes} kept and dropped. */
export interface AttributeSelection {
  /** The requested attributes the service returned. */
  data: Record<string, string>;
  /** Names of attributes the service returned without being asked (values never kept). */
  dropped: string[];
}

/** Keeps from `returned` only the string attributes named in `scope` (own keys only). */
export function requestedAttributes(returned: unknown, scope: string | readonly string[]): AttributeSelection {
  const requested = new Set(scopeList(scope).filter((s) => !NON_ATTRIBUTE_SCOPES.has(s)));
  const data: Record<string, string> = {};
  const dropped: string[] = [];
  if (typeof returned !== 'object' || returned === null) return { data, dropped };
  for (const name of Object.keys(returned)) {
    const value: unknown = (returned as Record<string, unknown>)[name];
    if (requested.has(name) && typeof value === 'string') {
      // defineProperty, not assignment: "__proto__" becomes an own key, never the prototype.
      Object.defineProperty(data, name, { value, enumerable: true, writable: true, configurable: true });
    } else {
      dropped.push(name);
    }
  }
  return { data, dropped };
}
