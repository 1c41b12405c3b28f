/**
 * Several decryption keys: `privateKey` takes a list (PEM or JWK), userinfo picks the key the
 * JWE `kid` names (its JWK kid or RFC 7638 thumbprint), else tries each; and the three-step
 * rotation of the README, against the provider over HTTP, with logins succeeding at every step.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { CompactEncrypt, exportJWK, generateSecret } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { decryptUserinfo } from '../../src/client/userinfo-crypto.js';
import type { IdError } from '../../src/errors.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { importRsaPrivateKeyOrJwk, rsaThumbprint, type RsaPrivateJwk } from '../../src/keys.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { signIn } from '../faults/support.js';
import { testKeyPair } from '../helpers/keys.js';
import { startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

const oldKey = testKeyPair('rp');
const newKey = testKeyPair('rp-next');
const newJwk: RsaPrivateJwk = {
  ...(createPrivateKey(newKey.privateKeyPem).export({ format: 'jwk' }) as RsaPrivateJwk),
  kid: 'rp-2027',
};
const pub = (pair: typeof oldKey) => createPublicKey(pair.publicKeyPem);

/** A userinfo payload as the service builds it, the block key encrypted to `to`, with `kid` in its header. */
async function payload(
  to: typeof oldKey,
  kid: string | undefined,
): Promise<{ key: string; data: Record<string, string> }> {
  const block = await generateSecret('A128GCM', { extractable: true });
  const enc = new TextEncoder();
  const key = await new CompactEncrypt(enc.encode(JSON.stringify(await exportJWK(block))))
    .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', ...(kid === undefined ? {} : { kid }) })
    .encrypt(pub(to));
  const name = await new CompactEncrypt(enc.encode('TAN AH KOW'))
    .setProtectedHeader({ alg: 'dir', enc: 'A128GCM' })
    .encrypt(block);
  return { key, data: { 'profile.name': name } };
}

describe('privateKey as a list', () => {
  const keys = [importRsaPrivateKeyOrJwk(oldKey.privateKeyPkcs1Pem), importRsaPrivateKeyOrJwk(newJwk)];

  it('imports PEM (PKCS#1 or PKCS#8) and JWK, keeping the JWK kid and each RFC 7638 thumbprint', () => {
    expect(keys[0]?.kid).toBeUndefined();
    expect(keys[1]?.kid).toBe('rp-2027');
    expect(keys[0]?.thumbprint).toBe(rsaThumbprint(pub(oldKey)));
    expect(keys[0]?.thumbprint).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    ['the JWK kid', async () => payload(newKey, 'rp-2027')],
    ['the thumbprint', async () => payload(oldKey, rsaThumbprint(pub(oldKey)))],
    ['no kid (tries each)', async () => payload(newKey, undefined)],
    ['an unknown kid (tries each)', async () => payload(newKey, 'someone-else')],
  ])('decrypts a block key named by %s', async (_how, make) => {
    const { key, data } = await make();
    await expect(decryptUserinfo(keys, key, data)).resolves.toEqual({ 'profile.name': 'TAN AH KOW' });
  });

  it('uses only the named key: a kid naming the old key while the block key is for the new one fails', async () => {
    const { key, data } = await payload(newKey, rsaThumbprint(pub(oldKey)));
    await expect(decryptUserinfo(keys, key, data)).rejects.toMatchObject({ code: 'userinfo_key_decrypt_failed' });
  });

  it('says none of the keys decrypts when the block key is for a key not in the list', async () => {
    const { key, data } = await payload(testKeyPair('stranger'), undefined);
    const err = (await decryptUserinfo(keys, key, data).catch((e: unknown) => e)) as IdError;
    expect(err.code).toBe('userinfo_key_decrypt_failed');
    expect(err.message).toMatch(/any of the 2 privateKey keys/);
  });

  it('refuses an empty list or an unusable entry, naming its index and never echoing it', () => {
    const base = { clientId: 'c', clientSecret: 's', hostname: 'https://id.example' };
    expect(() => new IdClient({ ...base, privateKey: [] })).toThrow(
      /privateKey must be a PEM string or JWK, or a non-empty array/,
    );
    const broken = oldKey.privateKeyPem.replace('MII', 'XXX');
    let message = '';
    try {
      new IdClient({ ...base, privateKey: [newJwk, broken] });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/IdClient: privateKey\[1\]/);
    expect(message).not.toContain('XXX');
    const { d: _d, ...publicOnly } = newJwk;
    expect(() => new IdClient({ ...base, privateKey: [publicOnly as RsaPrivateJwk] })).toThrow(
      /privateKey\[0\] must be an RSA private JWK/,
    );
  });
});

describe('NdIdStrategy with several keys', () => {
  it('accepts a key list (PEM and JWK) and hands it to the client it builds; an empty list is refused', () => {
    const fields = {
      hostname: 'https://id.example',
      clientId: 'c',
      clientSecret: 's',
      callbackURL: 'https://rp.example/cb',
    };
    expect(() => new NdIdStrategy({ ...fields, privateKey: [oldKey.privateKeyPem, newJwk] })).not.toThrow();
    expect(() => new NdIdStrategy({ ...fields, privateKey: [] })).toThrow(
      /privateKey must be a PEM string or JWK, or a non-empty array/,
    );
  });
});

describe('rotating the decryption key against the provider (README, three steps)', () => {
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

  it('keeps logins succeeding while the key changes', async () => {
    const before = clientWith(oldKey.privateKeyPem);
    expect((await signIn(before, started)).data['profile.name']).toBeTruthy();

    // 1. Add the new key beside the old one (deploy): the service still encrypts to the old key.
    const during = clientWith([oldKey.privateKeyPem, newJwk]);
    const first = await Promise.all([signIn(during, started), signIn(before, started)]);
    expect(first.map((r) => typeof r.data['profile.name'])).toEqual(['string', 'string']);

    // 2. Register the new public key with the service: it now encrypts to the new key.
    started.provider.setClientKeys(TEST_CLIENT.clientId, [{ key: newKey.publicKeyPem, kid: 'rp-2027' }]);
    expect((await signIn(during, started)).data['profile.name']).toBeTruthy();
    // An instance still holding only the old key cannot read userinfo any more: why step 1 comes first.
    await expect(signIn(before, started)).rejects.toMatchObject({ code: 'userinfo_key_decrypt_failed' });

    // 3. Drop the old key (deploy).
    const after = clientWith(newJwk);
    const last = await Promise.all([signIn(after, started), signIn(during, started)]);
    expect(last.map((r) => typeof r.data['profile.name'])).toEqual(['string', 'string']);
    for (const c of [before, during, after]) c.close();
  });
});
