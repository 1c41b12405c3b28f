/**
 * NdIdStrategy on its own: a fake client and Passport's action functions replaced by recorders,
 * so each outcome (redirect, success, fail, error) is visible directly.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Request } from 'express';
import { IdError } from '../../src/errors.js';
import type { CallbackParams, IdTokenClaims } from '../../src/client/types.js';
import {
  NdIdStrategy,
  type NdIdClientLike,
  type NdIdStrategyOptions,
  type NdIdUser,
  type NdIdVerify,
  type NdIdVerifyDone,
} from '../../src/passport/strategy.js';
import { testKeyPair } from '../helpers/keys.js';

type Outcome =
  | { kind: 'redirect'; url: string }
  | { kind: 'success'; user: unknown; info: unknown }
  | { kind: 'fail'; challenge: { message: string; code: string; [k: string]: unknown }; status: number }
  | { kind: 'error'; err: Error };

const CLAIMS: IdTokenClaims = { iss: 'https://id.test/v2', sub: 'sub-1', aud: 'client', exp: 2, iat: 1 };

class FakeClient implements NdIdClientLike {
  calls: string[] = [];
  lastCallback?: CallbackParams;
  callbackError?: unknown;
  userinfoError?: unknown;
  authorizationUrl(params: {
    state?: string;
    nonce?: string | null;
    codeChallenge: string;
    redirectUri?: string;
    scope?: string | string[];
  }) {
    this.calls.push('authorizationUrl');
    const scope = Array.isArray(params.scope) ? params.scope.join(' ') : (params.scope ?? '');
    const url = `https://id.test/v2/oauth/authorize?state=${params.state ?? ''}&scope=${encodeURIComponent(scope)}&redirect_uri=${encodeURIComponent(params.redirectUri ?? '')}`;
    return { url, nonce: params.nonce ?? undefined };
  }
  async callback(params: CallbackParams) {
    this.calls.push('callback');
    this.lastCallback = params;
    if (this.callbackError !== undefined) throw this.callbackError;
    return { sub: 'sub-1', accessToken: 'at', idToken: 'idt', claims: CLAIMS };
  }
  async userinfo() {
    this.calls.push('userinfo');
    if (this.userinfoError !== undefined) throw this.userinfoError;
    return { sub: 'sub-1', data: { 'profile.name': 'Tan Ah Kow' } };
  }
}

function fakeReq(query: Record<string, unknown>, session: Record<string, unknown> | undefined): Request {
  return { query, session } as unknown as Request;
}

function run(
  strategy: NdIdStrategy,
  req: Request,
  options: Record<string, unknown> = { keepSessionInfo: true },
): Promise<Outcome> {
  return new Promise((resolve) => {
    const s = Object.create(strategy) as NdIdStrategy;
    s.redirect = (url: string) => resolve({ kind: 'redirect', url });
    s.success = (user: unknown, info?: unknown) => resolve({ kind: 'success', user, info });
    s.fail = ((challenge: Extract<Outcome, { kind: 'fail' }>['challenge'], status: number) =>
      resolve({ kind: 'fail', challenge, status })) as NdIdStrategy['fail'];
    s.error = (err: Error) => resolve({ kind: 'error', err });
    s.authenticate(req, options);
  });
}

const CALLBACK = 'https://rp.test/auth/callback';

function strategyWith(client: FakeClient, extra: Partial<NdIdStrategyOptions> = {}, verify?: NdIdVerify) {
  return new NdIdStrategy({ client, callbackURL: CALLBACK, ...extra } as NdIdStrategyOptions, verify);
}

/** Starts a login in `session` and returns its state. */
async function start(strategy: NdIdStrategy, session: Record<string, unknown>, options: Record<string, unknown> = {}) {
  const out = await run(strategy, fakeReq({}, session), options);
  if (out.kind !== 'redirect') throw new Error(`expected a redirect, got ${out.kind}`);
  return new URL(out.url).searchParams.get('state') as string;
}

/** Start a login, then complete it with a client whose callback throws `err`. */
async function callbackFailingWith(err: IdError): Promise<Outcome> {
  const client = new FakeClient();
  client.callbackError = err;
  const session: Record<string, unknown> = {};
  const s = strategyWith(client);
  const state = await start(s, session);
  return run(s, fakeReq({ code: 'c', state }, session));
}

