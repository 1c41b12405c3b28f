/**
 * The login flow on its own, with no framework: a plain-object session and a fake client that
 * records what the service would have been asked.
 */
import { describe, expect, it } from 'vitest';
import type { CallbackParams, IdTokenClaims } from '../../src/client/types.js';
import { IdError } from '../../src/errors.js';
import { classifyFailure } from '../../src/flow/failure.js';
import { createLoginFlow, type LoginFlowClient, type LoginFlowOptions } from '../../src/flow/login-flow.js';
import { createMemoryReplayStore } from '../../src/flow/replay-store.js';
import { recordSession, type FlowSession } from '../../src/flow/session.js';

const ISSUER = 'https://id.test/v2';
const CALLBACK = 'https://rp.test/auth/callback';
const CLAIMS: IdTokenClaims = { iss: ISSUER, sub: 'sub-1', aud: 'client-a', exp: 2, iat: 1 };

class FakeClient implements LoginFlowClient {
  readonly issuer = ISSUER;
  calls: string[] = [];
  lastCallback?: CallbackParams;
  userinfoData: Record<string, string> = { 'profile.name': 'TAN AH KOW' };
  constructor(readonly clientId = 'client-a') {}
  authorizationUrl(params: { state?: string; nonce?: string | null; codeChallenge: string; redirectUri?: string }) {
    this.calls.push('authorizationUrl');
    return { url: `${ISSUER}/oauth/authorize?state=${params.state ?? ''}`, nonce: params.nonce ?? undefined };
  }
  async callback(params: CallbackParams) {
    this.calls.push('callback');
    this.lastCallback = params;
    return { sub: 'sub-1', accessToken: 'at', idToken: 'idt', claims: CLAIMS };
  }
  async userinfo() {
    this.calls.push('userinfo');
    return { sub: 'sub-1', data: this.userinfoData };
  }
}

/** The states of the pending logins stored under a flow's session key (a list of entries). */
function statesIn(stored: unknown): string[] {
  return (stored as Array<{ state: string }>).map((entry) => entry.state);
}

function flowWith(client: FakeClient, extra: Partial<LoginFlowOptions> = {}) {
  return createLoginFlow({ client, redirectUri: CALLBACK, replayStore: createMemoryReplayStore(), ...extra });
}

/** The IdError `promise` rejects with. */
async function rejection(promise: Promise<unknown>): Promise<IdError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IdError);
  return err as IdError;
}

/**
 * A session like a cookie-held one: stored values are frozen copies, so a flow that changed a
 * value in place instead of writing it back through set would throw; every write is counted.
 */
function cookieLikeSession(): FlowSession & { writes: number; data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  const session = {
    writes: 0,
    data,
    get: (key: string) => data.get(key),
    set: (key: string, value: unknown) => {
      session.writes++;
      data.set(key, Object.freeze(structuredClone(value)));
    },
    delete: (key: string) => {
      session.writes++;
      data.delete(key);
    },
  };
  return session;
}

