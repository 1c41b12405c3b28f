/**
 * Logout tokens as the test provider would sign them (its key is given to it), and the POST a
 * provider makes to an app's back-channel logout route. Not a test file itself.
 */
import { createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, SignJWT, type JWTPayload } from 'jose';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/client/logout-token.js';
import { pooledKeyPair } from '../helpers/keys.js';
import { CLIENT_ID, type TestApp } from './harness.js';

/** The provider's signing key (the test pool's), and its kid as the provider publishes it. */
export const providerPem = pooledKeyPair().privateKeyPem;
const providerKey: KeyObject = createPrivateKey(providerPem);
let providerKid: string | undefined;
async function kid(): Promise<string> {
  providerKid ??= await calculateJwkThumbprint(await exportJWK(createPublicKey(providerKey)), 'sha256');
  return providerKid;
}

export interface TokenSpec {
  claims?: Record<string, unknown>;
  /** Claims to leave out. */
  without?: string[];
  header?: Record<string, unknown>;
  key?: KeyObject | Uint8Array;
  alg?: string;
}

/** A logout token from the app's provider for `sub`, changed as the spec says. */
export async function logoutToken(app: TestApp, sub: string, spec: TokenSpec = {}): Promise<string> {
  const now = Math.floor(app.provider.provider.clock() / 1000);
  const claims: Record<string, unknown> = {
    iss: `${app.provider.baseUrl}/v2`,
    aud: CLIENT_ID,
    iat: now,
    exp: now + 120,
    jti: randomUUID(),
    sub,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
    ...spec.claims,
  };
  for (const name of spec.without ?? []) delete claims[name];
  return new SignJWT(claims as JWTPayload)
    .setProtectedHeader({ alg: spec.alg ?? 'RS256', typ: 'logout+jwt', kid: await kid(), ...spec.header })
    .sign(spec.key ?? providerKey);
}

/** POSTs a form to the app's back-channel logout route, as a provider does (no cookie). */
export function post(app: TestApp, form: string, contentType = 'application/x-www-form-urlencoded'): Promise<Response> {
  return fetch(`${app.baseUrl}/auth/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: form,
  });
}

export function tokenForm(token: string): string {
  return new URLSearchParams({ logout_token: token }).toString();
}