describe('NdIdStrategy options', () => {
  const key = testKeyPair('rp');
  const fields = {
    clientId: 'client',
    clientSecret: 'secret',
    privateKey: key.privateKeyPem,
    callbackURL: CALLBACK,
    hostname: 'https://id.example',
  };

  it('is named "nd-id" and builds its own client from the registration fields', () => {
    const s = new NdIdStrategy(fields);
    expect(s.name).toBe('nd-id');
    expect(s.sessionKey).toBe('nd-id:client'); // derived from the client id, so two registrations never share a slot
    expect(s.maxPendingLogins).toBe(5);
    expect(s.loginTtl).toBe(600_000);
  });

  it('accepts redirectUri as an alias of callbackURL', () => {
    const { callbackURL: _c, ...rest } = fields;
    expect(() => new NdIdStrategy({ ...rest, redirectUri: CALLBACK })).not.toThrow();
  });

  it.each([
    ['clientId', { ...fields, clientId: '' }],
    ['clientSecret', { ...fields, clientSecret: undefined }],
    ['privateKey', { ...fields, privateKey: 42 }],
    ['callbackURL', { ...fields, callbackURL: undefined }],
    ['callbackURL', { ...fields, callbackURL: '/auth/callback' }],
    ['callbackURL', { ...fields, redirectUri: 'https://other.test/cb' }],
    ['scope', { ...fields, scope: 'profile.name' }],
    ['scope', { ...fields, scope: 7 }],
    ['sessionKey', { ...fields, sessionKey: '' }],
    ['sessionKey', { ...fields, sessionKey: 'passport' }],
    ['maxPendingLogins', { ...fields, maxPendingLogins: 0 }],
    ['maxPendingLogins', { ...fields, maxPendingLogins: 2.5 }],
    ['loginTtl', { ...fields, loginTtl: 600 }],
    ['loginTtl', { ...fields, loginTtl: Number.NaN }],
    ['verifyTimeout', { ...fields, verifyTimeout: 60 }],
    ['verifyTimeout', { ...fields, verifyTimeout: '1m' }],
    ['passReqToCallback', { ...fields, passReqToCallback: 'yes' }],
    ['clock', { ...fields, clock: 5 }],
    ['client', { client: { callback() {} }, callbackURL: CALLBACK }],
    ['client', { ...fields, client: new FakeClient() }],
  ])('throws a TypeError naming %s when it is wrong', (option, options) => {
    expect(() => new NdIdStrategy(options as unknown as NdIdStrategyOptions)).toThrow(TypeError);
    expect(() => new NdIdStrategy(options as unknown as NdIdStrategyOptions)).toThrow(
      new RegExp(`NdIdStrategy: ${option} `),
    );
  });

  it('tells the developer that loginTtl is in milliseconds', () => {
    expect(() => new NdIdStrategy({ ...fields, loginTtl: 600 })).toThrow(/milliseconds/);
  });

  it('throws a TypeError when verify is not a function', () => {
    expect(() => new NdIdStrategy(fields, 'nope' as unknown as NdIdVerify)).toThrow(/NdIdStrategy: verify /);
  });

  it('never puts the client secret or private key in a construction error', () => {
    try {
      new NdIdStrategy({ ...fields, maxPendingLogins: -1 });
    } catch (err) {
      expect(String(err)).not.toContain('secret');
      expect(String(err)).not.toContain('PRIVATE KEY');
    }
    expect.assertions(2);
  });
});

/** The pending logins the strategy stored in `session` (a list of entries), by state. */
function pendingIn(
  session: Record<string, unknown>,
): Record<string, { codeVerifier: string; nonce: string; returnTo?: string }> {
  const stored = session['nd-id'] as Array<{ state: string; codeVerifier: string; nonce: string; returnTo?: string }>;
  return Object.fromEntries(stored.map((entry) => [entry.state, entry]));
}

