/**
 * The provider key set: cached per client for at most jwksCacheMaxAge, one deduplicated refetch
 * on an unknown kid (or a kid-less token and no key) with a cooldown, and kid-less tokens
 * accepted only when the choice of key is unambiguous.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generatePkcePair } from '../../src/pkce.js';
import { STUB_PATHS, sendJson } from '../helpers/stub-provider.js';
import { clientFor, login, movableClock, startStubProvider, type StubProvider } from './support.js';

let stub: StubProvider;
let clock: ReturnType<typeof movableClock>;

beforeEach(async () => {
  clock = movableClock();
  stub = await startStubProvider({ clock: clock.now });
});
afterEach(() => stub.close());

describe('JWKS cache', () => {
  it('fetches the key set once and reuses it for later logins', async () => {
    const client = clientFor(stub);
    for (let i = 0; i < 5; i++) await login(client, stub);
    expect(stub.jwksFetches).toBe(1);
    expect(client.jwksFetchCount).toBe(1);
  });

  it('keeps one cache per client', async () => {
    await login(clientFor(stub), stub);
    await login(clientFor(stub), stub);
    expect(stub.jwksFetches).toBe(2);
  });

  it('shares one in-flight fetch between concurrent first logins', async () => {
    const client = clientFor(stub);
    await Promise.all(Array.from({ length: 5 }, () => login(client, stub)));
    expect(stub.jwksFetches).toBe(1);
  });
});

describe('JWKS cache max age', () => {
  /** The provider withdraws k1 (publishes only k2) while tokens keep being signed with k1. */
  async function withdrawFirstKey(): Promise<void> {
    const k1 = stub.keys[0]!;
    await stub.rotate('k2', { keepOld: false });
    stub.signWith = k1;
  }

  it('keeps using the cached key set, without refetching, until it is 10 minutes old', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    await withdrawFirstKey();
    clock.advance(600_000 - 1);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(stub.jwksFetches).toBe(1);
  });

  it('stops accepting a key the provider withdrew once the cached set is 10 minutes old', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    await withdrawFirstKey();
    clock.advance(600_000);
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    expect(stub.jwksFetches).toBe(2);
  });

  it('honours a jwksCacheMaxAge option', async () => {
    const client = clientFor(stub, { jwksCacheMaxAge: 30_000 });
    await login(client, stub);
    await withdrawFirstKey();
    clock.advance(29_999);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    clock.advance(1);
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    expect(stub.jwksFetches).toBe(2);
  });

  it('shares one refetch between concurrent logins once the cached set has expired', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    clock.advance(600_000);
    const results = await Promise.all(Array.from({ length: 8 }, () => login(client, stub)));
    expect(results.every((r) => r.sub === stub.sub)).toBe(true);
    expect(stub.jwksFetches).toBe(2);
    expect(client.jwksFetchCount).toBe(2);
  });

  it('fails with the HTTP error, not the expired set, when the refetch fails; the next login recovers', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    clock.advance(600_000);
    stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 503, {}));
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'provider_server_error', status: 503 });
    stub.override(STUB_PATHS.jwks, undefined);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(stub.jwksFetches).toBe(3);
  });

  it('refetches the key set when the clock went back, as its age is then unknown', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    clock.advance(-1);
    await login(client, stub);
    expect(stub.jwksFetches).toBe(2);
  });
});

describe('JWKS key rotation', () => {
  it('accepts a token signed with a new key after one refetch (unknown kid, then rotation)', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    await stub.rotate('k2');
    const result = await login(client, stub);
    expect(result.sub).toBe(stub.sub);
    expect(stub.jwksFetches).toBe(2);
  });

  it('deduplicates the refetch when several logins meet the new kid at once', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    await stub.rotate('k2');
    const results = await Promise.all(Array.from({ length: 8 }, () => login(client, stub)));
    expect(results.every((r) => r.sub === stub.sub)).toBe(true);
    expect(stub.jwksFetches).toBe(2);
  });

  it('refuses an unknown kid without refetching again during the cooldown', async () => {
    const client = clientFor(stub, { jwksCooldown: 60_000 });
    await login(client, stub);
    stub.header = { kid: 'forged-1' };
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    expect(stub.jwksFetches).toBe(2);
    stub.header = { kid: 'forged-2' };
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    expect(stub.jwksFetches).toBe(2);
  });

  it('refetches again once the cooldown has passed, so a second rotation also works', async () => {
    const client = clientFor(stub, { jwksCooldown: 60_000 });
    await login(client, stub);
    await stub.rotate('k2');
    await login(client, stub);
    expect(stub.jwksFetches).toBe(2);
    await stub.rotate('k3');
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    clock.advance(60_000);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(stub.jwksFetches).toBe(3);
  });
});

describe('JWKS and tokens without kid', () => {
  it('refuses a token without kid when the provider publishes two keys', async () => {
    await stub.rotate('k2');
    stub.header = { kid: undefined };
    await expect(login(clientFor(stub), stub)).rejects.toMatchObject({ code: 'id_token_kid_ambiguous' });
  });

  it('accepts a token without kid when the provider publishes exactly one usable key', async () => {
    await stub.rotate(undefined, { keepOld: false });
    stub.header = { kid: undefined };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('ignores keys that are not RS256 signing keys when counting', async () => {
    const encKey = { ...stub.keys[0]!.publicJwk, kid: 'enc', use: 'enc' };
    stub.override(STUB_PATHS.jwks, (_req, res) =>
      sendJson(res, 200, { keys: [stub.keys[0]!.publicJwk, encKey, { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] }),
    );
    stub.header = { kid: undefined };
    await expect(login(clientFor(stub), stub)).resolves.toMatchObject({ sub: stub.sub });
  });
});

describe('JWKS refetch for a token without kid', () => {
  it('signs in with a kid-less token after the cached key set was empty, by refetching it', async () => {
    const client = clientFor(stub);
    stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 200, { keys: [] }));
    stub.header = { kid: undefined };
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    stub.override(STUB_PATHS.jwks, undefined);
    await stub.rotate(undefined, { keepOld: false });
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(stub.jwksFetches).toBe(2);
  });

  it('refetches for a kid-less token at most once per cooldown', async () => {
    const client = clientFor(stub, { jwksCooldown: 60_000 });
    stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 200, { keys: [] }));
    stub.header = { kid: undefined };
    for (let i = 0; i < 3; i++) {
      await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    }
    expect(stub.jwksFetches).toBe(2);
    clock.advance(60_000);
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'id_token_key_not_found' });
    expect(stub.jwksFetches).toBe(3);
  });
});

describe('JWKS failures', () => {
  it('reports jwks_invalid when the key set has no keys array', async () => {
    stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 200, { nope: [] }));
    await expect(login(clientFor(stub), stub)).rejects.toMatchObject({ code: 'jwks_invalid' });
  });

  it('reports provider_server_error when the JWKS endpoint fails, and retries on the next login', async () => {
    stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 503, {}));
    const client = clientFor(stub);
    await expect(login(client, stub)).rejects.toMatchObject({ code: 'provider_server_error', status: 503 });
    stub.override(STUB_PATHS.jwks, undefined);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
  });

  it('does not refetch for a kid-less token while the cached set has its one key', async () => {
    const client = clientFor(stub);
    await login(client, stub);
    await stub.rotate(undefined);
    stub.header = { kid: undefined };
    await expect(
      client.callback({ code: 'c', nonce: null, codeVerifier: generatePkcePair().codeVerifier }),
    ).rejects.toMatchObject({
      code: 'id_token_signature_invalid',
    });
    expect(stub.jwksFetches).toBe(1);
  });
});
