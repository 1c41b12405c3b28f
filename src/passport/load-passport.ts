/** Loads `passport` only when needed, so an `IdClient` or fetch-handler app runs without it installed. */
import { createRequire } from 'node:module';
import type passportModule from 'passport';

type Authenticator = passportModule.Authenticator;

let loaded: Authenticator | undefined;

/**
 * The `passport` module's default instance, loaded on first use.
 * @throws TypeError saying how to install Passport when it is not installed.
 */
export function loadPassport(who: string): Authenticator {
  if (loaded !== undefined) return loaded;
  let mod: unknown;
  try {
    mod = createRequire(__filename)('passport');
  } catch (cause) {
    const missing = (cause as { code?: unknown }).code === 'MODULE_NOT_FOUND';
    throw new TypeError(
      missing
        ? `${who}: the passport package is not installed. Install it (npm install passport express express-session), or pass your own instance as the passport option.`
        : `${who}: the passport package could not be loaded.`,
      { cause },
    );
  }
  const instance = ((mod as { default?: unknown }).default ?? mod) as Authenticator;
  loaded = instance;
  return instance;
}
