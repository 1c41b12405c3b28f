/**
 * Server-side failures of calls to the service, at `warn` (`provider_call_failed`): code, endpoint,
 * status and OAuth error code, never a description, token or secret. The person's own failures
 * are left to the login's event.
 */
import { IdError, isServerSideFailure } from '../errors.js';
import { LOG_EVENTS, type Log } from '../log.js';
import { knownOAuthError } from './oauth-error-codes.js';

/** The endpoints of the service the client calls. */
export type Endpoint = 'token' | 'userinfo' | 'jwks' | 'par' | 'discovery';

/** Logs `err` at `warn` when it is a server-side failure of a call to `endpoint`; otherwise nothing. */
export function logCallFailure(log: Log, endpoint: Endpoint, err: unknown): void {
  if (!(err instanceof IdError)) return;
  const oauthError = oauthErrorCode(err.cause);
  if (!isServerSideFailure(err)) return;
  log.write(
    'warn',
    {
      event: LOG_EVENTS.providerCallFailed,
      code: err.code,
      endpoint,
      ...(err.status === undefined ? {} : { status: err.status }),
      ...(oauthError === undefined ? {} : { oauthError }),
    },
    `The call to the ${endpoint} endpoint failed (${err.code}).`,
  );
}

/** The `error` of an OAuth error body, when it is a registered code; anything else is not repeated. */
function oauthErrorCode(cause: unknown): string | undefined {
  return knownOAuthError((cause as { error?: unknown } | null | undefined)?.error);
}
