/**
 * Keys by reference, over real HTTP, with the keys in SoftHSM2 reached through PKCS#11 (the
 * recipe of docs/keys.md, loaded as the page shows it): a base login whose userinfo key is in the
 * HSM, mixed with in-process keys while rotating; a FAPI 2.0 login whose assertion signing key,
 * ID-token key (ECDH-ES) and userinfo key are in the HSM, against the bundled provider and
 * against oidc-provider (ECDH-ES and RSA-OAEP-256 ID tokens). The private keys are generated in
 * the token, sensitive and not extractable: no login here could use them any other way.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import type { JweDecrypter, JwsSigner } from '../../src/client.js';
import type { NdIdUser } from '../../src/passport/strategy.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { signIn } from '../faults/support.js';
import { FAPI_CLIENT_ID, startFapiRp, type FapiRp } from '../fapi2/harness.js';
import { testKeyPair } from '../helpers/keys.js';
import { signInAtProvider, startOidcProvider, type StartedOidcProvider } from '../helpers/oidc-provider.js';
import { startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';
import type { ProviderClient } from '../helpers/provider.js';
import { startSoftHsm, type SoftHsm } from '../helpers/softhsm.js';
import { startExpressApp, type ExpressApp } from '../helpers/express-rp.js';

let hsm: SoftHsm;
let userinfoKey: JweDecrypter;
let assertionKey: JwsSigner;
let idTokenKey: JweDecrypter;
let rsaIdTokenKey: JweDecrypter;

beforeAll(async () => {
  hsm = await startSoftHsm(inject('softhsmProblem'));
  hsm.generate('userinfo', 'rsa-decrypt');
  hsm.generate('assertion', 'ec-sign');
  hsm.generate('id-token', 'ec-derive');
  hsm.generate('id-token-rsa', 'rsa-decrypt');
  userinfoKey = hsm.rsaDecrypter('userinfo', 'hsm-userinfo');
  assertionKey = hsm.signer('assertion', 'hsm-sig');
  idTokenKey = hsm.ecDecrypter('id-token', 'hsm-enc');
  rsaIdTokenKey = hsm.rsaDecrypter('id-token-rsa', 'hsm-enc-rsa');
});

const pem = (key: JweDecrypter): string =>
  String(createPublicKey({ key: key.publicJwk as JsonWebKey, format: 'jwk' }).export({ format: 'pem', type: 'spki' }));

describe('a base login with the userinfo key in the HSM, against the bundled provider', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider({ autoApprove: true });
  });
  afterAll(async () => {
    await started.close();
  });

  const clientWith = (privateKey: ConstructorParameters<typeof IdClient>[0]['privateKey']): IdClient =>
    new IdClient({
      clientId: TEST_CLIENT.clientId,
      clientSecret: TEST_CLIENT.clientSecret,
      privateKey,
      redirectUri: TEST_CLIENT.redirectUri,
      hostname: started.baseUrl,
    });

  it('reads the encrypted attributes, the block key unwrapped in the HSM', async () => {
    started.provider.setClientKeys(TEST_CLIENT.clientId, [{ key: pem(userinfoKey), kid: 'hsm-userinfo' }]);
    const client = clientWith(userinfoKey);
    const { data } = await signIn(client, started);
    expect(typeof data['profile.name']).toBe('string');
    client.close();
  });

  it('rotates between an in-process key and the HSM key: both in the list, each login reads its attributes', async () => {
    const old = testKeyPair('rp');
    const during = clientWith([old.privateKeyPem, userinfoKey]);
    started.provider.setClientKeys(TEST_CLIENT.clientId, [{ key: old.publicKeyPem }]);
    expect(typeof (await signIn(during, started)).data['profile.name']).toBe('string');
    started.provider.setClientKeys(TEST_CLIENT.clientId, [{ key: pem(userinfoKey) }]);
    expect(typeof (await signIn(during, started)).data['profile.name']).toBe('string');
    // The old key alone no longer reads what the service now encrypts to the HSM key.
    const before = clientWith(old.privateKeyPem);
    await expect(signIn(before, started)).rejects.toMatchObject({ code: 'userinfo_key_decrypt_failed' });
    for (const c of [during, before]) c.close();
  });

  it('says userinfo_key_decrypt_failed when the HSM refuses (a decrypter whose key the service did not encrypt to)', async () => {
    started.provider.setClientKeys(TEST_CLIENT.clientId, [{ key: testKeyPair('rp').publicKeyPem }]);
    const client = clientWith(userinfoKey);
    await expect(signIn(client, started)).rejects.toMatchObject({ code: 'userinfo_key_decrypt_failed' });
    client.close();
  });
});

describe('a FAPI 2.0 login with the signing, ID-token and userinfo keys in the HSM, against the bundled provider', () => {
  let rp: FapiRp | undefined;
  afterEach(async () => {
    await rp?.close();
    rp = undefined;
  });

  const hsmKeys = (alg: 'ECDH-ES+A256KW' | 'RSA-OAEP-256') => ({
    privateKey: userinfoKey,
    clientAssertionKey: assertionKey,
    idTokenDecryptionKey: alg === 'RSA-OAEP-256' ? rsaIdTokenKey : idTokenKey,
  });

  function registration(callbackURL: string, alg: 'ECDH-ES+A256KW' | 'RSA-OAEP-256'): ProviderClient {
    const keys = hsmKeys(alg);
    const jwks = new IdClient({
      clientId: FAPI_CLIENT_ID,
      hostname: 'http://127.0.0.1:1',
      redirectUri: callbackURL,
      profile: 'fapi2',
      ...keys,
    }).publicJwks();
    return {
      clientId: FAPI_CLIENT_ID,
      redirectUris: [callbackURL],
      publicKey: pem(userinfoKey),
      profile: 'fapi2',
      jwks,
      idTokenEncryptedResponseAlg: alg,
      idTokenEncryptedResponseEnc: 'A256GCM',
    } as ProviderClient;
  }

  it.for(['ECDH-ES+A256KW', 'RSA-OAEP-256'] as const)(
    'signs in: PAR and token authenticated by the HSM signature, the %s ID token and the block key decrypted in the HSM',
    async (alg) => {
      rp = await startFapiRp({
        register: (cb) => registration(cb, alg),
        client: { ...hsmKeys(alg), idTokenEncryptedResponseAlg: alg },
      });
      const user = await walk(rp);
      const persona = rp.provider.provider.personas[0]!;
      expect(user.data).toEqual({
        'profile.name': persona['profile.name'],
        'profile.nric_number': persona['profile.nric_number'],
      });
      expect(rp.provider.provider.audit()).toEqual([]);
    },
  );

  it('publishes only public keys for the HSM keys, under their kids', async () => {
    const jwks = registration('http://127.0.0.1:1/cb', 'ECDH-ES+A256KW').jwks as { keys: Record<string, unknown>[] };
    expect(jwks.keys.map((k) => [k.kid, k.use, k.alg])).toEqual([
      ['hsm-sig', 'sig', 'ES256'],
      ['hsm-enc', 'enc', 'ECDH-ES+A256KW'],
    ]);
    for (const key of jwks.keys) expect(Object.keys(key).filter((m) => ['d', 'p', 'q', 'k'].includes(m))).toEqual([]);
  });
});

/** The autoApprove login of the FAPI app through its router: returns the signed-in user. */
async function walk(rp: FapiRp): Promise<Record<string, unknown>> {
  const browser = rp.browser();
  const login = await browser.get('/auth/login');
  expect(login.status, login.text).toBe(302);
  const back = await fetch(login.headers.location as string, { redirect: 'manual' });
  const callback = new URL(back.headers.get('location') ?? '');
  const done = await browser.get(callback.pathname + callback.search);
  expect(done.status, done.text).toBe(302);
  expect(done.headers.location).toBe('/me');
  const me = await browser.get('/me');
  expect(me.status).toBe(200);
  return (me.body as { user: Record<string, unknown> }).user;
}

