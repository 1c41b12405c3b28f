/** A provider with one registered client, listening on loopback, for provider tests. */
import { startProvider, type StartedProvider, type StartProviderOptions } from './provider.js';
import { generateCodeChallenge, generateCodeVerifier } from '../../src/pkce.js';
import { testKeyPair } from './keys.js';

/** The client every provider test registers. */
export const TEST_CLIENT = {
  clientId: 'test-client',
  clientSecret: 'test-client-secret-0123456789',
  redirectUri: 'http://127.0.0.1:9999/callback',
  name: 'Test Relying Party',
};

/** A second client, for pairwise and binding tests. */
export const OTHER_CLIENT = {
  clientId: 'other-client',
  clientSecret: 'other-client-secret-0123456789',
  redirectUri: 'http://localhost:9998/cb',
  name: 'Other Relying Party',
};

/** Options registering both test clients with the shared test key pairs. */
export function providerOptions(extra: Partial<StartProviderOptions> = {}): StartProviderOptions {
  return {
    clients: [
      {
        clientId: TEST_CLIENT.clientId,
        clientSecret: TEST_CLIENT.clientSecret,
        redirectUris: [TEST_CLIENT.redirectUri],
        publicKey: testKeyPair('rp').publicKeyPem,
        name: TEST_CLIENT.name,
      },
      {
        clientId: OTHER_CLIENT.clientId,
        clientSecret: OTHER_CLIENT.clientSecret,
        redirectUris: [OTHER_CLIENT.redirectUri],
        publicKey: testKeyPair('rp2').publicKeyPem,
        name: OTHER_CLIENT.name,
      },
    ],
    ...extra,
  };
}

/** Start a provider on 127.0.0.1, port 0. */
export function startTestProvider(extra: Partial<StartProviderOptions> = {}): Promise<StartedProvider> {
  return startProvider(providerOptions(extra));
}

/** A fresh PKCE pair. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = generateCodeVerifier(64);
  return { verifier, challenge: generateCodeChallenge(verifier) };
}

/** Query of a valid authorize request for TEST_CLIENT, with overrides (null removes a parameter). */
export function authorizeQuery(challenge: string, overrides: Record<string, string | null> = {}): string {
  const params: Record<string, string | null> = {
    response_type: 'code',
    client_id: TEST_CLIENT.clientId,
    redirect_uri: TEST_CLIENT.redirectUri,
    scope: 'openid profile.name profile.nric_number profile.passport_expiry_date',
    state: 'state-123',
    nonce: 'nonce-456',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== null) q.append(k, v);
  return q.toString();
}

/** Run an authorize request against an auto-approving provider and return the code from the redirect. */
export async function authorizeCode(
  baseUrl: string,
  challenge: string,
  overrides: Record<string, string | null> = {},
): Promise<string> {
  const res = await fetch(`${baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge, overrides)}`, {
    redirect: 'manual',
  });
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}, not a redirect`);
  const code = new URL(res.headers.get('location') ?? '').searchParams.get('code');
  if (!code) throw new Error('authorize redirect carried no code');
  return code;
}

/** POST a JSON body to the token endpoint. */
export function postToken(
  baseUrl: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${baseUrl}/v2/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

/** A token request body for TEST_CLIENT with overrides (undefined removes a field). */
export function tokenBody(
  code: string,
  verifier: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    client_id: TEST_CLIENT.clientId,
    client_secret: TEST_CLIENT.clientSecret,
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: TEST_CLIENT.redirectUri,
    ...overrides,
  };
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
  return body;
}

/** A clock tests move by hand. */
export function manualClock(start = Date.now()): { now: () => number; advance(seconds: number): void } {
  let t = start;
  return {
    now: () => t,
    advance(seconds: number) {
      t += seconds * 1000;
    },
  };
}
