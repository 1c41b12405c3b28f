/**
 * Keys and signatures that must be refused whatever node:crypto would accept (Project
 * Wycheproof's JOSE findings), each over real HTTP from a provider serving the hostile key or
 * token: RSA keys with an unsound exponent or the ROCA fingerprint, signatures of another
 * length than the algorithm gives, non-canonical base64url, and a userinfo block key used with
 * another algorithm than its own.
 */
import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { IdClient } from '../../src/client/id-client.js';
import { importIdTokenDecryptionKeys } from '../../src/client/fapi-keys.js';
import { validateIdToken } from '../../src/client/id-token.js';
import { isIdError, type IdErrorCode } from '../../src/errors.js';
import { STUB_PATHS, sendJson } from '../helpers/stub-provider.js';
import {
  exponentOnePrivateJwk,
  exponentOneSignature,
  publicJwkWithExponent,
  rocaKeyPair,
} from '../helpers/hostile-keys.js';
import { CLIENT_SECRET, clientFor, login, REDIRECT_URI, startStubProvider, type StubProvider } from './support.js';

let stub: StubProvider;
let original: StubProvider['userinfo'];

beforeAll(async () => {
  stub = await startStubProvider();
  original = { ...stub.userinfo, data: { ...stub.userinfo.data } };
});
afterAll(() => stub.close());
afterEach(() => {
  stub.claims = {};
  stub.header = {};
  stub.nonce = undefined;
  stub.userinfo = { ...original, data: { ...original.data } };
  for (const path of Object.values(STUB_PATHS)) stub.override(path, undefined);
});

