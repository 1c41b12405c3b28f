/**
 * How the router drives Passport and finds its routes, without building a middleware or an
 * express.Router per request: the strategy registered with Passport is run directly, with the
 * same success/fail/error/redirect/pass actions that passport.authenticate gives it.
 */
import type { NextFunction, Request, Response } from 'express';
import type { NdIdAuthenticateOptions, NdIdStrategy } from './strategy.js';

/** The callback of passport.authenticate(name, options, callback). */
export type StrategyOutcome = (err: unknown, user?: Express.User | false | null, info?: unknown, status?: unknown) => void;

/** Runs `strategy` for one request as passport.authenticate(name, options, callback) does for one strategy. */
export function runStrategy(
  passport: object,
  strategy: NdIdStrategy,
  req: Request,
  res: Response,
  next: NextFunction,
  options: NdIdAuthenticateOptions,
  outcome: StrategyOutcome,
): void {
  const run = Object.create(strategy) as NdIdStrategy;
  run.success = (user: Express.User, info?: object) => outcome(null, user, info);
  run.fail = (challenge?: unknown, status?: number) =>
    typeof challenge === 'number' ? outcome(null, false, undefined, challenge) : outcome(null, false, challenge, status);
  run.error = (err: unknown) => outcome(err);
  run.redirect = (url: string, status?: number) => {
    res.statusCode = status ?? 302;
    res.setHeader('Location', url);
    res.setHeader('Content-Length', '0');
    res.end();
  };
  run.pass = () => next();
  // As passport.authenticate does: req.logIn then serializes with this Passport instance.
  const sessionManager = (passport as { _sm?: unknown })._sm;
  if (sessionManager !== undefined) (req as { _sessionManager?: unknown })._sessionManager = sessionManager;
  run.authenticate(req, options);
}

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
