/**
 * A runtime whose node:crypto `privateDecrypt` refuses a KeyObject (workerd's `nodejs_compat`
 * before 2026-11) still decrypts userinfo: the key is passed again as PEM. And when the block key
 * really cannot be decrypted, the error node:crypto gave is kept as the `cause` of
 * `userinfo_key_decrypt_failed`, so a log can tell a wrong key from a refused argument.
 * Over real HTTP against the stub provider.
 */
import { KeyObject } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { pemFallbackInUse } from '../../src/jose/jwe-decrypt.js';
import { testKeyPair } from '../helpers/keys.js';
import { clientFor, login, startStubProvider, type StubProvider } from './support.js';

/** When set, privateDecrypt throws as an older workerd does for a KeyObject argument. */
const runtime = vi.hoisted(() => ({ refuseKeyObject: false, calls: [] as string[] }));

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  const privateDecrypt: typeof original.privateDecrypt = (key, buffer) => {
    const given = (key as { key?: unknown }).key;
    const isKeyObject = given instanceof original.KeyObject;
    runtime.calls.push(isKeyObject ? 'KeyObject' : typeof given);
    if (runtime.refuseKeyObject && isKeyObject) {
      throw Object.assign(new TypeError('The "key" argument must be of type string or an instance of Buffer'), {
        code: 'ERR_INVALID_ARG_TYPE',
      });
    }
    return original.privateDecrypt(key, buffer);
  };
  return { ...original, default: { ...original, privateDecrypt }, privateDecrypt };
});

let stub: StubProvider;

beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(() => stub.close());
beforeEach(() => {
  runtime.refuseKeyObject = false;
  runtime.calls = [];
  pemFallbackInUse(true);
});

async function signIn(privateKey = stub.rpPrivateKeyPem) {
  const client = clientFor(stub, { privateKey });
  const { sub, accessToken } = await login(client, stub);
  return client.userinfo({ sub, accessToken });
}

describe('privateDecrypt and the form of the key', () => {
  it('passes a KeyObject where the runtime takes one (no PEM parsed per login)', async () => {
    const { data } = await signIn();
    expect(Object.keys(data).length).toBeGreaterThan(0);
    expect(runtime.calls).toEqual(['KeyObject']);
    expect(pemFallbackInUse()).toBe(false);
  });

  it('decrypts the block key with a PEM when the runtime refuses a KeyObject, and keeps to the PEM after', async () => {
    runtime.refuseKeyObject = true;
    const first = await signIn();
    expect(Object.keys(first.data).length).toBeGreaterThan(0);
    expect(runtime.calls).toEqual(['KeyObject', 'string']);
    await signIn();
    expect(runtime.calls).toEqual(['KeyObject', 'string', 'string']);
  });

  it('keeps the runtime error as the cause of userinfo_key_decrypt_failed (a wrong key: OpenSSL says so)', async () => {
    const err = (await signIn(testKeyPair('someone-else').privateKeyPem).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error & { code?: string; cause?: unknown };
    expect(err.code).toBe('userinfo_key_decrypt_failed');
    expect(String((err.cause as { code?: unknown }).code)).toMatch(/^ERR_OSSL_RSA/);
    expect(err.cause).not.toBeInstanceOf(KeyObject);
  });
});
