/**
 * Userinfo: sub binding, decryption of the block key and attributes, algorithm allowlists.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CompactEncrypt, generateKeyPair } from 'jose';
import type { IdClient } from '../../src/client/id-client.js';
import { IdError } from '../../src/errors.js';
import { importRsaPublicKey } from '../../src/keys.js';
import { STUB_PATHS, encryptUserinfo, sendJson } from '../helpers/stub-provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { clientFor, login, startStubProvider, type StubProvider } from './support.js';

let stub: StubProvider;
let client: IdClient;
let session: { sub: string; accessToken: string };
const defaults = () => ({
  ...stub.userinfo,
  sub: undefined,
  keyHeader: undefined,
  dataHeader: undefined,
  recipient: undefined,
});
let original: StubProvider['userinfo'];

beforeAll(async () => {
  stub = await startStubProvider();
  original = { ...stub.userinfo, data: { ...stub.userinfo.data } };
  client = clientFor(stub);
  const { sub, accessToken } = await login(client, stub);
  session = { sub, accessToken };
});
afterAll(() => stub.close());
afterEach(() => {
  stub.userinfo = { ...original, data: { ...original.data } };
  stub.override(STUB_PATHS.userinfo, undefined);
});

/** Serve a userinfo body computed by `make`. */
function serve(make: () => Promise<unknown> | unknown): void {
  stub.override(STUB_PATHS.userinfo, async (_req, res) => sendJson(res, 200, await make()));
}

function rpPublicKey() {
  return importRsaPublicKey(stub.rp.publicKeyPem);
}

async function refusal(code: string): Promise<Error> {
  const err = (await client.userinfo(session).then(
    () => undefined,
    (e: unknown) => e,
  )) as Error & { code?: string };
  expect(err).toBeInstanceOf(Error);
  expect(err.code).toBe(code);
  for (const value of Object.values(original.data)) expect(err.message).not.toContain(value);
  return err;
}

describe('userinfo answer', () => {
  it('returns the three attributes decrypted', async () => {
    await expect(client.userinfo(session)).resolves.toEqual({ sub: stub.sub, data: original.data });
  });

  it('refuses a userinfo sub that differs from the ID token sub', async () => {
    stub.userinfo.sub = 'someone-else';
    await refusal('userinfo_sub_mismatch');
  });

  it('refuses a body without key while data is present', async () => {
    serve(async () => ({ ...(await stub.userinfoBody()), key: undefined }));
    await refusal('userinfo_malformed');
  });

  it('refuses an attribute value that is not a string', async () => {
    serve(async () => {
      const body = await stub.userinfoBody();
      return { ...body, data: { ...body.data, 'profile.name': 42 } };
    });
    await refusal('userinfo_malformed');
  });
});

describe('userinfo access token', () => {
  it.each([
    ['a line break', 'at-1\r\nX-Injected: 1'],
    ['a non-ASCII letter', 'at-caf\u00e9'],
    ['a character beyond Latin-1', 'at-\u0100'],
    ['a space', 'at 1'],
    ['padding in the middle', 'at=1'],
  ])('refuses an access token with %s without sending it', async (_what, accessToken) => {
    const before = stub.requests.length;
    const err = await client.userinfo({ sub: session.sub, accessToken }).then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(err).toBeInstanceOf(IdError);
    expect(err!.code).toBe('access_token_invalid');
    expect(err!.message).not.toContain(accessToken);
    expect(stub.requests.length).toBe(before);
  });

  it('sends an access token using every b64token character unchanged', async () => {
    const accessToken = 'AZaz09-._~+/==';
    await client.userinfo({ sub: session.sub, accessToken });
    expect(stub.requests.at(-1)!.headers.authorization).toBe(`Bearer ${accessToken}`);
  });
});

