/**
 * The Redis replay store against a real, throwaway redis-server: consume is atomic across
 * clients (two instances), expires with its TTL, and a Redis outage is a server-side error
 * (session_store_unavailable), never a login let through.
 */
import { createClient } from 'redis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { CallbackParams, IdTokenClaims } from '../../src/client/types.js';
import { IdError } from '../../src/errors.js';
import { classifyFailure } from '../../src/flow/failure.js';
import { createLoginFlow, type LoginFlowClient } from '../../src/flow/login-flow.js';
import { createRedisReplayStore } from '../../src/flow/redis-replay-store.js';
import { recordSession } from '../../src/flow/session.js';
import { startRedis, type TestRedis } from '../helpers/redis.js';

type Client = ReturnType<typeof createClient>;

let redis: TestRedis;
let one: Client;
let two: Client;

async function connect(url: string): Promise<Client> {
  const client = createClient({ url, disableOfflineQueue: true, socket: { reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

beforeAll(async () => {
  const problem = inject('systemPackagesProblem');
  if (problem) throw new Error(problem);
  redis = await startRedis();
  one = await connect(redis.url);
  two = await connect(redis.url);
});

afterAll(async () => {
  one?.destroy();
  two?.destroy();
  await redis?.close();
});

describe('createRedisReplayStore', () => {
  it('lets exactly one of 40 racing consumes of one key through, from two clients', async () => {
    const stores = [createRedisReplayStore(one), createRedisReplayStore(two)];
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % 2]!.consume('race', 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await one.get('nd-id:used:race')).toBe('1');
  });

  it('forgets a key after its time to live, and keeps prefixes apart', async () => {
    // A time to live long enough that the second consume reaches Redis within it on a loaded machine.
    const store = createRedisReplayStore(one, { prefix: 'app-a:' });
    expect(await store.consume('k', 1000)).toBe(true);
    expect(await store.consume('k', 1000)).toBe(false);
    expect(await createRedisReplayStore(one, { prefix: 'app-b:' }).consume('k', 1000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await store.consume('k', 1000)).toBe(true);
  });

  it('refuses a client without sendCommand with a TypeError that says what to give', () => {
    expect(() => createRedisReplayStore({} as never)).toThrow(
      /createRedisReplayStore: client must be a connected node-redis client/,
    );
  });

  it('turns a Redis outage during completion into session_store_unavailable (503), without calling the service', async () => {
    const down = await connect(redis.url);
    const calls: string[] = [];
    const claims: IdTokenClaims = { iss: 'https://id.test/v2', sub: 's', aud: 'c', exp: 2, iat: 1 };
    const client: LoginFlowClient = {
      issuer: 'https://id.test/v2',
      clientId: 'c',
      authorizationUrl: (p) => ({
        url: `https://id.test/v2/oauth/authorize?state=${p.state ?? ''}`,
        nonce: p.nonce ?? undefined,
      }),
      callback: async (_p: CallbackParams) => {
        calls.push('callback');
        return { sub: 's', accessToken: 'at', idToken: 'idt', claims };
      },
      userinfo: async () => ({ sub: 's', data: {} }),
    };
    const flow = createLoginFlow({
      client,
      redirectUri: 'https://rp.test/cb',
      replayStore: createRedisReplayStore(down),
    });
    const session = recordSession({});
    const { state } = flow.begin(session);
    down.destroy();
    const err = await flow.complete(session, { code: 'c', state }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IdError);
    expect((err as IdError).code).toBe('session_store_unavailable');
    expect(classifyFailure(err)).toMatchObject({ status: 503, serverSide: true });
    expect(calls).toEqual([]);
  });
});
