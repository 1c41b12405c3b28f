import { beforeAll, describe, expect, it } from 'vitest';
import { createProvider, createTestProvider, type ProviderOptions } from '../../../src/provider/index.js';
import { fapiTestKeys } from '../../../src/provider/testing/create-test-provider.js';
import { testKeyPair } from '../../helpers/keys.js';
import { decryptIdToken, DpopKey, startWithJwksUri, tokensOf } from './support.js';

const publicKey = testKeyPair('rp').publicKeyPem;
let keys: Awaited<ReturnType<typeof fapiTestKeys>>;
let fapiClient: Record<string, unknown>;
beforeAll(async () => {
  keys = await fapiTestKeys();
  fapiClient = {
    clientId: 'fapi-app',
    redirectUris: ['https://rp.example/cb'],
    publicKey,
    profile: 'fapi2',
    jwks: keys.jwks,
    idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
  };
});

function mistakesOf(client: Record<string, unknown>): string {
  try {
    createProvider({ baseUrl: 'http://127.0.0.1:4000', clients: [client] } as unknown as ProviderOptions);
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return (err as Error).message;
  }
  throw new Error('createProvider accepted the options');
}

describe('a FAPI 2.0 client registration', () => {
  it('is accepted with jwks or jwksUri, no secret, and an ID-token encryption', () => {
    expect(() =>
      createProvider({ baseUrl: 'http://127.0.0.1:4000', clients: [fapiClient] } as unknown as ProviderOptions),
    ).not.toThrow();
    const { jwks: _jwks, ...byUri } = fapiClient;
    expect(() =>
      createProvider({
        baseUrl: 'http://127.0.0.1:4000',
        clients: [{ ...byUri, jwksUri: 'https://rp.example/jwks.json' }],
      } as unknown as ProviderOptions),
    ).not.toThrow();
  });

  it('is refused with one clear sentence per mistake', () => {
    expect(mistakesOf({ ...fapiClient, clientSecret: 'shh-secret' })).toMatch(
      /clientSecret must be left out: a fapi2 client authenticates with private_key_jwt/,
    );
    expect(mistakesOf({ ...fapiClient, jwksUri: 'https://rp.example/jwks' })).toMatch(
      /exactly one of jwks .* and jwksUri/,
    );
    expect(mistakesOf({ ...fapiClient, idTokenEncryptedResponseAlg: 'RSA1_5' })).toMatch(
      /idTokenEncryptedResponseAlg must be one of ECDH-ES, ECDH-ES\+A128KW, ECDH-ES\+A192KW, ECDH-ES\+A256KW, RSA-OAEP-256/,
    );
    expect(mistakesOf({ ...fapiClient, idTokenEncryptedResponseEnc: 'A128CBC' })).toMatch(
      /idTokenEncryptedResponseEnc must be one of A128GCM, .*, A256CBC-HS512, or left out \(A256GCM\)/,
    );
    expect(mistakesOf({ ...fapiClient, idTokenSignedResponseAlg: 'HS256' })).toMatch(
      /idTokenSignedResponseAlg must be one of PS256, ES256, EdDSA, RS256, or left out/,
    );
    expect(mistakesOf({ ...fapiClient, id_token_signed_response_alg: 'PS256' })).toMatch(
      /write it "idTokenSignedResponseAlg"/,
    );
    expect(mistakesOf({ ...fapiClient, profile: 'fapi1' })).toMatch(/profile must be "fapi2"/);
    expect(mistakesOf({ ...fapiClient, jwks: { keys: [keys.signingKey] } })).toMatch(
      /private member "d": register only the public key/,
    );
    expect(mistakesOf({ ...fapiClient, jwks: { keys: [keys.jwks.keys[0]] } })).toMatch(
      /no key to encrypt ID tokens with ECDH-ES\+A256KW/,
    );
    expect(mistakesOf({ ...fapiClient, jwks: { keys: [keys.jwks.keys[1]] } })).toMatch(/no signing key/);
    expect(
      mistakesOf({ ...fapiClient, jwks: { keys: [{ ...keys.jwks.keys[0], kid: undefined }, keys.jwks.keys[1]] } }),
    ).toMatch(/kid is required/);
    expect(mistakesOf({ ...fapiClient, idTokenEncryptedResponseAlg: 'RSA-OAEP-256' })).toMatch(
      /add an RSA key with "use": "enc"/,
    );
    const { jwks: _jwks, ...byUri } = fapiClient;
    expect(mistakesOf({ ...byUri, jwksUri: 'http://rp.example/jwks' })).toMatch(
      /must use https \(or http on a loopback host\)/,
    );
    expect(mistakesOf({ ...byUri, jwks_uri: 'https://rp.example/jwks' })).toMatch(/has "jwks_uri": write it "jwksUri"/);
  });

  it('takes a plain-http jwksUri only on a loopback host, never a remote name that starts like one', async () => {
    const { jwks: _jwks, ...byUri } = fapiClient;
    for (const jwksUri of [
      'http://127.0.0.1.attacker.example/jwks',
      'http://127.0.0.1.nip.io:8080/jwks',
      'http://localhost.attacker.example/jwks',
      'http://127.example/jwks',
    ]) {
      expect(mistakesOf({ ...byUri, jwksUri })).toMatch(/must use https \(or http on a loopback host\)/);
    }
    // startProvider refuses it too, before anything listens.
    const { startProvider } = await import('../../../src/provider/index.js');
    await expect(
      startProvider({
        clients: [{ ...byUri, jwksUri: 'http://127.0.0.1.attacker.example/jwks' }],
      } as unknown as ProviderOptions),
    ).rejects.toThrow(/jwksUri "http:\/\/127\.0\.0\.1\.attacker\.example\/jwks" must use https/);
    for (const jwksUri of [
      'http://127.0.0.1:8080/jwks',
      'http://127.1.2.3/jwks',
      'http://[::1]:8080/jwks',
      'http://LocalHost:8080/jwks',
    ]) {
      expect(() =>
        createProvider({
          baseUrl: 'http://127.0.0.1:4000',
          clients: [{ ...byUri, jwksUri }],
        } as unknown as ProviderOptions),
      ).not.toThrow();
    }
  });

  it('keeps jwks and the encryption choice off base clients', () => {
    expect(mistakesOf({ ...fapiClient, profile: undefined, clientSecret: 'secret-of-a' })).toMatch(
      /jwks is for a FAPI 2.0 client: add "profile": "fapi2"/,
    );
    expect(
      mistakesOf({
        clientId: 'base',
        clientSecret: 'secret-of-a',
        redirectUris: ['https://rp.example/cb'],
        publicKey,
        idTokenSignedResponseAlg: 'ES256',
      }),
    ).toMatch(/idTokenSignedResponseAlg is for a FAPI 2.0 client/);
  });
});

