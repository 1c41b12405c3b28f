/**
 * A userinfo JWT is checked against the provider's `userinfo_signing_alg_values_supported`
 * (within the app's allowlist), not its ID-token list: against panva's oidc-provider signing ID
 * tokens PS256 and userinfo ES256, a person signs in over real HTTP; a userinfo JWT signed with an
 * algorithm the provider does not advertise for userinfo is refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { IdError } from '../../src/errors.js';
import { generatePkcePair } from '../../src/pkce.js';
import { signInAtProvider, startOidcProvider, type StartedOidcProvider } from '../helpers/oidc-provider.js';

const CLIENT_SECRET = 'a-client-secret-of-the-userinfo-app-0123456789';
const REDIRECT_URI = 'http://127.0.0.1:9/auth/callback';

let provider: StartedOidcProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

/**
 * oidc-provider whose ID tokens are PS256 only and whose userinfo JWTs are ES256 or PS256; `app`
 * gets its userinfo signed with `userinfoAlg`. `advertise` replaces the userinfo list its
 * discovery document shows.
 */
async function start(userinfoAlg: 'ES256' | 'PS256', advertise?: string[]): Promise<StartedOidcProvider> {
  const started = await startOidcProvider({
    ...(advertise === undefined ? {} : { discoveryOverrides: { userinfo_signing_alg_values_supported: advertise } }),
    clients: [
      {
        client_id: 'app',
        client_secret: CLIENT_SECRET,
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_post',
        id_token_signed_response_alg: 'PS256',
        userinfo_signed_response_alg: userinfoAlg,
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    configure: (configuration) => {
      configuration.enabledJWA = {
        ...configuration.enabledJWA,
        idTokenSigningAlgValues: ['PS256'],
        userinfoSigningAlgValues: ['ES256', 'PS256'],
      };
      configuration.features = { ...configuration.features, jwtUserinfo: { enabled: true } };
    },
  });
  provider = started;
  return started;
}

/** Signs a person in with IdClient (allowlist PS256 and ES256) and reads their userinfo. */
async function signIn(started: StartedOidcProvider): Promise<Record<string, unknown> | undefined> {
  const client = new IdClient({
    issuer: started.issuer,
    clientId: 'app',
    clientSecret: CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
    idTokenSigningAlgorithms: ['PS256', 'ES256'],
  });
  try {
    await client.discover();
    const pkce = generatePkcePair();
    const { url, nonce } = client.authorizationUrl({
      codeChallenge: pkce.codeChallenge,
      state: 'state-1',
      scope: 'openid profile',
    });
    const back = await signInAtProvider(url, started);
    await client.checkAuthorizationResponse(Object.fromEntries(back.searchParams));
    const signedIn = await client.callback({
      code: back.searchParams.get('code') ?? '',
      codeVerifier: pkce.codeVerifier,
      nonce,
    });
    expect(JSON.parse(Buffer.from(signedIn.idToken.split('.')[0]!, 'base64url').toString()).alg).toBe('PS256');
    return (await client.userinfo({ sub: signedIn.sub, accessToken: signedIn.accessToken })).claims;
  } finally {
    client.close();
  }
}

describe('userinfo JWTs and the provider userinfo algorithm list', () => {
  it('ID tokens PS256 and userinfo ES256 (both advertised): the person signs in and the signed userinfo is read', async () => {
    const started = await start('ES256');
    const doc = (await (await fetch(`${started.issuer}/.well-known/openid-configuration`)).json()) as Record<
      string,
      unknown
    >;
    expect(doc.id_token_signing_alg_values_supported).toEqual(['PS256']);
    const claims = await signIn(started);
    expect(claims).toMatchObject({ sub: 'alice', name: 'Person alice' });
    expect(started.requests.get('/me')).toBe(1);
  });

  it('a userinfo JWT signed PS256 by a provider advertising only ES256 for userinfo is refused (userinfo_alg_not_allowed)', async () => {
    const started = await start('PS256', ['ES256']);
    let failure: unknown;
    try {
      await signIn(started);
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(IdError);
    expect((failure as IdError).code).toBe('userinfo_alg_not_allowed');
    expect(started.requests.get('/me')).toBe(1);
  });
});