describe('NdIdStrategy starting a login', () => {
  it('redirects to the service with a fresh state and remembers the login in the session under that state', async () => {
    const client = new FakeClient();
    const session: Record<string, unknown> = {};
    const state = await start(strategyWith(client), session);
    expect(state.length).toBeGreaterThanOrEqual(22); // >= 128 bits in base64url
    const stored = pendingIn(session)[state]!;
    expect(stored.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(stored.nonce.length).toBeGreaterThanOrEqual(22);
  });

  it('sends the configured callback URL and scope, and a per-call scope overrides it', async () => {
    const client = new FakeClient();
    const s = strategyWith(client, { scope: 'openid profile.name profile.nric_number' });
    const out1 = await run(s, fakeReq({}, {}));
    const out2 = await run(s, fakeReq({}, {}), { scope: ['openid', 'profile.passport_expiry_date'] });
    const u1 = new URL((out1 as { url: string }).url);
    const u2 = new URL((out2 as { url: string }).url);
    expect(u1.searchParams.get('redirect_uri')).toBe(CALLBACK);
    expect(u1.searchParams.get('scope')).toBe('openid profile.name profile.nric_number');
    expect(u2.searchParams.get('scope')).toBe('openid profile.passport_expiry_date');
  });

  it('keeps a safe returnTo and drops an unsafe one', async () => {
    const session: Record<string, unknown> = {};
    const s = strategyWith(new FakeClient());
    const good = await start(s, session, { returnTo: '/account?x=1' });
    const bad = await start(s, session, { returnTo: '//evil.example' });
    const map = pendingIn(session);
    expect(map[good]!.returnTo).toBe('/account?x=1');
    expect(map[bad]!.returnTo).toBeUndefined();
  });

  it('reports an error telling the developer to mount express-session when there is no session', async () => {
    const out = await run(strategyWith(new FakeClient()), fakeReq({}, undefined));
    expect(out.kind).toBe('error');
    const err = (out as Extract<Outcome, { kind: 'error' }>).err as IdError;
    expect(err).toBeInstanceOf(IdError);
    expect(err.code).toBe('session_missing');
    expect(err.message).toMatch(/express-session/);
  });

  it('keeps at most maxPendingLogins logins, the oldest evicted first', async () => {
    let now = 1_000_000;
    const session: Record<string, unknown> = {};
    const s = strategyWith(new FakeClient(), { maxPendingLogins: 2, clock: () => now });
    const first = await start(s, session);
    now += 1;
    await start(s, session);
    now += 1;
    await start(s, session);
    expect(Object.keys(pendingIn(session))).toHaveLength(2);
    const out = await run(s, fakeReq({ code: 'c', state: first }, session));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'state_mismatch' }, status: 403 });
  });
});

