/**
 * Every ID-token rule, each shown refusing its attack with its own code, over real HTTP.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT, UnsecuredJWT } from 'jose';
import { isIdError, type IdErrorCode } from '../../src/errors.js';
import { clientFor, login, movableClock, startStubProvider, type StubProvider } from './support.js';
import { STUB_PATHS } from '../helpers/stub-provider.js';

let stub: StubProvider;
const clock = movableClock();

beforeAll(async () => {
  stub = await startStubProvider({ clock: clock.now });
});
afterAll(() => stub.close());
afterEach(() => {
  stub.claims = {};
  stub.header = {};
  stub.nonce = undefined;
  stub.override(STUB_PATHS.token, undefined);
});

async function refusedWith(promise: Promise<unknown>, code: IdErrorCode): Promise<Error> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected IdError ${code}`).toBeInstanceOf(Error);
  expect((err as { code?: string }).code).toBe(code);
  expect(isIdError(err, code)).toBe(true);
  // never leak token material
  expect((err as Error).message).not.toContain(stub.accessToken);
  expect((err as Error).message).not.toMatch(/eyJ/);
  return err as Error;
}

describe('ID token: algorithm', () => {
  it('refuses alg "none" (an unsigned token)', async () => {
    const now = Math.floor(clock.now() / 1000);
    const token = new UnsecuredJWT({ ...stub.idTokenClaims(), iat: now, exp: now + 300 }).encode();
    stub.serveTokens({ access_token: stub.accessToken, id_token: token });
    await refusedWith(login(clientFor(stub), stub, null), 'id_token_alg_not_allowed');
  });

  it('refuses HS256 keyed with the bytes of the provider public key (key confusion)', async () => {
    const { createPublicKey } = await import('node:crypto');
    const pem = createPublicKey(stub.keys[0]!.privateKey).export({ format: 'pem', type: 'spki' });
    const token = await new SignJWT(stub.idTokenClaims())
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(new Uint8Array(Buffer.from(pem)));
    stub.serveTokens({ access_token: stub.accessToken, id_token: token });
    await refusedWith(login(clientFor(stub), stub, null), 'id_token_alg_not_allowed');
  });

  it('refuses PS256 and other algorithms than RS256', async () => {
    stub.header = { alg: 'PS256' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_alg_not_allowed');
  });
});

describe('ID token: signature', () => {
  it('refuses a token with one flipped signature byte', async () => {
    const good = await stub.idToken();
    const [h, p, s] = good.split('.') as [string, string, string];
    const sig = Buffer.from(s, 'base64url');
    sig[10] = sig[10]! ^ 0x01;
    stub.serveTokens({ access_token: stub.accessToken, id_token: `${h}.${p}.${sig.toString('base64url')}` });
    await refusedWith(login(clientFor(stub), stub, null), 'id_token_signature_invalid');
  });

  it('refuses a token signed by a key the provider does not publish under that kid', async () => {
    const { signingKey } = await import('../helpers/stub-provider.js');
    const forged = await signingKey('k1');
    stub.signWith = forged;
    try {
      await refusedWith(login(clientFor(stub), stub), 'id_token_signature_invalid');
    } finally {
      stub.signWith = undefined;
    }
  });

  it('refuses a payload altered after signing', async () => {
    const good = await stub.idToken();
    const [h, , s] = good.split('.') as [string, string, string];
    const payload = Buffer.from(JSON.stringify({ ...stub.idTokenClaims(), sub: 'someone-else' })).toString('base64url');
    stub.serveTokens({ access_token: stub.accessToken, id_token: `${h}.${payload}.${s}` });
    await refusedWith(login(clientFor(stub), stub, null), 'id_token_signature_invalid');
  });

  it('refuses a token that is not a JWS', async () => {
    stub.serveTokens({ access_token: stub.accessToken, id_token: 'not.a-token' });
    await refusedWith(login(clientFor(stub), stub, null), 'id_token_malformed');
  });

  it('refuses a token with padding or characters outside base64url, even when the signature verifies', async () => {
    const good = await stub.idToken();
    const [h, p, s] = good.split('.') as [string, string, string];
    for (const bad of [`${h}.${p}.${s}=`, `${h}=.${p}.${s}`, `${h}.${p}+.${s}`, ` ${good}`, `${good}\n`]) {
      stub.serveTokens({ access_token: stub.accessToken, id_token: bad });
      await refusedWith(login(clientFor(stub), stub, null), 'id_token_malformed');
    }
  });

  it('refuses a validly signed token that declares a critical JWS extension (crit, b64)', async () => {
    const { sign } = await import('node:crypto');
    const key = stub.keys[0]!;
    for (const extra of [{ crit: ['exp'] }, { b64: false, crit: ['b64'] }, { b64: true }]) {
      const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
      const input = `${part({ alg: 'RS256', typ: 'JWT', kid: key.kid, ...extra })}.${part(stub.idTokenClaims())}`;
      const signature = sign('sha256', Buffer.from(input), key.privateKey).toString('base64url');
      stub.serveTokens({ access_token: stub.accessToken, id_token: `${input}.${signature}` });
      await refusedWith(login(clientFor(stub), stub, null), 'id_token_malformed');
    }
  });

  it('refuses a token response without id_token', async () => {
    stub.serveTokens({ access_token: stub.accessToken });
    await refusedWith(login(clientFor(stub), stub, null), 'id_token_missing');
  });
});

describe('ID token: claims', () => {
  it('refuses a wrong iss', async () => {
    stub.claims = { iss: `${stub.origin}/v1` };
    await refusedWith(login(clientFor(stub), stub), 'id_token_iss_mismatch');
  });

  it('refuses an iss with a trailing slash (exact match only)', async () => {
    stub.claims = { iss: `${stub.issuer}/` };
    await refusedWith(login(clientFor(stub), stub), 'id_token_iss_mismatch');
  });

  it('refuses a wrong aud', async () => {
    stub.claims = { aud: 'another-client' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_aud_mismatch');
  });

  it('refuses an aud array that contains us but has no azp', async () => {
    stub.claims = { aud: [stub.clientId, 'another-client'] };
    await refusedWith(login(clientFor(stub), stub), 'id_token_azp_mismatch');
  });

  it('refuses an aud array whose azp is another client', async () => {
    stub.claims = { aud: [stub.clientId, 'another-client'], azp: 'another-client' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_azp_mismatch');
  });

  it('accepts an aud array with azp equal to our clientId, and a one-element aud array', async () => {
    stub.claims = { aud: [stub.clientId, 'another-client'], azp: stub.clientId };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
    stub.claims = { aud: [stub.clientId] };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('refuses an expired token (exp beyond the clock tolerance)', async () => {
    const now = Math.floor(clock.now() / 1000);
    stub.claims = { iat: now - 600, exp: now - 61 };
    await refusedWith(login(clientFor(stub), stub), 'id_token_expired');
  });

  it('accepts a token expired by less than the clock tolerance', async () => {
    const now = Math.floor(clock.now() / 1000);
    stub.claims = { iat: now - 600, exp: now - 30 };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('refuses an expired token once the injected clock moves past exp', async () => {
    const client = clientFor(stub, { clock: () => clock.now() + 300_000 + 61_000 });
    await refusedWith(login(client, stub), 'id_token_expired');
  });

  it('honours a configured clockTolerance of 0', async () => {
    const now = Math.floor(clock.now() / 1000);
    stub.claims = { exp: now - 1 };
    await refusedWith(login(clientFor(stub, { clockTolerance: 0 }), stub), 'id_token_expired');
  });

  it('refuses iat in the future (beyond the clock tolerance)', async () => {
    const now = Math.floor(clock.now() / 1000);
    stub.claims = { iat: now + 120, exp: now + 600 };
    await refusedWith(login(clientFor(stub), stub), 'id_token_issued_in_future');
  });

  it('refuses an auth_time later than iat beyond the clock tolerance, or not a number, as malformed', async () => {
    const now = Math.floor(clock.now() / 1000);
    stub.claims = { iat: now, auth_time: now + 61 };
    await refusedWith(login(clientFor(stub), stub), 'id_token_malformed');
    stub.claims = { iat: now - 3600, auth_time: now };
    await refusedWith(login(clientFor(stub), stub), 'id_token_malformed');
    stub.claims = { auth_time: 'now' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_malformed');
    stub.claims = { iat: now, auth_time: now + 30 };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
    stub.claims = { iat: now, auth_time: now - 300 };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('refuses nbf in the future', async () => {
    const now = Math.floor(clock.now() / 1000);
    stub.claims = { nbf: now + 600 };
    await refusedWith(login(clientFor(stub), stub), 'id_token_not_yet_valid');
  });

  it.each(['sub', 'iat', 'exp', 'iss', 'aud'])('refuses a token without %s', async (claim) => {
    stub.claims = { [claim]: undefined };
    await refusedWith(login(clientFor(stub), stub), 'id_token_claim_missing');
  });

  it('refuses an empty or non-string sub', async () => {
    stub.claims = { sub: '' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_sub_invalid');
    stub.claims = { sub: 42 };
    await refusedWith(login(clientFor(stub), stub), 'id_token_sub_invalid');
  });

  it('refuses a non-numeric exp', async () => {
    stub.claims = { exp: 'tomorrow' };
    await refusedWith(login(clientFor(stub), stub), 'id_token_malformed');
  });
});

describe('ID token: nonce', () => {
  it('refuses a nonce that differs from the one sent', async () => {
    stub.nonce = 'the-attackers-nonce';
    const client = clientFor(stub);
    const { generatePkcePair } = await import('../../src/pkce.js');
    await refusedWith(
      client.callback({ code: 'c', nonce: 'my-nonce', codeVerifier: generatePkcePair().codeVerifier }),
      'nonce_mismatch',
    );
  });

  it('refuses a token without nonce when one was sent', async () => {
    const client = clientFor(stub);
    const { generatePkcePair } = await import('../../src/pkce.js');
    await refusedWith(
      client.callback({ code: 'c', nonce: 'my-nonce', codeVerifier: generatePkcePair().codeVerifier }),
      'nonce_missing',
    );
  });

  it('refuses a token carrying a nonce when nonce was null', async () => {
    stub.nonce = 'injected';
    const client = clientFor(stub);
    const { generatePkcePair } = await import('../../src/pkce.js');
    await refusedWith(
      client.callback({ code: 'c', nonce: null, codeVerifier: generatePkcePair().codeVerifier }),
      'nonce_unexpected',
    );
  });

  it('accepts a token without nonce when nonce was null', async () => {
    await expect(login(clientFor(stub), stub, null)).resolves.toMatchObject({ sub: stub.sub });
  });
});

describe('access token', () => {
  it('refuses a token response without access_token', async () => {
    stub.serveTokens({ id_token: await stub.idToken() });
    await refusedWith(login(clientFor(stub), stub, null), 'access_token_missing');
  });

  it('refuses an access token that does not match at_hash', async () => {
    stub.serveTokens({ access_token: 'swapped-access-token', id_token: await stub.idToken() });
    await refusedWith(login(clientFor(stub), stub, null), 'at_hash_mismatch');
  });

  it('accepts a token without at_hash', async () => {
    stub.claims = { at_hash: undefined };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ accessToken: stub.accessToken });
  });
});