describe('discovery with a FAPI 2.0 client', () => {
  it('advertises PAR, DPoP, private_key_jwt and the ID-token encryption, PAR required when every client is FAPI', async () => {
    const test = await createTestProvider({ profile: 'fapi2' });
    try {
      const doc = (await (await fetch(`${test.baseUrl}/v2/.well-known/openid-configuration`)).json()) as Record<
        string,
        unknown
      >;
      expect(doc).toMatchObject({
        pushed_authorization_request_endpoint: `${test.baseUrl}/v2/oauth/par`,
        require_pushed_authorization_requests: true,
        authorization_response_iss_parameter_supported: true,
        dpop_signing_alg_values_supported: ['ES256', 'PS256', 'EdDSA'],
        token_endpoint_auth_signing_alg_values_supported: ['ES256', 'PS256', 'EdDSA'],
        // Exactly what the registered client is served, not every algorithm the provider knows.
        id_token_encryption_alg_values_supported: ['ECDH-ES+A256KW'],
        id_token_encryption_enc_values_supported: ['A256GCM'],
      });
      expect(doc['token_endpoint_auth_methods_supported']).toContain('private_key_jwt');
      expect(test.client.fapi?.jwks.keys).toHaveLength(2);
      expect(test.client.clientSecret).toBe('');
    } finally {
      await test.close();
    }
  });
});

describe('the ID-token encryption key of a client with several', () => {
  it('is the first that fits (the current one an app lists first), so a key kept after it for rotation is not used', async () => {
    const keys = await fapiTestKeys();
    const later = (await fapiTestKeys()).jwks.keys.find((k) => k.use === 'enc')!;
    const test = await startWithJwksUri(
      'two-enc-keys',
      { keys: [...keys.jwks.keys, { ...later, kid: 'enc-later' }] },
      keys,
    );
    try {
      const dpop = await DpopKey.make();
      const { id_token } = await tokensOf(test, dpop);
      expect(JSON.parse(Buffer.from(id_token.split('.')[0]!, 'base64url').toString()).kid).toBe(keys.encryptionKey.kid);
      const claims = JSON.parse(
        Buffer.from((await decryptIdToken(test, id_token)).split('.')[1]!, 'base64url').toString(),
      ) as { aud: string };
      expect(claims.aud).toBe('two-enc-keys');
    } finally {
      await test.close();
    }
  });
});
