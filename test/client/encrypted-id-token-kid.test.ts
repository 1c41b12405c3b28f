/**
 * An encrypted ID token in the base profile whose header `kid` is not the RFC 7638 thumbprint
 * of the app's key (as Glewlwyd writes it: a hash of the key's DER), over real HTTP: the client
 * tries each of its keys that fits the algorithm, as the userinfo path does, and a private JWK's
 * own `kid` names its key.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CompactEncrypt } from 'jose';
import { STUB_PATHS } from '../helpers/stub-provider.js';
import { clientFor, login, startStubProvider, type StubProvider } from './support.js';

let stub: StubProvider;

beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(() => stub.close());
afterEach(() => {
  stub.nonce = undefined;
  stub.override(STUB_PATHS.token, undefined);
});

/** The token endpoint answers with the stub's signed ID token encrypted to `recipient`, the header naming `kid`. */
function serveEncrypted(recipientPem: string, kid: string | undefined): void {
  stub.override(STUB_PATHS.token, async (_req, res) => {
    const signed = await stub.idToken();
    const jwe = await new CompactEncrypt(new TextEncoder().encode(signed))
      .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT', ...(kid === undefined ? {} : { kid }) })
      .encrypt(createPublicKey(recipientPem));
    const body = JSON.stringify({ access_token: stub.accessToken, id_token: jwe, token_type: 'Bearer' });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(body);
  });
}

describe('encrypted ID token in the base profile: the header kid', () => {
  it('decrypts when the kid names none of the keys (a hash of the DER, not the thumbprint)', async () => {
    serveEncrypted(stub.rp.publicKeyPem, 'b3c1f0c2d5e9a8f7e6d5c4b3a2918070');
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('tries every key that fits when the kid names none: the second of two keys decrypts', async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    });
    serveEncrypted(stub.rp.publicKeyPem, 'not-a-thumbprint');
    const client = clientFor(stub, { privateKey: [String(other), stub.rpPrivateKeyPem] });
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it("honours a private JWK's own kid: the key it names decrypts, listed after another", async () => {
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const own = { ...createPrivateKey(stub.rpPrivateKeyPem).export({ format: 'jwk' }), kid: 'app-enc-2026' };
    serveEncrypted(stub.rp.publicKeyPem, 'app-enc-2026');
    const client = clientFor(stub, {
      privateKey: [{ ...other, kid: 'app-enc-2025' }, own] as unknown as string[],
    });
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('tries only the key a kid names: a token to the first key, naming the second by its own kid, is refused', async () => {
    const second = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    const first = createPrivateKey(stub.rpPrivateKeyPem).export({ format: 'jwk' });
    serveEncrypted(stub.rp.publicKeyPem, 'app-enc-2027');
    const client = clientFor(stub, { privateKey: [first, { ...second, kid: 'app-enc-2027' }] as unknown as string[] });
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_decrypt_failed' });
  });

  it('still refuses a token encrypted to a key the app does not hold: id_token_decrypt_failed', async () => {
    const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({
      format: 'pem',
      type: 'spki',
    });
    serveEncrypted(String(stranger), 'whatever');
    await expect(login(clientFor(stub), stub)).rejects.toMatchObject({ code: 'id_token_decrypt_failed' });
  });
});
