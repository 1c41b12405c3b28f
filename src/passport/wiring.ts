/**
 * Mistakes in how an app mounts the router and the strategy, invisible from inside the login:
 * a `TypeError` when the router is built, or logged once with the fix when seen on a request.
 */
import type { Request } from 'express';
import { LOG_EVENTS, type Log } from '../log.js';

/** What the checks read of a strategy (its type is not imported: the strategy imports these checks). */
interface WiredStrategy {
  readonly sessionKey: string;
  readonly flow: { readonly binding: { readonly redirectUri: string }; readonly log: Log };
}

/** Where a strategy keeps its pending logins, and for which callback URL. */
interface SessionUse {
  sessionKey: string;
  redirectUri: string;
}

/** Per Passport instance, what each nd-id strategy it ran keeps in the session, by name (values only). */
const ranByPassport = new WeakMap<object, Map<string, SessionUse>>();

/**
 * Notes that `passport` ran `strategy` under `name`; describes the clash when another nd-id strategy
 * shares its session key for another callback URL (each would evict the other's logins).
 */
export function strategiesClash(passport: object, name: string, strategy: WiredStrategy): string | undefined {
  let ran = ranByPassport.get(passport);
  if (ran === undefined) {
    ran = new Map();
    ranByPassport.set(passport, ran);
  }
  const { sessionKey } = strategy;
  const { redirectUri } = strategy.flow.binding;
  const known = ran.get(name);
  if (known?.sessionKey !== sessionKey || known.redirectUri !== redirectUri) ran.set(name, { sessionKey, redirectUri });
  if (ran.size === 1) return undefined;
  for (const [other, seen] of ran) {
    if (other !== name && seen.sessionKey === sessionKey && seen.redirectUri !== redirectUri) {
      return (
        `The strategies "${other}" and "${name}" share sessionKey "${sessionKey}" but have different callbackURLs ` +
        `(${seen.redirectUri} and ${redirectUri}); give each its own sessionKey.`
      );
    }
  }
  return undefined;
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
