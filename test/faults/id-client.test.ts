/**
 * How IdClient answers each injected provider fault: the IdError code it throws, within a bounded
 * time, with no unhandled rejection, and a clean sign-in once the fault has passed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { IdClient } from '../../src/client/id-client.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { DEFAULT_PERSONAS } from '../../src/provider/index.js';
import { startTestProvider } from '../helpers/provider-fixtures.js';
import { clientFor, expectIdError, freshCode, guardProcess, settle, signIn } from './support.js';

guardProcess();

/** Client timeout used where a fault is meant to outlast it, in ms. */
const SHORT_TIMEOUT = 1000;
/** Generous bound for any one call: it proves "no hang", not speed. */
const BOUND = 5 * 2000;

let started: StartedProvider;
let client: IdClient;

beforeAll(async () => {
  started = await startTestProvider({ autoApprove: true });
});
afterAll(async () => {
  client?.close();
  await started.close();
});
beforeEach(() => {
  started.provider.faults.clear();
  client?.close();
  client = clientFor(started, { timeout: 2000 });
});

/** Callback with a fresh code while `inject` is in force. */
async function callbackUnder(inject: () => void, c: IdClient = client) {
  const grant = await freshCode(started);
  inject();
  return settle(c.callback(grant), BOUND);
}

describe('IdClient when the provider is slow', () => {
  it('a token endpoint slower than the client timeout fails with provider_timeout within the timeout', async () => {
    const short = clientFor(started, { timeout: SHORT_TIMEOUT });
    try {
      const settled = await callbackUnder(
        () => started.provider.faults.inject({ kind: 'latency', ms: 5000 }, { endpoint: 'token' }),
        short,
      );
      expectIdError(settled, 'provider_timeout');
      // Well below the 5 s latency: the timeout cut it short.
      expect(settled.ms).toBeLessThan(SHORT_TIMEOUT + 3000);
    } finally {
      short.close();
    }
  });

  it('a userinfo endpoint slower than the client timeout fails with provider_timeout', async () => {
    const short = clientFor(started, { timeout: SHORT_TIMEOUT });
    try {
      const tokens = await short.callback(await freshCode(started));
      started.provider.faults.inject({ kind: 'latency', ms: 5000 }, { endpoint: 'userinfo' });
      const settled = await settle(short.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken }), BOUND);
      expectIdError(settled, 'provider_timeout');
      // Well below the 5 s latency: the timeout cut it short.
      expect(settled.ms).toBeLessThan(SHORT_TIMEOUT + 3000);
    } finally {
      short.close();
    }
  });

  it('latency shorter than the timeout only delays the sign-in, which then succeeds', async () => {
    started.provider.faults.inject({ kind: 'latency', ms: 150 }, { endpoint: 'token' });
    const settled = await settle(signIn(client, started), BOUND);
    expect(settled.error).toBeUndefined();
    expect(settled.value?.data['profile.name']).toBe(DEFAULT_PERSONAS[0]['profile.name']);
    expect(settled.ms).toBeGreaterThanOrEqual(140);
  });
});

describe('IdClient when the provider fails', () => {
  it.each([500, 503])('a %i from the token endpoint is provider_server_error carrying that status', async (status) => {
    const settled = await callbackUnder(() =>
      started.provider.faults.inject({ kind: 'status', status }, { endpoint: 'token' }),
    );
    expect(expectIdError(settled, 'provider_server_error').status).toBe(status);
  });

  it('a 503 from userinfo is provider_server_error', async () => {
    const tokens = await client.callback(await freshCode(started));
    started.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'userinfo' });
    const settled = await settle(client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken }), BOUND);
    expect(expectIdError(settled, 'provider_server_error').status).toBe(503);
  });

  it('a 500 from the JWKS endpoint on first use fails the callback with provider_server_error', async () => {
    const settled = await callbackUnder(() =>
      started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'jwks' }),
    );
    expectIdError(settled, 'provider_server_error');
  });

  it('a connection reset on the token endpoint is provider_unreachable (a POST is never retried)', async () => {
    const settled = await callbackUnder(() => started.provider.faults.inject({ kind: 'reset' }, { endpoint: 'token' }));
    expectIdError(settled, 'provider_unreachable');
  });

  it('one reset of a kept-alive userinfo connection is retried once and the sign-in succeeds', async () => {
    const tokens = await client.callback(await freshCode(started)); // leaves a kept-alive socket
    started.provider.faults.inject({ kind: 'reset' }, { endpoint: 'userinfo', times: 1 });
    const settled = await settle(client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken }), BOUND);
    expect(settled.error).toBeUndefined();
    expect(settled.value?.sub).toBe(tokens.sub);
    expect(started.provider.faults.active()).toEqual([]);
  });

  it('two resets in a row on userinfo are provider_unreachable', async () => {
    const tokens = await client.callback(await freshCode(started));
    started.provider.faults.inject({ kind: 'reset' }, { endpoint: 'userinfo', times: 2 });
    const settled = await settle(client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken }), BOUND);
    expectIdError(settled, 'provider_unreachable');
  });
});