describe('NdIdStrategy completing a login', () => {
  it('exchanges the code with the stored verifier and nonce and succeeds with { sub, data, claims, signedInAt } by default', async () => {
    const client = new FakeClient();
    const session: Record<string, unknown> = {};
    const s = strategyWith(client);
    const state = await start(s, session, { returnTo: '/next' });
    const stored = pendingIn(session)[state]!;
    const out = await run(s, fakeReq({ code: 'the-code', state }, session));
    expect(out).toEqual({
      kind: 'success',
      user: { sub: 'sub-1', data: { 'profile.name': 'Tan Ah Kow' }, claims: CLAIMS, signedInAt: expect.any(Number) },
      info: {
        returnTo: '/next',
        signIn: { sub: 'sub-1', signedInAt: expect.any(Number), iss: 'https://id.test/v2' },
        sessionEntries: [expect.stringMatching(/^nd-id/), expect.any(String)],
      },
    });
    expect(client.lastCallback).toEqual({
      code: 'the-code',
      codeVerifier: stored.codeVerifier,
      nonce: stored.nonce,
      redirectUri: CALLBACK,
    });
    expect(session['nd-id']).toBeUndefined();
  });

  it('fails with state_mismatch (403) without calling the service when no login was started', async () => {
    const client = new FakeClient();
    const out = await run(strategyWith(client), fakeReq({ code: 'c', state: 'forged' }, {}));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'state_mismatch' }, status: 403 });
    expect(client.calls).toEqual([]);
  });

  it('fails with state_mismatch when the callback has no state at all', async () => {
    const client = new FakeClient();
    const session: Record<string, unknown> = {};
    const s = strategyWith(client);
    await start(s, session);
    const out = await run(s, fakeReq({ code: 'c' }, session));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'state_mismatch' } });
    expect(client.calls).toEqual(['authorizationUrl']);
  });

  it('fails a replayed callback with state_mismatch, calling the service only once', async () => {
    const client = new FakeClient();
    const session: Record<string, unknown> = {};
    const s = strategyWith(client);
    const state = await start(s, session);
    expect((await run(s, fakeReq({ code: 'c', state }, session))).kind).toBe('success');
    const replay = await run(s, fakeReq({ code: 'c', state }, session));
    expect(replay).toMatchObject({ kind: 'fail', challenge: { code: 'state_mismatch' } });
    expect(client.calls.filter((c) => c === 'callback')).toHaveLength(1);
  });

  it('fails with login_expired once loginTtl has passed, and the login cannot be retried', async () => {
    let now = 5_000_000;
    const client = new FakeClient();
    const session: Record<string, unknown> = {};
    const s = strategyWith(client, { clock: () => now, loginTtl: 60_000 });
    const state = await start(s, session);
    now += 60_001;
    const out = await run(s, fakeReq({ code: 'c', state }, session));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'login_expired' }, status: 401 });
    expect(client.calls).not.toContain('callback');
    expect(session['nd-id']).toBeUndefined();
  });

  it('fails with access_denied when the person refused in the app', async () => {
    const session: Record<string, unknown> = {};
    const s = strategyWith(new FakeClient());
    const state = await start(s, session);
    const out = await run(s, fakeReq({ error: 'access_denied', state }, session));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'access_denied' } });
  });

  it('fails with provider_error carrying the service error code and a cleaned description', async () => {
    const session: Record<string, unknown> = {};
    const s = strategyWith(new FakeClient());
    const state = await start(s, session);
    const out = await run(s, fakeReq({ error: 'invalid_scope', error_description: 'bad\nscope', state }, session));
    expect(out).toMatchObject({
      kind: 'fail',
      challenge: { code: 'provider_error', error: 'invalid_scope', errorDescription: 'badscope' },
    });
    expect((out as { challenge: { message: string } }).challenge.message).toContain('invalid_scope');
  });

  it('does not echo a malformed error code from the query into the message', async () => {
    const session: Record<string, unknown> = {};
    const s = strategyWith(new FakeClient());
    const state = await start(s, session);
    const out = await run(s, fakeReq({ error: 'x"<b>\u0000', state }, session));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'provider_error', error: 'unknown_error' } });
  });

  it('fails with the IdError code when ID token validation fails (so failureRedirect handles it)', async () => {
    const out = await callbackFailingWith(new IdError('nonce_mismatch', 'The ID token nonce does not match.'));
    expect(out).toMatchObject({ kind: 'fail', challenge: { code: 'nonce_mismatch' }, status: 401 });
  });

  it('fails (not errors) when the service refuses the code, e.g. a reused code', async () => {
    expect(
      await callbackFailingWith(
        new IdError('token_request_failed', 'The token endpoint refused the request (invalid_grant).', { status: 400 }),
      ),
    ).toMatchObject({
      kind: 'fail',
      challenge: { code: 'token_request_failed' },
    });
  });

  it('fails (not errors) when the service says the code is expired, reused or fails PKCE (invalid_grant)', async () => {
    expect(
      await callbackFailingWith(
        new IdError('token_request_failed', 'The token endpoint refused the request (invalid_grant).', {
          status: 400,
          cause: { error: 'invalid_grant' },
        }),
      ),
    ).toMatchObject({
      kind: 'fail',
      challenge: { code: 'token_request_failed' },
    });
  });

  it.each(['invalid_client', 'unauthorized_client'])(
    "reports the service refusing the app's own credentials (%s) as an error, not a failed sign-in",
    async (oauthError) => {
      const out = await callbackFailingWith(
        new IdError('token_request_failed', `The token endpoint refused the request (${oauthError}).`, {
          status: oauthError === 'invalid_client' ? 401 : 400,
          cause: { error: oauthError },
        }),
      );
      expect(out.kind).toBe('error');
      expect(((out as Extract<Outcome, { kind: 'error' }>).err as IdError).code).toBe('token_request_failed');
    },
  );

  it('reports an unusable key set from the service (jwks_invalid) as an error, not a failed sign-in', async () => {
    const out = await callbackFailingWith(
      new IdError('jwks_invalid', 'The JWKS endpoint answered without a "keys" array.'),
    );
    expect(out.kind).toBe('error');
    expect(((out as Extract<Outcome, { kind: 'error' }>).err as IdError).code).toBe('jwks_invalid');
  });

  it.each(['provider_unreachable', 'provider_timeout', 'provider_server_error', 'provider_invalid_response'] as const)(
    'reports %s as an error, not a failure',
    async (code) => {
      const client = new FakeClient();
      client.userinfoError = new IdError(code, 'The identity service is not available.');
      const session: Record<string, unknown> = {};
      const s = strategyWith(client);
      const state = await start(s, session);
      const out = await run(s, fakeReq({ code: 'c', state }, session));
      expect(out.kind).toBe('error');
      expect(((out as Extract<Outcome, { kind: 'error' }>).err as IdError).code).toBe(code);
    },
  );
});

