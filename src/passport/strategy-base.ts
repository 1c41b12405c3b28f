/**
 * The base of NdIdStrategy: `passport-strategy`'s `Strategy` (Passport's own), so `instanceof` and
 * NestJS's `PassportStrategy` see a Passport strategy; one file without dependencies, so apps
 * without Passport still load. Typed here: its types are a separate `@types` package.
 */
import { createRequire } from 'node:module';
import type { StrategyCreatedStatic, StrategyFailure } from 'passport';
import type { Strategy } from 'passport-strategy';

type StrategyClass = abstract new () => { authenticate(req: unknown, options?: object): void };

// Required, not imported: an ES module importing this CommonJS package pays Node's CommonJS export
// scan, most of the root entry's import cost. The module is the one `require('passport-strategy')`
// gives the app, so `instanceof` holds.
const PassportStrategy = (createRequire(__filename)('passport-strategy') as { Strategy: typeof Strategy })
  .Strategy as unknown as StrategyClass;

/** A Passport strategy: `passport.Strategy` with the methods Passport gives each request. */
export abstract class PassportStrategyBase extends PassportStrategy implements StrategyCreatedStatic {
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
  abstract override authenticate(req: import('express').Request, options?: object): void;
}
