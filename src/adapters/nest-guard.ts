/**
 * `requireSignIn` as a NestJS guard (Nest on Express): it runs the Express guard, which has already
 * answered anyone not signed in (`false` then makes Nest stop). Typed structurally: `@nestjs/*` is never loaded.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { checkOptionNames, ownOptions } from '../options-check.js';
import { requireRecentSignIn, requireSignIn, type RequireSignInOptions } from '../passport/require-sign-in.js';

/** What the guard needs of Nest's `ExecutionContext`. */
export interface NdIdExecutionContext {
  /** Nest's HTTP view of the context. */
  switchToHttp(): { getRequest(): unknown; getResponse(): unknown };
}

/** A Nest guard (`CanActivate`). */
export interface NdIdSignInGuard {
  /** True for a signed-in person; false once the redirect or 401 was sent. Rejects when the session store fails. */
  canActivate(context: NdIdExecutionContext): Promise<boolean>;
}

/** Options of {@link ndIdSignInGuard}: those of `requireSignIn`, and `recentSeconds` for a step-up guard. */
export interface NdIdSignInGuardOptions extends RequireSignInOptions {
  /** Ask for a sign-in at most this many seconds old, as `requireRecentSignIn(seconds)`. */
  recentSeconds?: number;
}

/**
 * A Nest guard doing what `requireSignIn()` (or `requireRecentSignIn(recentSeconds)`) does.
 *
 * ```ts
 * @UseGuards(ndIdSignInGuard({ sessions }))
 * ```
 * @throws TypeError naming the option when an option is wrong.
 */
export function ndIdSignInGuard(options: NdIdSignInGuardOptions = {}): NdIdSignInGuard {
  checkOptionNames(options, 'ndIdSignInGuard()');
  options = ownOptions(options);
  const { recentSeconds, ...rest } = options;
  const middleware: RequestHandler =
    recentSeconds === undefined ? requireSignIn(rest) : requireRecentSignIn(recentSeconds, rest);
  return {
    canActivate(context) {
      const http = context.switchToHttp();
      const req = http.getRequest() as Request;
      const res = http.getResponse() as Response;
      return new Promise<boolean>((resolve, reject) => {
        const answered = (): void => resolve(false);
        const next: NextFunction = (err?: unknown) => {
          res.off('finish', answered);
          if (err === undefined || err === null) resolve(true);
          else reject(err);
        };
        res.once('finish', answered);
        try {
          middleware(req, res, next);
        } catch (err) {
          reject(err);
        }
        // The guard answered synchronously or will: either `next` resolves or the answer finishes.
        if (res.headersSent) resolve(false);
      });
    },
  };
}