describe('NdIdStrategy verify callback', () => {
  async function complete(s: NdIdStrategy, req?: (session: Record<string, unknown>, state: string) => Request) {
    const session: Record<string, unknown> = {};
    const state = await start(s, session);
    return run(s, req ? req(session, state) : fakeReq({ code: 'c', state }, session));
  }

  it('(user, done) receives { sub, data, claims } and its user is the result', async () => {
    let seen: NdIdUser | undefined;
    const s = strategyWith(new FakeClient(), {}, (user: NdIdUser, done) => {
      seen = user;
      done(null, { id: 7 });
    });
    expect(await complete(s)).toMatchObject({ kind: 'success', user: { id: 7 } });
    expect(seen).toEqual({
      sub: 'sub-1',
      data: { 'profile.name': 'Tan Ah Kow' },
      claims: CLAIMS,
      signedInAt: expect.any(Number),
    });
  });

  it('an async verify returning the user is supported', async () => {
    const s = strategyWith(new FakeClient(), {}, async (user: NdIdUser) => ({ id: user.sub }));
    expect(await complete(s)).toMatchObject({ kind: 'success', user: { id: 'sub-1' } });
  });

  it('(req, user, done) receives the request when passReqToCallback is true', async () => {
    let seenReq: Request | undefined;
    const s = new NdIdStrategy(
      { client: new FakeClient(), callbackURL: CALLBACK, passReqToCallback: true },
      (req, user, done) => {
        seenReq = req;
        done(null, { sub: user.sub });
      },
    );
    const session: Record<string, unknown> = {};
    const state = await start(s, session);
    const req = fakeReq({ code: 'c', state }, session);
    expect(await run(s, req)).toMatchObject({ kind: 'success', user: { sub: 'sub-1' } });
    expect(seenReq).toBe(req);
  });

  it('an async (req, user) verify is supported with passReqToCallback', async () => {
    const s = new NdIdStrategy(
      { client: new FakeClient(), callbackURL: CALLBACK, passReqToCallback: true },
      async (req: Request, user: NdIdUser) => ({ sub: user.sub, q: (req.query as { code: string }).code }),
    );
    expect(await complete(s)).toMatchObject({ kind: 'success', user: { sub: 'sub-1', q: 'c' } });
  });

  it('done(null, false, { message }) refuses with user_refused and the given message', async () => {
    const s = strategyWith(new FakeClient(), {}, (_user: NdIdUser, done) =>
      done(null, false, { message: 'Not on the staff list.' }),
    );
    expect(await complete(s)).toMatchObject({
      kind: 'fail',
      challenge: { code: 'user_refused', message: 'Not on the staff list.' },
      status: 401,
    });
  });

  it('an async verify returning false refuses the user', async () => {
    const s = strategyWith(new FakeClient(), {}, async () => false);
    expect(await complete(s)).toMatchObject({ kind: 'fail', challenge: { code: 'user_refused' } });
  });

  it('a verify that throws is reported as an error', async () => {
    const s = strategyWith(new FakeClient(), {}, () => {
      throw new Error('database down');
    });
    expect(await complete(s)).toMatchObject({ kind: 'error', err: { message: 'database down' } });
  });

  it('an async verify that rejects is reported as an error', async () => {
    const s = strategyWith(new FakeClient(), {}, async () => {
      throw new Error('database down');
    });
    expect(await complete(s)).toMatchObject({ kind: 'error', err: { message: 'database down' } });
  });

  it('done(err) is reported as an error', async () => {
    const s = strategyWith(new FakeClient(), {}, (_u: NdIdUser, done) => done(new Error('lookup failed')));
    expect(await complete(s)).toMatchObject({ kind: 'error', err: { message: 'lookup failed' } });
  });

  it('a rest-args wrapper that returns a value and then refuses through done signs nobody in', async () => {
    const inner = (_u: NdIdUser, done: NdIdVerifyDone) => {
      setImmediate(() => done(null, false, { message: 'Not on the staff list.' }));
      return { pending: true };
    };
    const wrapped = (...a: [NdIdUser, NdIdVerifyDone]) => inner(...a);
    expect(wrapped.length).toBe(0);
    const s = strategyWith(new FakeClient(), {}, wrapped as unknown as NdIdVerify);
    expect(await complete(s)).toMatchObject({
      kind: 'fail',
      challenge: { code: 'user_refused', message: 'Not on the staff list.' },
    });
  });

  it('a verify that returns a database handle and then refuses through done signs nobody in', async () => {
    const db = {
      get(_key: string, cb: (err: Error | null, row?: { id: number }) => void) {
        setImmediate(() => cb(null, undefined));
        return db; // like many callback APIs, returns itself
      },
    };
    const noop: NdIdVerifyDone = () => {};
    // A default parameter makes `length` 1, as if done were not taken.
    const verify = (user: NdIdUser, done: NdIdVerifyDone = noop) =>
      db.get(user.sub, (err, row) => done(err, row ?? false));
    expect(verify.length).toBe(1);
    const s = strategyWith(new FakeClient(), {}, verify as unknown as NdIdVerify);
    expect(await complete(s)).toMatchObject({ kind: 'fail', challenge: { code: 'user_refused' } });
  });

  it('an async (user, done) verify that calls done later signs the person in', async () => {
    const s = strategyWith(new FakeClient(), {}, async (user: NdIdUser, done: NdIdVerifyDone) => {
      setImmediate(() => done(null, { id: `later:${user.sub}` }));
    });
    expect(await complete(s)).toMatchObject({ kind: 'success', user: { id: 'later:sub-1' } });
  });

  it('an async verify that refuses through done before resolving to a user is refused', async () => {
    const s = strategyWith(new FakeClient(), {}, (async (user: NdIdUser, done: NdIdVerifyDone) => {
      done(null, false);
      return { id: user.sub };
    }) as unknown as NdIdVerify);
    expect(await complete(s)).toMatchObject({ kind: 'fail', challenge: { code: 'user_refused' } });
  });

  it('an async verify resolving to null refuses the user', async () => {
    const s = strategyWith(new FakeClient(), {}, async () => null);
    expect(await complete(s)).toMatchObject({ kind: 'fail', challenge: { code: 'user_refused' } });
  });

  it('only the first answer of a verify counts', async () => {
    const s = strategyWith(new FakeClient(), {}, (_u: NdIdUser, done) => {
      done(null, { first: true });
      done(null, false);
    });
    expect(await complete(s)).toMatchObject({ kind: 'success', user: { first: true } });
  });
});

