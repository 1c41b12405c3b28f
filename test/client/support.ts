/** Shared set-up of the client tests: a stub provider and an IdClient pointed at it. */
import { IdClient } from '../../src/client/id-client.js';
import type { IdClientOptions } from '../../src/client/types.js';
import { generatePkcePair } from '../../src/pkce.js';
import { startStubProvider, type StubProvider } from '../helpers/stub-provider.js';

export const REDIRECT_URI = 'https://rp.example/callback';
export const CLIENT_SECRET = 'rp-secret-value';

/** A client for `stub`, with a clock the test can move (`now.ms`). */
export function clientFor(stub: StubProvider, options: Partial<IdClientOptions> = {}): IdClient {
  return new IdClient({
    clientId: stub.clientId,
    clientSecret: CLIENT_SECRET,
    privateKey: stub.rpPrivateKeyPem,
    redirectUri: REDIRECT_URI,
    hostname: stub.origin,
    clock: stub.clock,
    ...options,
  });
}

/** A callback as a login would make it, with the stub primed to echo `nonce`. */
export function login(client: IdClient, stub: StubProvider, nonce: string | null = 'nonce-abc-123') {
  if (nonce !== null) stub.nonce = nonce;
  const { codeVerifier } = generatePkcePair();
  return client.callback({ code: 'code-1', nonce, codeVerifier });
}

/** A movable clock, in ms. */
export function movableClock(start = Date.now()): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

export { startStubProvider, type StubProvider };