async function refusedWith(promise: Promise<unknown>, code: IdErrorCode): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected IdError ${code}`).toBeInstanceOf(Error);
  expect((err as { code?: string }).code).toBe(code);
  expect(isIdError(err, code)).toBe(true);
  expect((err as Error).message).not.toMatch(/eyJ/);
}

/** The provider publishes exactly these JWKs. */
function publish(...keys: Record<string, unknown>[]): void {
  stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 200, { keys }));
}

/** The token endpoint answers with this ID token. */
function serveIdToken(idToken: string): void {
  stub.serveTokens({ access_token: stub.accessToken, id_token: idToken });
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A token whose RS256 signature is its own encoded message: what verifies under e = 1. */
function exponentOneToken(jwk: Record<string, string>, kid: string): string {
  const input = `${encode({ alg: 'RS256', kid })}.${encode({ ...stub.idTokenClaims(), nonce: 'n-e1' })}`;
  return `${input}.${exponentOneSignature(input, jwk.n!)}`;
}

describe('RSA keys with an unsound public exponent', () => {
  it('refuses a provider key with e = 1, under which a forged RS256 token would verify', async () => {
    const jwk = publicJwkWithExponent(1n);
    publish({ ...jwk, kid: 'e1', use: 'sig', alg: 'RS256' });
    serveIdToken(exponentOneToken(jwk, 'e1'));
    await refusedWith(login(clientFor(stub), stub, 'n-e1'), 'id_token_key_not_found');
  });

  it('refuses a key with e = 1 that a custom key source hands over, at the signature step', async () => {
    const jwk = publicJwkWithExponent(1n);
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    stub.nonce = 'n-e1';
    await refusedWith(
      validateIdToken(exponentOneToken(jwk, 'e1'), {
        issuer: stub.issuer,
        clientId: stub.clientId,
        nonce: 'n-e1',
        accessToken: stub.accessToken,
        clockTolerance: 0,
        clock: Date.now,
        keyFor: () => Promise.resolve(key),
      }),
      'id_token_signature_invalid',
    );
  });

  it.each([
    ['an even exponent', 65538n],
    ['an exponent of 2^256 + 1', (1n << 256n) + 1n],
  ])('refuses a provider key with %s', async (_name, e) => {
    publish({ ...publicJwkWithExponent(e), kid: 'odd', use: 'sig', alg: 'RS256' });
    stub.header = { kid: 'odd' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_key_not_found');
  });

  it("refuses the app's own private key with e = 1, at construction, for userinfo and FAPI ID tokens", () => {
    const jwk = exponentOnePrivateJwk();
    const make = () =>
      new IdClient({
        clientId: stub.clientId,
        clientSecret: CLIENT_SECRET,
        privateKey: jwk as { kty: string },
        redirectUri: REDIRECT_URI,
        hostname: stub.origin,
      });
    expect(make).toThrow(/public exponent/);
    expect(() => importIdTokenDecryptionKeys(jwk, 'idTokenDecryptionKey')).toThrow(/public exponent/);
  });
});

describe('RSA keys with the ROCA fingerprint', () => {
  let roca: { privateKey: KeyObject; publicJwk: Record<string, string> };
  beforeAll(() => {
    roca = rocaKeyPair();
  });

  it('refuses a provider key whose modulus has the ROCA fingerprint, though the token is signed with it', async () => {
    publish({ ...roca.publicJwk, kid: 'roca', use: 'sig', alg: 'RS256' });
    const token = await new SignJWT({ ...stub.idTokenClaims(), nonce: 'n-roca' })
      .setProtectedHeader({ alg: 'RS256', kid: 'roca' })
      .sign(roca.privateKey);
    serveIdToken(token);
    await refusedWith(login(clientFor(stub), stub, 'n-roca'), 'id_token_key_not_found');
  });

  it("refuses such a key as the app's own key", () => {
    const jwk = roca.privateKey.export({ format: 'jwk' });
    expect(() => importIdTokenDecryptionKeys(jwk, 'idTokenDecryptionKey')).toThrow(/ROCA/);
  });
});

describe('signature length and encoding', () => {
  it('refuses a PS256 signature one byte shorter than the modulus (its leading zero removed)', async () => {
    const signer = stub.keys[0]!;
    publish({ ...signer.publicJwk, alg: 'PS256' });
    let token = '';
    // PSS is randomised: sign until the signature starts with a zero byte (1 in 256).
    for (let i = 0; i < 4096 && token === ''; i += 1) {
      const signed = await new SignJWT({ ...stub.idTokenClaims(), nonce: 'n-ps' })
        .setProtectedHeader({ alg: 'PS256', kid: signer.kid })
        .sign(signer.privateKey);
      const [head, body, signature] = signed.split('.') as [string, string, string];
      const bytes = Buffer.from(signature, 'base64url');
      if (bytes[0] === 0) token = `${head}.${body}.${bytes.subarray(1).toString('base64url')}`;
    }
    expect(token).not.toBe('');
    serveIdToken(token);
    const client = clientFor(stub, { idTokenSigningAlgorithms: ['PS256'] });
    await refusedWith(login(client, stub, 'n-ps'), 'id_token_signature_invalid');
  });

  it('refuses an RS256 signature in non-canonical base64url (stray bits in its last character)', async () => {
    stub.nonce = 'n-b64';
    const token = await stub.idToken();
    const signature = token.slice(token.lastIndexOf('.') + 1);
    // 256 bytes: the last character carries 2 bits and 4 unused ones.
    const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const changed = last[last.indexOf(signature.at(-1)!) ^ 1]!;
    expect(Buffer.from(signature.slice(0, -1) + changed, 'base64url')).toEqual(Buffer.from(signature, 'base64url'));
    serveIdToken(token.slice(0, -1) + changed);
    await refusedWith(login(clientFor(stub), stub, 'n-b64'), 'id_token_signature_invalid');
  });

  it('accepts the same token with its canonical signature (the refusals are not wholesale)', async () => {
    stub.nonce = 'n-ok';
    serveIdToken(await stub.idToken());
    await expect(login(clientFor(stub), stub, 'n-ok')).resolves.toMatchObject({ sub: stub.sub });
  });
});

describe('the userinfo block key opens only attributes of its own alg', () => {
  async function userinfo() {
    const client = clientFor(stub);
    const { sub, accessToken } = await login(client, stub);
    return client.userinfo({ sub, accessToken });
  }

  it('refuses an attribute wrapped with A128KW under a block key for A128GCMKW', async () => {
    stub.userinfo = { ...stub.userinfo, blockKeyAlg: 'A128GCMKW', dataAlg: 'A128KW', dataEnc: 'A128GCM' };
    await refusedWith(userinfo(), 'userinfo_alg_not_allowed');
  });

  it('refuses an attribute wrapped with A128GCMKW under a block key for A128KW', async () => {
    stub.userinfo = { ...stub.userinfo, blockKeyAlg: 'A128KW', dataAlg: 'A128GCMKW', dataEnc: 'A128GCM' };
    await refusedWith(userinfo(), 'userinfo_alg_not_allowed');
  });

  it.each([
    ['A128KW', 'A128KW', 'A128GCM'],
    ['A128GCMKW', 'A128GCMKW', 'A256GCM'],
    ['A128GCM', 'dir', 'A128GCM'],
  ])('opens attributes of the alg the block key names (%s: %s + %s)', async (blockKeyAlg, dataAlg, dataEnc) => {
    stub.userinfo = { ...stub.userinfo, blockKeyAlg, dataAlg, dataEnc };
    await expect(userinfo()).resolves.toEqual({ sub: stub.sub, data: original.data });
  });
});

// The private key of e = 1 is a JWK: createPrivateKey must take it (else the construction test proves nothing).
it('the e = 1 private key is one node:crypto imports', () => {
  expect(createPrivateKey({ key: exponentOnePrivateJwk(), format: 'jwk' }).asymmetricKeyType).toBe('rsa');
});