describe('createLoginFlow with a plain-object session', () => {
  it('begins with a redirect URL and completes once with the user and the return path', async () => {
    const client = new FakeClient();
    const flow = flowWith(client);
    const record: Record<string, unknown> = {};
    const { redirectUrl, state } = flow.begin(recordSession(record), { returnTo: '/account' });
    expect(new URL(redirectUrl).searchParams.get('state')).toBe(state);
    expect(Object.keys(record)).toEqual(['nd-id:client-a']);

    const { user, returnTo } = await flow.complete(recordSession(record), { code: 'c', state });
    expect(user.sub).toBe('sub-1');
    expect(user.data).toEqual({ 'profile.name': 'TAN AH KOW' });
    expect(returnTo).toBe('/account');
    expect(record).toEqual({});
    expect(client.lastCallback?.redirectUri).toBe(CALLBACK);
  });

  it('writes every change back through set/delete and never changes a stored value in place', async () => {
    const flow = flowWith(new FakeClient());
    const session = cookieLikeSession();
    const tab1 = flow.begin(session);
    const tab2 = flow.begin(session);
    expect(session.writes).toBe(2);
    await flow.complete(session, { code: 'c', state: tab1.state });
    expect(session.writes).toBe(3);
    expect(statesIn(session.get(flow.sessionKey))).toEqual([tab2.state]);
  });

  it('records why a state was refused, without calling the service', async () => {
    const client = new FakeClient();
    const flow = flowWith(client);
    const record: Record<string, unknown> = {};
    const session = recordSession(record);
    expect((await rejection(flow.complete(session, { code: 'c' }))).reason).toBe('state_missing');
    expect((await rejection(flow.complete(session, { code: 'c', state: 'forged' }))).reason).toBe('no_pending_logins');
    const { state } = flow.begin(session);
    const other = await rejection(flow.complete(session, { code: 'c', state: 'forged' }));
    expect(other.code).toBe('state_mismatch');
    expect(other.reason).toBe('unknown_state');
    expect(classifyFailure(other)).toEqual({ status: 403, serverSide: false, message: other.message });
    expect(client.calls).toEqual(['authorizationUrl']);
    // The forged state did not consume the real one.
    await expect(flow.complete(session, { code: 'c', state })).resolves.toBeDefined();
  });

  it('refuses a login started for another client or callback URL (binding_mismatch), before any service call', async () => {
    const clientA = new FakeClient('client-a');
    const clientB = new FakeClient('client-b');
    const shared = { sessionKey: 'shared-slot' };
    const flowA = flowWith(clientA, shared);
    const flowB = flowWith(clientB, shared);
    const flowA2 = flowWith(clientA, { ...shared, redirectUri: 'https://rp.test/other/callback' });
    const session = recordSession({});
    const fromB = flowB.begin(session);
    const err = await rejection(flowA.complete(session, { code: 'c', state: fromB.state }));
    expect([err.code, err.reason]).toEqual(['state_mismatch', 'binding_mismatch']);
    const fromA = flowA.begin(session);
    const err2 = await rejection(flowA2.complete(session, { code: 'c', state: fromA.state }));
    expect([err2.code, err2.reason]).toEqual(['state_mismatch', 'binding_mismatch']);
    expect(clientA.calls.filter((c) => c !== 'authorizationUrl')).toEqual([]);
  });

  it('gives different client ids different default session keys', () => {
    expect(flowWith(new FakeClient('a')).sessionKey).toBe('nd-id:a');
    expect(flowWith(new FakeClient('b')).sessionKey).toBe('nd-id:b');
  });

  it('lets one of several concurrent completions of one login through (already_redeemed for the others)', async () => {
    const client = new FakeClient();
    const flow = flowWith(client);
    const record: Record<string, unknown> = {};
    const { state } = flow.begin(recordSession(record));
    const snapshot = structuredClone(record);
    // Each replay loaded the session before any completion saved it.
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, () => flow.complete(recordSession(structuredClone(snapshot)), { code: 'c', state })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as IdError] : []));
    expect(refused.map((e) => `${e.code}/${e.reason}`)).toEqual(Array(9).fill('state_mismatch/already_redeemed'));
    expect(client.calls.filter((c) => c === 'callback')).toHaveLength(1);
  });

  it('hands over only requested attributes, as own keys of a plain object', async () => {
    const client = new FakeClient();
    client.userinfoData = JSON.parse(
      '{"profile.name":"TAN AH KOW","profile.nric_number":"S9812381D","hasOwnProperty":"x","__proto__":"y","constructor":"z"}',
    ) as Record<string, string>;
    const flow = flowWith(client, { scope: 'openid profile.name profile.passport_expiry_date' });
    const session = recordSession({});
    const { state } = flow.begin(session);
    const { user } = await flow.complete(session, { code: 'c', state });
    expect(Object.keys(user.data)).toEqual(['profile.name']);
    expect(Object.hasOwn(user.data, 'profile.name')).toBe(true);
    expect(Object.getPrototypeOf(user.data)).toBe(Object.prototype);
    expect('profile.passport_expiry_date' in user.data).toBe(false);

    // A requested scope named like a prototype property is an ordinary own key.
    client.userinfoData = JSON.parse('{"__proto__":"kept","constructor":"also kept"}') as Record<string, string>;
    const odd = flowWith(client, { scope: ['openid', '__proto__', 'constructor'] });
    const s2 = recordSession({});
    const { user: u2 } = await odd.complete(s2, { code: 'c', state: odd.begin(s2).state });
    expect(Object.keys(u2.data).sort()).toEqual(['__proto__', 'constructor']);
    expect(Object.getPrototypeOf(u2.data)).toBe(Object.prototype);
  });

  it('stores pending logins as a list of same-shaped entries, and still completes one stored in the earlier keyed form', async () => {
    const flow = flowWith(new FakeClient());
    const record: Record<string, unknown> = {};
    const { state } = flow.begin(recordSession(record), { returnTo: '/a' });
    const stored = record[flow.sessionKey] as Array<Record<string, unknown>>;
    expect(stored).toHaveLength(1);
    expect(Object.keys(stored[0]!)).toEqual([
      'codeVerifier',
      'nonce',
      'createdAt',
      'scope',
      'issuer',
      'clientId',
      'redirectUri',
      'returnTo',
      'state',
    ]);
    expect(stored[0]!.state).toBe(state);

    // A login started before the upgrade, kept as { [state]: login }, still completes once.
    const { state: _s, ...login } = stored[0]!;
    const legacy: Record<string, unknown> = { [flow.sessionKey]: { [state]: login } };
    const { returnTo } = await flow.complete(recordSession(legacy), { code: 'c', state });
    expect(returnTo).toBe('/a');
    expect(legacy).toEqual({});
    await expect(
      flow.complete(recordSession({ [flow.sessionKey]: { [state]: login } }), { code: 'c', state }),
    ).rejects.toMatchObject({
      code: 'state_mismatch',
    });
  });

  it('regenerates a session that can, carrying the other tabs over', async () => {
    const flow = flowWith(new FakeClient());
    let record: Record<string, unknown> = {};
    const session: FlowSession = {
      get: (k) => record[k],
      set: (k, v) => {
        record[k] = v;
      },
      delete: (k) => {
        delete record[k];
      },
      regenerate: async () => {
        record = {};
      },
    };
    const tab1 = flow.begin(session);
    const tab2 = flow.begin(session);
    await flow.complete(session, { code: 'c', state: tab1.state });
    expect(statesIn(record[flow.sessionKey])).toEqual([tab2.state]);
  });

  it("reports an expired login and the service's own error codes", async () => {
    let now = 1_000_000;
    const flow = flowWith(new FakeClient(), { clock: () => now, loginTtl: 60_000 });
    const session = recordSession({});
    const old = flow.begin(session);
    now += 61_000;
    expect((await rejection(flow.complete(session, { code: 'c', state: old.state }))).code).toBe('login_expired');
    const denied = flow.begin(session);
    expect((await rejection(flow.complete(session, { error: 'access_denied', state: denied.state }))).code).toBe(
      'access_denied',
    );
    const broken = flow.begin(session);
    const err = await rejection(
      flow.complete(session, { error: 'server_error', error_description: 'down', state: broken.state }),
    );
    expect(err.code).toBe('provider_error');
    expect(err.cause).toEqual({ error: 'server_error', error_description: 'down' });
  });

  it.each([
    ['client', { client: {} }],
    ['redirectUri', { redirectUri: '/relative' }],
    ['scope', { scope: 'profile.name' }],
    ['sessionKey', { sessionKey: 'passport' }],
    ['maxPendingLogins', { maxPendingLogins: 0 }],
    ['loginTtl', { loginTtl: 600 }],
    ['replayStore', { replayStore: {} }],
    ['clock', { clock: 5 }],
  ])('throws a TypeError naming %s when it is wrong', (option, extra) => {
    expect(() => flowWith(new FakeClient(), extra as Partial<LoginFlowOptions>)).toThrow(
      new RegExp(`createLoginFlow: ${option} `),
    );
  });
});
