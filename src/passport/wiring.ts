/**
 * Mistakes in how an app mounts the router and the strategy, invisible from inside the login:
 * a `TypeError` when the router is built, or logged once with the fix when seen on a request.
 */
import type { Request } from 'express';
import { LOG_EVENTS, type Log } from '../log.js';

/** What the checks read of a strategy (its type is not imported: the strategy imports these checks). */
interface WiredStrategy {
  readonly flow: { readonly binding: { readonly redirectUri: string }; readonly log: Log };
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

  /** Whether `callbackURL`'s path is the router's callback route as mounted; logged once when not. */
  callbackRouteMatches(strategy: WiredStrategy, actual: string | false): boolean {
    if (actual === false) return true; // the app handles the callback itself
    const expected = this.callbackPathOf(strategy.flow.binding.redirectUri);
    if (expected === undefined) return true;
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
