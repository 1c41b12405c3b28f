/**
 * The app's verify callback, run for Passport: it may answer through `done` or through a
 * returned promise, and must answer within a time limit.
 */
import type { Request } from 'express';
import type { LoginUser } from '../flow/login-flow.js';

/** The signed-in person as the verify callback receives it. */
type NdIdUser = LoginUser;

/** Extra details of a refusal or failure; `message` is shown to the user (escaped). */
export interface NdIdInfo {
  message?: string;
  [key: string]: unknown;
}

/** The `done` callback of a callback-style verify function. `false` as user refuses the login. */
export type NdIdVerifyDone = (err: unknown, user?: Express.User | false | null, info?: NdIdInfo | string) => void;

/**
 * Verify callback: `(user, done)`, or an async `(user) => user | false`. It answers through `done`
 * or a promise of the user (`false` or `null` refuses; `undefined` leaves it to `done`), within
 * `verifyTimeout`; a value returned without a promise is ignored.
 */
export type NdIdVerify = (user: NdIdUser, done: NdIdVerifyDone) => NdIdVerifyAnswer;

/** Verify callback with the request first, used when `passReqToCallback` is true. Answers as {@link NdIdVerify}. */
export type NdIdVerifyWithRequest = (req: Request, user: NdIdUser, done: NdIdVerifyDone) => NdIdVerifyAnswer;

/**
 * What a verify callback returns. One signature rather than a union of two, so that TypeScript
 * types an inline `async (user) => ...` from it.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: `async (user, done) => { done(null, user); }` returns Promise<void>
export type NdIdVerifyAnswer = void | Promise<Express.User | false | null | undefined | void>;

/** What the verify callback answered: a user, or `false` with optional details. */
export type VerifyOutcome = { user: Express.User | false; info?: NdIdInfo | string };

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * Runs `verify` with `args` and a `done`; the first answer counts, by `done` or by a returned
 * promise's value other than `undefined`. Past `verifyTimeout` ms the login ends with an error.
 * Without a verify, `defaultUser` is the answer.
 */
export function runVerify(
  verify: NdIdVerify | NdIdVerifyWithRequest | undefined,
  args: unknown[],
  verifyTimeout: number,
  defaultUser: Express.User,
): Promise<VerifyOutcome> {
  if (verify === undefined) return Promise.resolve({ user: defaultUser });
  return new Promise<VerifyOutcome>((resolve, reject) => {
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const settle = (u: unknown, info?: NdIdInfo | string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        user: u === undefined || u === null || u === false ? false : (u as Express.User),
        ...(info === undefined ? {} : { info }),
      });
    };
    const failWith = (err: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    };
    const done: NdIdVerifyDone = (err, u, info) => {
      if (err !== null && err !== undefined) failWith(err);
      else settle(u, info);
    };
    const withDone: unknown[] = [...args, done];
    try {
      const returned: unknown = (verify as (...a: unknown[]) => unknown)(...withDone);
      // Not `verify.length` (wrappers with rest or default parameters report fewer), and never a
      // plain return value (a callback-style verify may return a database handle). A promise of
      // `undefined` is an async verify that calls `done` later.
      if (isThenable(returned)) {
        returned.then((u) => {
          if (u !== undefined) settle(u);
        }, failWith);
      }
    } catch (err) {
      failWith(err);
    }
    if (!settled) {
      timer = setTimeout(() => {
        failWith(
          new Error(
            `NdIdStrategy: the verify callback neither called done nor resolved to a user within ${verifyTimeout} ms (verifyTimeout).`,
          ),
        );
      }, verifyTimeout);
      timer.unref?.();
    }
  });
}