describe('IdClient when the provider answers nonsense', () => {
  it('a token answer cut short is provider_invalid_response', async () => {
    const settled = await callbackUnder(() =>
      started.provider.faults.inject({ kind: 'truncated' }, { endpoint: 'token' }),
    );
    expectIdError(settled, 'provider_invalid_response');
  });

  it('an HTML proxy page with 200 instead of the token answer is provider_invalid_response', async () => {
    const settled = await callbackUnder(() =>
      started.provider.faults.inject({ kind: 'non_json' }, { endpoint: 'token' }),
    );
    expectIdError(settled, 'provider_invalid_response');
  });

  it('a JWKS cut short is provider_invalid_response', async () => {
    const settled = await callbackUnder(() =>
      started.provider.faults.inject({ kind: 'truncated' }, { endpoint: 'jwks' }),
    );
    expectIdError(settled, 'provider_invalid_response');
  });

  it.each(['truncated', 'non_json'] as const)('a %s userinfo answer is provider_invalid_response', async (kind) => {
    const tokens = await client.callback(await freshCode(started));
    started.provider.faults.inject({ kind }, { endpoint: 'userinfo' });
    const settled = await settle(client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken }), BOUND);
    expectIdError(settled, 'provider_invalid_response');
  });
});

describe('IdClient when the ID token or userinfo is wrong', () => {
  it('an ID token with a wrong signature is id_token_signature_invalid', async () => {
    const settled = await callbackUnder(() => started.provider.faults.inject({ kind: 'bad_signature' }));
    expectIdError(settled, 'id_token_signature_invalid');
  });

  it('an ID token signed with a just-rotated key is accepted after one JWKS refetch', async () => {
    await signIn(client, started); // caches the current key set
    expect(client.jwksFetchCount).toBe(1);
    started.provider.faults.inject({ kind: 'rotated_key' });
    const settled = await settle(signIn(client, started), BOUND);
    expect(settled.error).toBeUndefined();
    expect(settled.value?.data['profile.name']).toBe(DEFAULT_PERSONAS[0]['profile.name']);
    expect(client.jwksFetchCount).toBe(2);
  });

  it('a second rotation within the JWKS cooldown is id_token_key_not_found (no refetch allowed yet)', async () => {
    await signIn(client, started);
    started.provider.faults.inject({ kind: 'rotated_key' }, { times: 2 });
    expect((await settle(signIn(client, started), BOUND)).error).toBeUndefined();
    const settled = await callbackUnder(() => undefined);
    expectIdError(settled, 'id_token_key_not_found');
    expect(client.jwksFetchCount).toBe(2);
  });

  it('an ID token signed with a key the provider never published is id_token_key_not_found', async () => {
    await signIn(client, started);
    const settled = await callbackUnder(() => started.provider.faults.inject({ kind: 'unknown_key' }));
    expectIdError(settled, 'id_token_key_not_found');
  });

  it('an expired ID token is id_token_expired', async () => {
    const settled = await callbackUnder(() => started.provider.faults.inject({ kind: 'expired_id_token' }));
    expectIdError(settled, 'id_token_expired');
  });

  it('an ID token issued to another client is id_token_aud_mismatch', async () => {
    const settled = await callbackUnder(() => started.provider.faults.inject({ kind: 'wrong_audience' }));
    expectIdError(settled, 'id_token_aud_mismatch');
  });

  it("a userinfo answer about someone else's sub is userinfo_sub_mismatch", async () => {
    const tokens = await client.callback(await freshCode(started));
    started.provider.faults.inject({ kind: 'sub_mismatch' });
    const settled = await settle(client.userinfo({ sub: tokens.sub, accessToken: tokens.accessToken }), BOUND);
    expectIdError(settled, 'userinfo_sub_mismatch');
  });

  it('error messages of every ID-token fault name no token, key or personal data', async () => {
    for (const kind of ['bad_signature', 'unknown_key', 'expired_id_token', 'wrong_audience'] as const) {
      const settled = await callbackUnder(() => started.provider.faults.inject({ kind }));
      const message = (settled.error as Error).message;
      expect(message).not.toMatch(/eyJ[\w-]+\./);
      expect(message).not.toContain(DEFAULT_PERSONAS[0]['profile.name']);
      expect(message).not.toContain('PRIVATE KEY');
    }
  });
});

describe('after the fault', () => {
  it('a sign-in right after a one-time fault succeeds', async () => {
    const failed = await callbackUnder(() =>
      started.provider.faults.inject({ kind: 'status', status: 500 }, { endpoint: 'token' }),
    );
    expectIdError(failed, 'provider_server_error');
    const settled = await settle(signIn(client, started), BOUND);
    expect(settled.error).toBeUndefined();
  });
});
