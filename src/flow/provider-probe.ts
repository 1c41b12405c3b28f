/**
 * Development help for the commonest first-run mistake: the local provider is not started, or
 * the hostname names another port. The browser would only show a connection error, so outside
 * production and tests, until the service has answered once, a login to a loopback service first
 * GETs its discovery document (any HTTP answer counts) and otherwise fails with a diagnosis.
 */
import { isLoopbackHost } from '../client/client-options.js';
import { IdError } from '../errors.js';
import type { Diagnosis } from './diagnose.js';

/** How long the check waits for the service to answer. */
export const PROBE_TIMEOUT_MS = 3000;

/** Whether logins check that the service answers: in development, for a service on this machine. */
export function shouldProbe(serviceUrl: URL): boolean {
  const env = process.env.NODE_ENV;
  return (env === undefined || env === '' || env === 'development') && isLoopbackHost(serviceUrl.hostname);
}

/** What the check asks for at the service of the authorization URL `url`: its discovery document. */
function probeUrl(url: URL): string {
  return `${url.origin}/.well-known/openid-configuration`;
}

/**
 * Whether anything answers at the service of authorization URL `url`.
 * @returns undefined when it answered, else why not (a network error code, or the timeout).
 */
export async function probeService(url: URL): Promise<string | undefined> {
  try {
    const res = await fetch(probeUrl(url), {
      method: 'GET',
      redirect: 'manual',
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await res.body?.cancel();
    return undefined;
  } catch (err) {
    if ((err as { name?: string }).name === 'TimeoutError') return `no answer within ${PROBE_TIMEOUT_MS} ms`;
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    return typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code) ? code : 'network error';
  }
}

/** The failure of a login whose service (of the authorization URL `url`) did not answer, with its diagnosis. */
export function serviceNotAnswering(url: URL, detail: string): IdError {
  const where = `The identity service did not answer at ${url.origin} (tried ${probeUrl(url)}: ${detail})`;
  // The error and the diagnosis say the same; the diagnosis adds what the browser would have shown.
  const why = ': it is not started, or ND_ID_HOSTNAME (the hostname or issuer option) names another host or port.';
  const err = new IdError('provider_unreachable', `${where}${why}`);
  const diagnosis: Diagnosis = {
    code: 'provider_not_answering',
    cause: `${where}, so the browser would have shown a connection error${why}`,
    fix: 'Start the provider (npx nd-id-provider --clients clients.json --port 4000) and wait for "nd-id-provider ready at ...", or set ND_ID_HOSTNAME to the address it prints.',
  };
  err.diagnosis = diagnosis;
  return err;
}