describe('userinfo decryption failures', () => {
  it('refuses a tampered attribute JWE', async () => {
    serve(async () => {
      const body = await stub.userinfoBody();
      const parts = body.data['profile.name']!.split('.');
      const ct = Buffer.from(parts[3]!, 'base64url');
      ct[0] = ct[0]! ^ 0x01;
      parts[3] = ct.toString('base64url');
      return { ...body, data: { ...body.data, 'profile.name': parts.join('.') } };
    });
    const err = await refusal('userinfo_data_decrypt_failed');
    expect(err.message).toContain('profile.name');
  });

  it('refuses an attribute JWE encrypted with another block key', async () => {
    serve(async () => {
      const body = await stub.userinfoBody();
      const other = await encryptUserinfo(stub.userinfo, rpPublicKey(), stub.sub);
      return { ...body, data: { ...body.data, 'profile.nric_number': other.data['profile.nric_number'] } };
    });
    await refusal('userinfo_data_decrypt_failed');
  });

  it('refuses a block key JWE using RSA1_5', async () => {
    // jose will not encrypt with RSA1_5 any more than it decrypts it, so the header is enough.
    serve(async () => {
      const body = await stub.userinfoBody();
      const parts = body.key.split('.');
      parts[0] = Buffer.from(JSON.stringify({ alg: 'RSA1_5', enc: 'A256GCM' })).toString('base64url');
      return { ...body, key: parts.join('.') };
    });
    const err = await refusal('userinfo_alg_not_allowed');
    expect(err.message).toContain('RSA1_5');
  });

  it('refuses a block key JWE that uses ECDH-ES', async () => {
    const { publicKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256' });
    stub.userinfo.keyAlg = 'ECDH-ES';
    stub.userinfo.recipient = publicKey as never;
    await refusal('userinfo_alg_not_allowed');
  });

  it('refuses an attribute JWE that uses PBES2', async () => {
    serve(async () => {
      const body = await stub.userinfoBody();
      const pbes = await new CompactEncrypt(new TextEncoder().encode('x'))
        .setProtectedHeader({ alg: 'PBES2-HS256+A128KW', enc: 'A128GCM' })
        .encrypt(new TextEncoder().encode('password'));
      return { ...body, data: { ...body.data, 'profile.name': pbes } };
    });
    await refusal('userinfo_alg_not_allowed');
  });

  it('refuses a compressed (zip) block key JWE before decrypting it', async () => {
    // jose cannot produce a zip JWE, so the protected header is rewritten: the refusal must
    // come from the header check, before any decryption.
    serve(async () => {
      const body = await stub.userinfoBody();
      const parts = body.key.split('.');
      parts[0] = Buffer.from(JSON.stringify({ alg: 'RSA-OAEP-256', enc: 'A256GCM', zip: 'DEF' })).toString('base64url');
      return { ...body, key: parts.join('.') };
    });
    const err = await refusal('userinfo_alg_not_allowed');
    expect(err.message).toMatch(/zip/);
  });

  it('refuses a compressed (zip) attribute JWE', async () => {
    serve(async () => {
      const body = await stub.userinfoBody();
      const parts = body.data['profile.name']!.split('.');
      parts[0] = Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A128GCM', zip: 'DEF' })).toString('base64url');
      return { ...body, data: { ...body.data, 'profile.name': parts.join('.') } };
    });
    await refusal('userinfo_alg_not_allowed');
  });

  it('says the private key is wrong when the block key was encrypted to another key', async () => {
    stub.userinfo.recipient = importRsaPublicKey(testKeyPair('someone-else').publicKeyPem);
    const err = await refusal('userinfo_key_decrypt_failed');
    expect(err.message).toMatch(/wrong private key/);
  });

  it('says the private key is wrong when the client holds another private key', async () => {
    const other = clientFor(stub, { privateKey: testKeyPair('someone-else').privateKeyPem });
    await expect(other.userinfo(session)).rejects.toMatchObject({ code: 'userinfo_key_decrypt_failed' });
  });

  it('refuses a block key that is not an oct JWK', async () => {
    serve(async () => {
      const body = await stub.userinfoBody();
      const key = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ kty: 'RSA', n: 'x', e: 'AQAB' })))
        .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM' })
        .encrypt(rpPublicKey());
      return { ...body, key };
    });
    await refusal('userinfo_key_invalid');
  });
});

describe('userinfo algorithm families', () => {
  const encs = ['A128GCM', 'A192GCM', 'A256GCM', 'A128CBC-HS256', 'A192CBC-HS384', 'A256CBC-HS512'];

  it.each([['RSA-OAEP-256'], ['RSA-OAEP']])('decrypts a block key wrapped with %s', async (keyAlg) => {
    for (const keyEnc of encs) {
      stub.userinfo = { ...defaults(), data: original.data, keyAlg, keyEnc };
      await expect(client.userinfo(session), `${keyAlg} + ${keyEnc}`).resolves.toEqual({
        sub: stub.sub,
        data: original.data,
      });
    }
  });

  it.each([['dir'], ['A128KW'], ['A192KW'], ['A256KW'], ['A128GCMKW'], ['A192GCMKW'], ['A256GCMKW']])(
    'decrypts attributes encrypted with %s under every allowed content encryption',
    async (dataAlg) => {
      for (const dataEnc of encs) {
        stub.userinfo = { ...defaults(), data: original.data, dataAlg, dataEnc };
        await expect(client.userinfo(session), `${dataAlg} + ${dataEnc}`).resolves.toEqual({
          sub: stub.sub,
          data: original.data,
        });
      }
    },
  );
});
