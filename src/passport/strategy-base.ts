/**
 * The base of a Passport strategy, without loading Passport: Passport only needs an object with
 * a `name` and an `authenticate(req, options)` method, and gives it `success`, `fail`, `error`,
 * `redirect` and `pass` for each request (on an object created from the strategy). Extending
 * this class rather than `passport.Strategy` lets the package load where Passport is not installed.
 */
import type { StrategyCreatedStatic, StrategyFailure } from 'passport';

/** A Passport strategy: what `passport.Strategy` is, declared here so Passport is not loaded. */
export abstract class PassportStrategyBase implements StrategyCreatedStatic {
  /** The name Passport registers the strategy under when `passport.use(strategy)` is given no name. */
  name?: string;

  /** Given by Passport for each request: the person is authenticated as `user`. */
  declare success: (user: Express.User, info?: object) => void;
  /** Given by Passport for each request: authentication failed, with a challenge and status. */
  declare fail: (challenge?: StrategyFailure | string | number, status?: number) => void;
  /** Given by Passport for each request: send the browser to `url`. */
  declare redirect: (url: string, status?: number) => void;
  /** Given by Passport for each request: neither success nor failure. */
  declare pass: () => void;
  /** Given by Passport for each request: an internal error. */
  declare error: (err: Error) => void;

  /** Runs the strategy for one request; Passport calls it on an object created from the strategy. */
  abstract authenticate(req: import('express').Request, options?: object): void;
}