describe('NdIdStrategy verify that never answers', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  async function completeWithFakeTimers(verify: NdIdVerify) {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = strategyWith(new FakeClient(), { verifyTimeout: 5000 }, verify);
    const session: Record<string, unknown> = {};
    const state = await start(s, session);
    const outcome = run(s, fakeReq({ code: 'c', state }, session));
    await vi.advanceTimersByTimeAsync(5000);
    return outcome;
  }

  it('a verify that returns the user without a promise or done signs nobody in and ends with an error after verifyTimeout', async () => {
    const out = await completeWithFakeTimers(((user: NdIdUser) => ({ id: user.sub })) as unknown as NdIdVerify);
    expect(out).toMatchObject({ kind: 'error', err: { message: expect.stringMatching(/verifyTimeout/) } });
  });

  it('an async verify resolving to undefined without calling done ends with an error after verifyTimeout', async () => {
    const out = await completeWithFakeTimers((async () => undefined) as unknown as NdIdVerify);
    expect(out).toMatchObject({ kind: 'error', err: { message: expect.stringMatching(/verifyTimeout/) } });
  });

  it('a verify that answers in time is not cut off by verifyTimeout', async () => {
    const out = await completeWithFakeTimers((_u: NdIdUser, done: NdIdVerifyDone) => {
      setTimeout(() => done(null, { id: 'in-time' }), 4999);
    });
    expect(out).toMatchObject({ kind: 'success', user: { id: 'in-time' } });
  });
});
