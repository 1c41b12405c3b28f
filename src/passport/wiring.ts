/**
 * Wiring checks of the Express adapter: mistakes in how an app mounts the router and the
 * strategy that cannot be seen from inside the login, found either when the router is built
 * (a `TypeError` naming both sides) or on the requests themselves (logged once, with the fix).
 */
import type { Request } from 'express';
import { LOG_EVENTS, type Log } from '../log.js';
import { NdIdStrategy } from './strategy.js';

/** Passport's registered strategies, by name (an internal field every Passport version has). */
function strategiesOf(passport: object): Array<[string, NdIdStrategy]> {
  const all = (passport as { _strategies?: Record<string, unknown> })._strategies;
  if (typeof all !== 'object' || all === null) return [];
  return Object.entries(all).filter((entry): entry is [string, NdIdStrategy] => entry[1] instanceof NdIdStrategy);
}

/**
 * Throws when two `nd-id` strategies registered with `passport` keep their pending logins under
 * the same session key but were built for different callback URLs: each would evict and refuse
 * the other's logins.
 */
export function checkStrategiesApart(passport: object): void {
  const byKey = new Map<string, [string, NdIdStrategy]>();
  for (const [name, strategy] of strategiesOf(passport)) {
    const seen = byKey.get(strategy.sessionKey);
    if (seen !== undefined && seen[1].flow.binding.redirectUri !== strategy.flow.binding.redirectUri) {
      throw new TypeError(
        `ndIdRouter: the strategies "${seen[0]}" and "${name}" share sessionKey "${strategy.sessionKey}" but have different callbackURLs ` +
          `(${seen[1].flow.binding.redirectUri} and ${strategy.flow.binding.redirectUri}); give each its own sessionKey.`,
      );
    }
    byKey.set(strategy.sessionKey, [name, strategy]);
  }
}

/** The strategy registered under `name`, when it is an {@link NdIdStrategy}. */
export function strategyNamed(passport: object, name: string): NdIdStrategy | undefined {
  const lookup = (passport as { _strategy?: (n: string) => unknown })._strategy;
  const strategy = typeof lookup === 'function' ? lookup.call(passport, name) : undefined;
  return strategy instanceof NdIdStrategy ? strategy : undefined;
}

/** Path of an absolute URL, or undefined. */
function pathOf(url: string): string | undefined {
  try {
    return new URL(url).pathname;
  } catch {
    return undefined;
  }
}

/** Checks that keep their findings, so each wiring problem is logged once per router. */
export class WiringChecks {
  private readonly logged = new Set<string>();
  /** The path of the last callback URL seen, parsed once rather than on every login. */
  private lastRedirectUri: string | undefined;
  private lastCallbackPath: string | undefined;

  private callbackPathOf(redirectUri: string): string | undefined {
    if (redirectUri !== this.lastRedirectUri) {
      this.lastCallbackPath = pathOf(redirectUri);
      this.lastRedirectUri = redirectUri;
    }
    return this.lastCallbackPath;
  }

  private once(log: Log, code: string, message: string, details: Record<string, string>): void {
    if (this.logged.has(code)) return;
    this.logged.add(code);
    log.write('error', { event: LOG_EVENTS.wiringProblem, code, ...details }, message);
  }

  /**
   * The path the service redirects back to (`callbackURL`) must be the router's callback route
   * (mount path + route). Returns false, after logging once, when it is not.
   */
  callbackRouteMatches(req: Request, strategy: NdIdStrategy, callbackRoute: string | false): boolean {
    if (callbackRoute === false) return true; // the app handles the callback itself
    const expected = this.callbackPathOf(strategy.flow.binding.redirectUri);
    if (expected === undefined) return true;
    const actual = `${req.baseUrl}${callbackRoute}`;
    if (actual === expected) return true;
    this.once(
      strategy.flow.log,
      'callback_route_mismatch',
      `The router's callback route is ${actual}, but callbackURL points the service to ${expected}: logins cannot complete. Mount the router where callbackURL points, or set routes.callback.`,
      { route: actual, callbackPath: expected },
    );
    return false;
  }

  /**
   * A session that holds a signed-in user while the request has none means Passport never read
   * it back: `passport.session()` is not mounted, or `deserializeUser` drops the user.
   */
  sessionRestored(req: Request, log: Log): void {
    const stored = (req as { session?: { passport?: { user?: unknown } } }).session?.passport?.user;
    if (stored === undefined || req.user !== undefined) return;
    this.once(
      log,
      'session_not_restored',
      'This browser signed in earlier, but the request carries no user: app.use(passport.session()) is missing after the session middleware (or deserializeUser returns nothing), so people are sent to log in again and again.',
      {},
    );
  }

  /** express-session silently drops a `secure` cookie on an http request: the sign-in would not stick. */
  cookieWillBeSaved(req: Request, log: Log): void {
    const secure = (req as { session?: { cookie?: { secure?: unknown } } }).session?.cookie?.secure;
    if (secure !== true || req.secure) return;
    this.once(
      log,
      'session_cookie_not_saved',
      "The session cookie is secure but this request is plain http, so the session middleware will not send it and the sign-in will not stick: serve over https, use secure: 'auto', or set app.set('trust proxy', 1) behind a TLS proxy.",
      {},
    );
  }
}
