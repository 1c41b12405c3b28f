/** A request path matched to a route as Express matches it by default (the router has no express.Router). */

/** Matches a request path to a route as Express does by default: case-insensitive, one trailing slash allowed. */
export function routeMatcher(route: string | false): (path: string) => boolean {
  if (route === false) return () => false;
  const lower = route.length > 1 && route.endsWith('/') ? route.slice(0, -1).toLowerCase() : route.toLowerCase();
  const slashed = lower.endsWith('/') ? lower : `${lower}/`;
  return (path) => {
    if (path === route) return true;
    const p = path.toLowerCase();
    return p === lower || p === slashed;
  };
}