describe('a FAPI 2.0 login with the keys in the HSM, against oidc-provider', () => {
  let provider: StartedOidcProvider | undefined;
  let app: ExpressApp | undefined;
  afterEach(async () => {
    await app?.close();
    await provider?.close();
    app = undefined;
    provider = undefined;
  });

  it.for([
    ['ECDH-ES+A256KW', () => idTokenKey],
    ['RSA-OAEP-256', () => rsaIdTokenKey],
  ] as const)(
    'signs a person in with the assertion signed in the HSM and the %s ID token decrypted there',
    async ([alg, key]) => {
      app = await startExpressApp();
      provider = await startOidcProvider({
        fapi: true,
        clients: [
          {
            client_id: 'fapi-app',
            redirect_uris: [app.callbackURL],
            token_endpoint_auth_method: 'private_key_jwt',
            token_endpoint_auth_signing_alg: 'ES256',
            jwks_uri: `${app.baseUrl}/auth/jwks.json`,
            id_token_signed_response_alg: 'PS256',
            id_token_encrypted_response_alg: alg,
            id_token_encrypted_response_enc: 'A256GCM',
            dpop_bound_access_tokens: true,
            response_types: ['code'],
            grant_types: ['authorization_code'],
          },
        ],
      });
      const strategy = new NdIdStrategy(
        {
          clientId: 'fapi-app',
          issuer: provider.issuer,
          callbackURL: app.callbackURL,
          scope: 'openid profile',
          profile: 'fapi2',
          clientAssertionKey: assertionKey,
          idTokenDecryptionKey: key(),
          idTokenEncryptedResponseAlg: alg,
          idTokenSigningAlgorithms: ['PS256'],
        },
        async (user: NdIdUser) => ({ sub: user.sub, iss: user.claims.iss, name: user.userinfo?.name ?? null }),
      );
      app.install(strategy, { publishKeys: true });
      const browser = app.browser();
      const login = await browser.get('/auth/login');
      expect(login.status, login.text).toBe(302);
      const callback = await signInAtProvider(login.location ?? '', provider);
      const done = await browser.get(callback.pathname + callback.search);
      expect(done.status, done.text).toBe(302);
      const me = JSON.parse((await browser.get('/me')).text) as { user: Record<string, unknown> };
      expect(me.user).toEqual({ sub: 'alice', iss: provider.issuer, name: 'Person alice' });
    },
  );
});
