/**
 * The FAPI 2.0 building blocks of the client, on their own: client assertions, DPoP proofs and
 * nonces, and the decryption of encrypted ID tokens (only the pinned algorithms). The same pieces
 * run over HTTP against the provider in test/e2e/fapi2-login.test.ts.
 */
import { generateKeyPairSync } from 'node:crypto';
import { CompactEncrypt, calculateJwkThumbprint, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import { CLIENT_ASSERTION_LIFETIME_S, createClientAssertion } from '../../src/client/client-assertion.js';
import {
  createDpopProof,
  DpopNonces,
  generateDpopKey,
  isNonceChallenge,
  restoreDpopKey,
} from '../../src/client/dpop.js';
import { importIdTokenDecryptionKeys, importSigningKeys } from '../../src/client/fapi-keys.js';
import { checkFapiTokenResponse, decryptIdToken, isCompactJwe } from '../../src/client/id-token-jwe.js';
import { checkResponseIssuer } from '../../src/client/authorization-response.js';
import { IdError } from '../../src/errors.js';
import { testKeyPair } from '../helpers/keys.js';

const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const now = Date.parse('2027-03-01T12:00:00Z');
const clock = (): number => now;

describe('private_key_jwt client assertions', () => {
  it('iss = sub = client id, aud = issuer, exp 60 s after iat, a fresh jti each time, signed ES256 with the key kid', async () => {
    const [key] = importSigningKeys(ec.privateKey, 'k');
    const one = await createClientAssertion(key!, 'fapi-app', 'https://id.example/v2', clock);
    const two = await createClientAssertion(key!, 'fapi-app', 'https://id.example/v2', clock);
    const { payload, protectedHeader } = await jwtVerify(one, ec.publicKey, {
      issuer: 'fapi-app',
      subject: 'fapi-app',
      audience: 'https://id.example/v2',
      currentDate: new Date(now),
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', kid: key!.kid });
    expect(payload.aud).toBe('https://id.example/v2'); // a string, not an array
    expect(payload.exp! - payload.iat!).toBe(CLIENT_ASSERTION_LIFETIME_S);
    expect(payload.iat).toBe(now / 1000);
    const other = (await jwtVerify(two, ec.publicKey, { currentDate: new Date(now) })).payload;
    expect(other.jti).not.toBe(payload.jti);
  });

  it('an RSA assertion key signs PS256', async () => {
    const [key] = importSigningKeys(testKeyPair('rp').privateKeyPem, 'k');
    const token = await createClientAssertion(key!, 'c', 'https://id.example/v2', clock);
    expect(decodeProtectedHeader(token).alg).toBe('PS256');
  });
});

describe('DPoP proofs', () => {
  it('typ dpop+jwt, the public jwk only, htm, htu without query, iat, a fresh jti; nonce and ath when given', async () => {
    const { key, stored } = await generateDpopKey();
    const url = new URL('https://id.example/v2/oauth/userinfo?x=1#f');
    const proof = await createDpopProof(key, {
      htm: 'GET',
      url,
      clock,
      nonce: 'n-1',
      accessToken: 'access-token-value',
    });
    const header = decodeProtectedHeader(proof);
    expect(header).toMatchObject({ typ: 'dpop+jwt', alg: 'ES256' });
    expect(Object.keys(header.jwk ?? {}).sort()).toEqual(['crv', 'kty', 'x', 'y']);
    const { payload } = await jwtVerify<JWTPayload & Record<string, string>>(proof, header.jwk as never, {
      typ: 'dpop+jwt',
      currentDate: new Date(now),
    });
    expect(payload).toMatchObject({
      htm: 'GET',
      htu: 'https://id.example/v2/oauth/userinfo',
      nonce: 'n-1',
      iat: now / 1000,
    });
    // ath = BASE64URL(SHA-256(access token)), RFC 9449 4.2
    const { createHash } = await import('node:crypto');
    expect(payload.ath).toBe(createHash('sha256').update('access-token-value').digest('base64url'));
    const again = await createDpopProof(key, { htm: 'POST', url, clock });
    const second = (await jwtVerify<Record<string, string>>(again, header.jwk as never, { currentDate: new Date(now) }))
      .payload;
    expect(second.jti).not.toBe(payload.jti);
    expect(second).not.toHaveProperty('ath');
    expect(second).not.toHaveProperty('nonce');
    // The kept form restores the same key: same thumbprint (the dpop_jkt the code is bound to).
    const restored = await restoreDpopKey(stored);
    expect(restored.jkt).toBe(key.jkt);
    expect(key.jkt).toBe(await calculateJwkThumbprint(header.jwk as never));
  });

  it('remembers the last DPoP-Nonce per server origin, ignoring values that are not nonces', () => {
    const nonces = new DpopNonces();
    const as = new URL('https://id.example/v2/oauth/token');
    expect(nonces.for(as)).toBeUndefined();
    nonces.remember(as, 'abc');
    expect(nonces.for(new URL('https://id.example/v2/oauth/userinfo'))).toBe('abc');
    nonces.remember(as, 'has space');
    nonces.remember(as, 'x'.repeat(513));
    expect(nonces.for(as)).toBe('abc');
    expect(nonces.for(new URL('https://other.example/'))).toBeUndefined();
  });

  it('recognises a use_dpop_nonce challenge in an OAuth error body or a DPoP WWW-Authenticate header, and nothing else', () => {
    expect(isNonceChallenge(400, 'use_dpop_nonce', undefined)).toBe(true);
    expect(isNonceChallenge(401, undefined, 'DPoP error="use_dpop_nonce", error_description="fresh nonce"')).toBe(true);
    expect(isNonceChallenge(401, undefined, 'Bearer error="use_dpop_nonce"')).toBe(false);
    expect(isNonceChallenge(400, 'invalid_dpop_proof', undefined)).toBe(false);
    expect(isNonceChallenge(500, 'use_dpop_nonce', undefined)).toBe(false);
  });
});

describe('encrypted ID tokens', () => {
  const signed = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
  const ecEnc = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const rsa = testKeyPair('rp');

  async function encrypt(alg: string, enc: string, key: unknown, kid?: string): Promise<string> {
    return new CompactEncrypt(new TextEncoder().encode(signed))
      .setProtectedHeader({ alg, enc, cty: 'JWT', ...(kid === undefined ? {} : { kid }) })
      .encrypt(key as never);
  }

  it('decrypts ECDH-ES+A256KW and RSA-OAEP-256 with A256GCM to the signed token inside', async () => {
    const ecKeys = importIdTokenDecryptionKeys(ecEnc.privateKey, 'k');
    const jwe = await encrypt('ECDH-ES+A256KW', 'A256GCM', ecEnc.publicKey, ecKeys[0]!.kid);
    expect(isCompactJwe(jwe)).toBe(true);
    expect(isCompactJwe(signed)).toBe(false);
    expect(await decryptIdToken(jwe, ecKeys)).toBe(signed);
    const { createPublicKey } = await import('node:crypto');
    const rsaKeys = importIdTokenDecryptionKeys(rsa.privateKeyPem, 'k');
    expect(
      await decryptIdToken(await encrypt('RSA-OAEP-256', 'A256GCM', createPublicKey(rsa.publicKeyPem)), rsaKeys),
    ).toBe(signed);
  });

  it.each([
    ['RSA-OAEP-384', 'A256GCM'],
    ['RSA-OAEP', 'A256GCM'],
    ['RSA-OAEP-512', 'A128CBC-HS256'],
  ])('refuses %s with %s (id_token_jwe_alg_not_allowed)', async (alg, enc) => {
    const { createPublicKey } = await import('node:crypto');
    const jwe = await encrypt(alg, enc, createPublicKey(rsa.publicKeyPem));
    await expect(decryptIdToken(jwe, importIdTokenDecryptionKeys(rsa.privateKeyPem, 'k'))).rejects.toMatchObject({
      code: 'id_token_jwe_alg_not_allowed',
    });
  });

  it.each([
    ['RSA-OAEP-256', 'A128GCM'],
    ['RSA-OAEP-256', 'A256CBC-HS512'],
    ['ECDH-ES', 'A256GCM'],
    ['ECDH-ES+A128KW', 'A128CBC-HS256'],
    ['ECDH-ES+A192KW', 'A192CBC-HS384'],
    ['ECDH-ES+A256KW', 'A256CBC-HS512'],
  ])('decrypts %s with %s (FAPI 2.0 providers use these)', async (alg, enc) => {
    const { createPublicKey } = await import('node:crypto');
    const rsaAlg = alg.startsWith('RSA');
    const jwe = await encrypt(alg, enc, rsaAlg ? createPublicKey(rsa.publicKeyPem) : ecEnc.publicKey);
    const keys = importIdTokenDecryptionKeys(rsaAlg ? rsa.privateKeyPem : ecEnc.privateKey, 'k');
    expect(await decryptIdToken(jwe, keys)).toBe(signed);
    // and a caller's narrower allowlist refuses what it leaves out
    await expect(decryptIdToken(jwe, keys, { encryptions: ['A192GCM'] })).rejects.toMatchObject({
      code: 'id_token_jwe_alg_not_allowed',
    });
  });

  it('a token encrypted to another key is id_token_decrypt_failed; a malformed one id_token_malformed', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwe = await encrypt('ECDH-ES+A256KW', 'A256GCM', other.publicKey);
    await expect(decryptIdToken(jwe, importIdTokenDecryptionKeys(ecEnc.privateKey, 'k'))).rejects.toMatchObject({
      code: 'id_token_decrypt_failed',
    });
    await expect(
      decryptIdToken('a.b.c.d.e!', importIdTokenDecryptionKeys(ecEnc.privateKey, 'k')),
    ).rejects.toMatchObject({ code: 'id_token_malformed' });
  });
});

describe('the authorization response iss', () => {
  it('is compared when present, required when advertised, and not required otherwise', () => {
    expect(() => checkResponseIssuer('https://id.example/v2', 'https://id.example/v2', true)).not.toThrow();
    expect(() => checkResponseIssuer(undefined, 'https://id.example/v2', false)).not.toThrow();
    const missing = (() => {
      try {
        checkResponseIssuer(undefined, 'https://id.example/v2', true);
      } catch (e) {
        return e;
      }
    })();
    expect(missing).toBeInstanceOf(IdError);
    expect((missing as IdError).code).toBe('authorization_response_iss_missing');
    expect(() => checkResponseIssuer('https://id.example/v2/', 'https://id.example/v2', false)).toThrow(
      /another issuer/,
    );
    expect(() => checkResponseIssuer(['https://id.example/v2'], 'https://id.example/v2', false)).toThrow(
      /another issuer/,
    );
  });
});

describe('the FAPI 2.0 token response (unit: the provider never answers a FAPI client otherwise)', () => {
  const jwe = 'aGVhZGVy..aXY.Y2lwaGVy.dGFn';
  it('accepts DPoP in any letter case with an encrypted ID token', () => {
    for (const type of ['DPoP', 'dpop', 'DPOP']) expect(() => checkFapiTokenResponse(type, jwe)).not.toThrow();
  });
  it('refuses a Bearer (or missing) token type: token_type_invalid', () => {
    for (const type of ['Bearer', 'bearer', undefined, 'DPoP ']) {
      expect(() => checkFapiTokenResponse(type, jwe)).toThrow(expect.objectContaining({ code: 'token_type_invalid' }));
    }
  });
  it('refuses a signed but unencrypted ID token: id_token_not_encrypted', () => {
    expect(() => checkFapiTokenResponse('DPoP', 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln')).toThrow(
      expect.objectContaining({ code: 'id_token_not_encrypted' }),
    );
  });
});
