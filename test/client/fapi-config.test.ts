/**
 * The FAPI 2.0 options of IdClient: each misconfiguration throws at construction with a sentence
 * that says what to do, and the published key set holds public members only.
 */
import { createSecretKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { checkContextMessage } from '../../src/client/fapi-config.js';
import type { IdClientOptions } from '../../src/client/types.js';
import { testKeyPair } from '../helpers/keys.js';

const rsa = testKeyPair('rp');
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ec2 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const ecEnc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const pem = (key: { export(o: object): string | Buffer }, type = 'pkcs8'): string =>
  key.export({ format: 'pem', type }).toString();

function fapi(extra: Partial<IdClientOptions> = {}): IdClientOptions {
  return {
    clientId: 'fapi-app',
    privateKey: rsa.privateKeyPem,
    hostname: 'http://127.0.0.1:9',
    redirectUri: 'http://127.0.0.1:3000/auth/callback',
    profile: 'fapi2',
    clientAssertionKey: pem(ec.privateKey),
    ...extra,
  };
}

const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

describe('IdClient with profile fapi2: construction', () => {
  it('accepts an EC P-256 assertion key as PEM, JWK or KeyObject, and needs no client secret', () => {
    expect(new IdClient(fapi()).profile).toBe('fapi2');
    expect(new IdClient(fapi({ clientAssertionKey: ec.privateKey.export({ format: 'jwk' }) as never })).profile).toBe(
      'fapi2',
    );
    expect(new IdClient(fapi({ clientAssertionKey: ec.privateKey })).profile).toBe('fapi2');
  });

  it.each([
    ['no assertion key', { clientAssertionKey: undefined }, /clientAssertionKey is required in the fapi2 profile/],
    ['a public key as PEM', { clientAssertionKey: pem(ec.publicKey, 'spki') }, /PUBLIC KEY.*give the private key/],
    ['a public KeyObject', { clientAssertionKey: ec.publicKey }, /is a public key; give the private key/],
    [
      'a public JWK',
      { clientAssertionKey: ec.publicKey.export({ format: 'jwk' }) as never },
      /without its private member "d"/,
    ],
    ['a symmetric KeyObject', { clientAssertionKey: createSecretKey(randomBytes(32)) }, /symmetric \(secret\) key/],
    ['a symmetric JWK', { clientAssertionKey: { kty: 'oct', k: 'AAAA' } }, /symmetric \(oct\) JWK/],
    [
      'an EC key on P-384',
      { clientAssertionKey: generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey },
      /ES256 needs P-256/,
    ],
    ['text that is not PEM', { clientAssertionKey: 'not a key' }, /got text that is not PEM/],
    ['a client secret', { clientSecret: 'shh' }, /clientSecret is not used with profile: 'fapi2'/],
    [
      'an X25519 decryption key',
      { idTokenDecryptionKey: generateKeyPairSync('x25519').privateKey },
      /encrypted to an EC key/,
    ],
    [
      'a 1024-bit RSA decryption key',
      { idTokenDecryptionKey: generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey },
      /at least 2048 bits/,
    ],
    ['the same key for both purposes', { idTokenDecryptionKey: pem(ec.privateKey) }, /same key/],
    ['a dpopKey on RSA', { dpopKey: rsa.privateKeyPem }, /dpopKey must be an EC P-256 private key/],
    [
      'a context message over 100 characters',
      { authenticationContextMessage: 'x'.repeat(101) },
      /has 101 characters; the approval screen shows at most 100: shorten it/,
    ],
    [
      'a retired key given as a private key',
      { retiredPublicKeys: [{ publicKey: pem(ec2.privateKey), use: 'sig', until: '2030-01-01' }] },
      /is a private key; a retired key is published/,
    ],
    [
      'a retired ID-token key (the service would encrypt to it)',
      { retiredPublicKeys: [{ publicKey: pem(ecEnc.publicKey, 'spki'), use: 'enc' as 'sig', until: '2030-01-01' }] },
      /retired ID-token key is not published.*idTokenDecryptionKey list/,
    ],
    [
      'a retired key without a valid date',
      { retiredPublicKeys: [{ publicKey: pem(ec2.publicKey, 'spki'), use: 'sig', until: 'soon' }] },
      /until must be a Date/,
    ],
    ['an unknown profile', { profile: 'fapi1' as never }, /profile must be 'base'.*or 'fapi2'/],
    [
      'an ID-token encryption algorithm it cannot read',
      { idTokenEncryptedResponseAlg: 'RSA1_5' },
      /idTokenEncryptedResponseAlg must be one of ECDH-ES, .*RSA-OAEP-256/,
    ],
    [
      'an ID-token content encryption it cannot read',
      { idTokenEncryptedResponseAlg: 'RSA-OAEP-256', idTokenEncryptedResponseEnc: 'A128CBC' },
      /idTokenEncryptedResponseEnc must be one of A128GCM, .*A256CBC-HS512, or left out/,
    ],
    [
      'a content encryption without the algorithm',
      { idTokenEncryptedResponseEnc: 'A256GCM' },
      /idTokenEncryptedResponseEnc is only used beside idTokenEncryptedResponseAlg/,
    ],
    [
      'ECDH-ES+A256KW with only the RSA userinfo key to decrypt with',
      { idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW' },
      /ECDH-ES\+A256KW needs an EC private key to decrypt ID tokens with: give it as idTokenDecryptionKey/,
    ],
    [
      'RSA-OAEP-256 with neither key',
      { privateKey: undefined, idTokenEncryptedResponseAlg: 'RSA-OAEP-256' },
      /RSA-OAEP-256 needs an RSA private key.*idTokenDecryptionKey \(or privateKey\)/,
    ],
  ])('throws for %s, saying what to do', (_name, extra, message) => {
    expect(() => new IdClient(fapi(extra as Partial<IdClientOptions>))).toThrow(message);
  });

  it('needs no ID-token key unless it asks for encryption: a provider may sign ID tokens without encrypting them', () => {
    expect(new IdClient(fapi({ privateKey: undefined })).profile).toBe('fapi2');
    expect(
      new IdClient(
        fapi({
          idTokenDecryptionKey: pem(ecEnc.privateKey),
          idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
          idTokenEncryptedResponseEnc: 'A256CBC-HS512',
        }),
      ).profile,
    ).toBe('fapi2');
    expect(
      () =>
        new IdClient({
          ...fapi(),
          profile: undefined,
          clientSecret: 's',
          clientAssertionKey: undefined,
          idTokenEncryptedResponseAlg: 'RSA-OAEP-256',
        }),
    ).toThrow(/idTokenEncryptedResponseAlg is used only with profile: 'fapi2'/);
  });

  it('refuses FAPI options without profile fapi2, instead of ignoring them', () => {
    expect(() => new IdClient({ ...fapi(), profile: undefined, clientSecret: 's' })).toThrow(
      /clientAssertionKey is used only with profile: 'fapi2'/,
    );
  });

  it('a base-profile client refuses the fapi2-only methods with a sentence naming the profile', () => {
    const base = new IdClient({ ...fapi(), profile: undefined, clientAssertionKey: undefined, clientSecret: 's' });
    expect(() => base.publicJwks()).toThrow(/construct it with profile: 'fapi2'/);
    expect(() => new IdClient(fapi()).authorizationUrl({ codeChallenge: 'a'.repeat(43) })).toThrow(
      /pushAuthorizationRequest/,
    );
  });
});

describe('IdClient.publicJwks()', () => {
  it('lists every assertion key (sig) and decryption key (enc), public members only, kid = RFC 7638 thumbprint', async () => {
    const client = new IdClient(
      fapi({
        clientAssertionKey: [pem(ec.privateKey), pem(ec2.privateKey)],
        idTokenDecryptionKey: pem(ecEnc.privateKey),
      }),
    );
    const { keys } = client.publicJwks();
    expect(keys.map((k) => [k.use, k.alg])).toEqual([
      ['sig', 'ES256'],
      ['sig', 'ES256'],
      ['enc', 'ECDH-ES+A256KW'],
    ]);
    expect(keys[0]!.kid).toBe(await calculateJwkThumbprint(ec.publicKey.export({ format: 'jwk' }) as never));
    for (const key of keys) for (const member of PRIVATE_MEMBERS) expect(key, member).not.toHaveProperty(member);
    expect(JSON.stringify(keys)).not.toContain(String(ec.privateKey.export({ format: 'jwk' }).d));
  });

  it('defaults the decryption key to privateKey (RSA-OAEP-256) and never publishes its private members', () => {
    const { keys } = new IdClient(fapi()).publicJwks();
    const enc = keys.find((k) => k.use === 'enc');
    expect(enc).toMatchObject({ kty: 'RSA', alg: 'RSA-OAEP-256' });
    for (const key of keys) for (const member of PRIVATE_MEMBERS) expect(key, member).not.toHaveProperty(member);
  });

  it('keeps a given JWK kid, and lists a retired key only until its date', () => {
    let now = Date.parse('2027-01-01T00:00:00Z');
    const jwk = { ...(ec.privateKey.export({ format: 'jwk' }) as Record<string, unknown>), kid: 'assertion-2027' };
    const client = new IdClient(
      fapi({
        clock: () => now,
        clientAssertionKey: jwk as never,
        retiredPublicKeys: [{ publicKey: pem(ec2.publicKey, 'spki'), use: 'sig', until: '2027-01-31T00:00:00Z' }],
      }),
    );
    expect(client.publicJwks().keys.map((k) => k.kid)).toContain('assertion-2027');
    expect(client.publicJwks().keys.filter((k) => k.use === 'sig')).toHaveLength(2);
    now = Date.parse('2027-02-01T00:00:00Z');
    expect(client.publicJwks().keys.filter((k) => k.use === 'sig')).toHaveLength(1);
  });
});

describe('authenticationContextMessage', () => {
  it('accepts 100 characters (counted as characters, not UTF-16 units) and refuses 101, control characters and empty text', () => {
    expect(checkContextMessage('é'.repeat(100), 'm')).toHaveLength(100);
    expect(checkContextMessage('🙂'.repeat(100), 'm')).toBeTruthy();
    expect(() => checkContextMessage('a'.repeat(101), 'm')).toThrow(/at most 100/);
    expect(() => checkContextMessage('line\nbreak', 'm')).toThrow(/one line/);
    expect(() => checkContextMessage('  ', 'm')).toThrow(/must not be blank/);
  });
});

describe('the authorization response iss in the profile', () => {
  /** A provider whose discovery document answers as `doc(origin)` does, on 127.0.0.1. */
  async function withDiscovery(
    doc: (origin: string) => Record<string, unknown> | undefined,
    run: (origin: string) => Promise<void>,
  ): Promise<void> {
    let served = '';
    const server = createServer((_req, res) => {
      const body = doc(served);
      if (body === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    served = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      await run(served);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }
  const endpoints = (o: string) => ({
    issuer: `${o}/v2`,
    authorization_endpoint: `${o}/v2/oauth/authorize`,
    token_endpoint: `${o}/v2/oauth/token`,
    jwks_uri: `${o}/v2/.well-known/jwks.json`,
  });

  it('is required when discovery advertises it, and checked when present', async () => {
    await withDiscovery(
      (o) => ({ ...endpoints(o), authorization_response_iss_parameter_supported: true }),
      async (o) => {
        const client = new IdClient(fapi({ hostname: o }));
        await expect(client.checkAuthorizationResponse({ code: 'c', state: 's' })).rejects.toMatchObject({
          code: 'authorization_response_iss_missing',
        });
        await expect(
          client.checkAuthorizationResponse({ code: 'c', state: 's', iss: 'https://other.example/v2' }),
        ).rejects.toMatchObject({
          code: 'authorization_response_iss_mismatch',
        });
        await expect(
          client.checkAuthorizationResponse({ code: 'c', state: 's', iss: `${o}/v2` }),
        ).resolves.toBeUndefined();
        client.close();
      },
    );
  });

  it('is not required when discovery does not advertise it (a present one is still checked), unless requireIssParameter is set', async () => {
    await withDiscovery(endpoints, async (o) => {
      const client = new IdClient(fapi({ hostname: o }));
      await expect(client.checkAuthorizationResponse({ code: 'c', state: 's' })).resolves.toBeUndefined();
      await expect(client.checkAuthorizationResponse({ code: 'c', state: 's', iss: `${o}/v2/` })).rejects.toMatchObject(
        {
          code: 'authorization_response_iss_mismatch',
        },
      );
      const strict = new IdClient(fapi({ hostname: o, requireIssParameter: true }));
      await expect(strict.checkAuthorizationResponse({ code: 'c', state: 's' })).rejects.toMatchObject({
        code: 'authorization_response_iss_missing',
      });
      client.close();
      strict.close();
    });
  });

  it('a discovery document that cannot be read never switches the check off: the response is refused', async () => {
    await withDiscovery(
      () => undefined,
      async (o) => {
        const client = new IdClient(fapi({ hostname: o }));
        await expect(client.checkAuthorizationResponse({ code: 'c', state: 's' })).rejects.toMatchObject({
          code: 'provider_invalid_response',
          status: 404,
        });
        client.close();
      },
    );
  });
});

describe('the pushed request of another provider', () => {
  it('goes to the PAR endpoint of the document, with the context type beside the message and the extra parameters; the browser goes to its authorization endpoint', async () => {
    const pushed: URLSearchParams[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const o = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        if (req.url === '/tenant/a/.well-known/openid-configuration') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              issuer: `${o}/tenant/a`,
              authorization_endpoint: `${o}/login/authorize`,
              pushed_authorization_request_endpoint: `${o}/login/par`,
              token_endpoint: `${o}/login/token`,
              jwks_uri: `${o}/login/jwks`,
            }),
          );
        } else if (req.url === '/login/par') {
          pushed.push(new URLSearchParams(Buffer.concat(chunks).toString()));
          res
            .writeHead(201, { 'content-type': 'application/json' })
            .end(JSON.stringify({ request_uri: 'urn:par:1', expires_in: 60 }));
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const o = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new IdClient(
      fapi({
        hostname: undefined,
        issuer: `${o}/tenant/a`,
        authenticationContextMessage: 'Sign in to pay',
        authenticationContextType: 'APP_AUTHENTICATION_DEFAULT',
        authorizationParams: { redirect_uri_https_type: 'app_claimed_https' },
      }),
    );
    try {
      const { key } = await client.dpopKeyForLogin();
      const result = await client.pushAuthorizationRequest({
        codeChallenge: 'a'.repeat(43),
        state: 's-1',
        dpopKey: key,
      });
      expect(result.url).toBe(`${o}/login/authorize?client_id=fapi-app&request_uri=urn%3Apar%3A1`);
      const body = pushed[0]!;
      expect(body.get('authentication_context_type')).toBe('APP_AUTHENTICATION_DEFAULT');
      expect(body.get('authentication_context_message')).toBe('Sign in to pay');
      expect(body.get('redirect_uri_https_type')).toBe('app_claimed_https');
      expect(body.getAll('dpop_jkt')).toEqual([key.jkt]);
      expect(JSON.parse(Buffer.from(body.get('client_assertion')!.split('.')[1]!, 'base64url').toString()).aud).toBe(
        `${o}/tenant/a`,
      );
      await expect(
        client.pushAuthorizationRequest({
          codeChallenge: 'a'.repeat(43),
          dpopKey: key,
          authorizationParams: { dpop_jkt: 'x' },
        }),
      ).rejects.toThrow('dpop_jkt is set by the client itself');
    } finally {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
