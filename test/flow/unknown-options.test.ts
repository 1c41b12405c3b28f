/**
 * No option is silently ignored: a typo, or a setting given to the wrong constructor, on every
 * public constructor and factory is a TypeError naming it, the nearest valid name, and where the
 * setting lives. (Before, `ndIdRouter({ idleTimeout: 600000 })` started without a word and the
 * app quietly kept the 30-minute default.)
 */
import { describe, expect, it } from 'vitest';
import { createSessionPolicy, NdIdStrategy, ndIdRouter, requireRecentSignIn, requireSignIn } from '../../src/index.js';
import {
  createLoginFlow,
  createMemoryReplayStore,
  createMemorySignOutStore,
  createRedisReplayStore,
  createRedisSignOutStore,
  IdClient,
  type RedisCommandClient,
} from '../../src/client.js';
import { createCookieSession, createFetchLogin } from '../../src/fetch.js';
import { ndIdGuardResult, ndIdSignInGuard } from '../../src/nest.js';
import { createProvider, createTestProvider, startProvider } from '../helpers/provider.js';
import { nearestName, unknownOptionMessage } from '../../src/options-check.js';
import { testKeyPair } from '../helpers/keys.js';

const keys = testKeyPair('rp');
const CLIENT = {
  clientId: 'app',
  clientSecret: 'app-secret',
  privateKey: keys.privateKeyPem,
  hostname: 'https://id.example',
};
const STRATEGY = { ...CLIENT, callbackURL: 'https://app.example/auth/callback' };
const SECRET = 'a-cookie-secret-of-at-least-32-characters!';
const redis: RedisCommandClient = { sendCommand: async () => null } as unknown as RedisCommandClient;
const loose = <T>(value: Record<string, unknown>): T => value as T;

/** The TypeError `run` throws (synchronously, or as its rejection). */
async function refusal(run: () => unknown): Promise<TypeError> {
  let caught: unknown;
  try {
    await run();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(TypeError);
  return caught as TypeError;
}

describe('an unknown option is refused by every public constructor and factory', () => {
  it.each<[string, () => unknown, string, RegExp]>([
    [
      'createSessionPolicy',
      () => createSessionPolicy(loose({ idelTimeout: 600_000 })),
      'idelTimeout',
      /nearest option of createSessionPolicy\(\) is "idleTimeout"/,
    ],
    [
      'ndIdRouter',
      () => ndIdRouter(loose({ idleTimeout: 600_000 })),
      'idleTimeout',
      /idleTimeout is an option of createSessionPolicy\(\), not of ndIdRouter\(\): give sessions: createSessionPolicy\(\{ idleTimeout \}\) here/,
    ],
    [
      'ndIdRouter (typo)',
      () => ndIdRouter(loose({ sucessRedirect: '/' })),
      'sucessRedirect',
      /nearest option of ndIdRouter\(\) is "successRedirect"/,
    ],
    [
      'new NdIdStrategy',
      () => new NdIdStrategy(loose({ ...STRATEGY, idleTimeout: 600_000 })),
      'idleTimeout',
      /idleTimeout is an option of createSessionPolicy\(\), not of new NdIdStrategy\(\): give sessions: createSessionPolicy\(\{ idleTimeout \}\) here/,
    ],
    [
      'new NdIdStrategy (typo)',
      () => new NdIdStrategy(loose({ ...STRATEGY, clockTolerence: 5 })),
      'clockTolerence',
      /nearest option of new NdIdStrategy\(\) is "clockTolerance"/,
    ],
    [
      'requireSignIn',
      () => requireSignIn(loose({ idleTimeout: 600_000 })),
      'idleTimeout',
      /idleTimeout is an option of createSessionPolicy\(\), not of requireSignIn\(\): give sessions: createSessionPolicy/,
    ],
    [
      'requireRecentSignIn',
      () => requireRecentSignIn(300, loose({ maxSessionAge: 1 })),
      'maxSessionAge',
      /maxSessionAge is an option of createSessionPolicy\(\)/,
    ],
    [
      'new IdClient',
      () => new IdClient(loose({ ...CLIENT, hostnme: 'https://id.example' })),
      'hostnme',
      /nearest option of new IdClient\(\) is "hostname"/,
    ],
    [
      'new IdClient (misplaced)',
      () => new IdClient(loose({ ...CLIENT, callbackURL: 'https://app.example/cb' })),
      'callbackURL',
      /callbackURL is an option of new NdIdStrategy\(\), not of new IdClient\(\)/,
    ],
    [
      'createLoginFlow',
      () => createLoginFlow(loose({ client: new IdClient(CLIENT), redirectUrl: 'https://app.example/cb' })),
      'redirectUrl',
      /nearest option of createLoginFlow\(\) is "redirectUri"/,
    ],
    [
      'createFetchLogin',
      () =>
        createFetchLogin(
          loose({ client: new IdClient(CLIENT), session: createCookieSession({ secret: SECRET }), sesions: {} }),
        ),
      'sesions',
      /nearest option of createFetchLogin\(\) is "sessions"/,
    ],
    [
      'createFetchLogin (misplaced)',
      () =>
        createFetchLogin(
          loose({ client: new IdClient(CLIENT), session: createCookieSession({ secret: SECRET }), secret: SECRET }),
        ),
      'secret',
      /secret is an option of createCookieSession\(\), not of createFetchLogin\(\): give session: createCookieSession\(\{ secret \}\) here/,
    ],
    [
      'createCookieSession',
      () => createCookieSession(loose({ secret: SECRET, maxage: 60_000 })),
      'maxage',
      /nearest option of createCookieSession\(\) is "maxAge"/,
    ],
    [
      'ndIdSignInGuard',
      () => ndIdSignInGuard(loose({ recentSecond: 60 })),
      'recentSecond',
      /nearest option of ndIdSignInGuard\(\) is "recentSeconds"/,
    ],
    [
      'ndIdGuardResult',
      () => ndIdGuardResult(null, { sub: 'x' }, undefined, undefined, loose({ retryHerf: '/auth/login' })),
      'retryHerf',
      /nearest option of ndIdGuardResult\(\) is "retryHref"/,
    ],
    [
      'createMemoryReplayStore',
      () => createMemoryReplayStore(loose({ maxKey: 10 })),
      'maxKey',
      /nearest option of createMemoryReplayStore\(\) is "maxKeys"/,
    ],
    [
      'createRedisReplayStore',
      () => createRedisReplayStore(redis, loose({ prefx: 'a:' })),
      'prefx',
      /nearest option of createRedisReplayStore\(\) is "prefix"/,
    ],
    [
      'createMemorySignOutStore',
      () => createMemorySignOutStore(loose({ maxEntry: 10 })),
      'maxEntry',
      /nearest option of createMemorySignOutStore\(\) is "maxEntries"/,
    ],
    [
      'createRedisSignOutStore',
      () => createRedisSignOutStore(redis, loose({ prefixes: 'a:' })),
      'prefixes',
      /nearest option of createRedisSignOutStore\(\) is "prefix"/,
    ],
    [
      'createProvider',
      () => createProvider(loose({ baseUrl: 'http://127.0.0.1:4000', autoAprove: true })),
      'autoAprove',
      /did you mean "autoApprove"/,
    ],
    [
      'startProvider',
      () => startProvider(loose({ autoAprove: true })),
      'autoAprove',
      /nearest option of startProvider\(\) is "autoApprove"/,
    ],
    [
      'createTestProvider',
      () => createTestProvider(loose({ redirectUrl: 'http://127.0.0.1:3000/cb' })),
      'redirectUrl',
      /nearest option of createTestProvider\(\) is "redirectUri"/,
    ],
  ])('%s', async (_name, run, option, where) => {
    const err = await refusal(run);
    expect(err.message).toContain(`"${option}"`);
    expect(err.message).toMatch(where);
  });

  it('the fetch guard refuses an unknown per-route option', async () => {
    const auth = createFetchLogin({ client: new IdClient(CLIENT), session: createCookieSession({ secret: SECRET }) });
    const err = await refusal(() =>
      auth.requireSignIn(
        new Request('http://app.example/account'),
        () => new Response('ok'),
        loose({ loginpath: '/auth/login' }),
      ),
    );
    expect(err.message).toMatch(
      /auth\.requireSignIn: unknown option "loginpath"\. .*nearest option of auth\.requireSignIn\(\) is "loginPath"/,
    );
  });

  it('a name near nothing lists the valid ones; a name that is not an identifier is not echoed', () => {
    expect(unknownOptionMessage('createCookieSession()', 'zzzzzzzzzzzz')).toMatch(
      /The options of createCookieSession\(\) are: secret, cookieName, maxAge, secure, path, clock\./,
    );
    expect(unknownOptionMessage('ndIdRouter()', 'idelTimeout')).toMatch(
      /Did you mean "idleTimeout", an option of createSessionPolicy\(\)\?/,
    );
    const hostile = unknownOptionMessage('ndIdRouter()', '<script>alert(1)</script>');
    expect(hostile).not.toContain('<script>');
    expect(nearestName('IDLETIMEOUT', ['idleTimeout', 'maxSessionAge'])).toBe('idleTimeout');
    expect(nearestName('x', ['idleTimeout'])).toBeUndefined();
  });

  it('every valid option is still accepted', () => {
    expect(() =>
      createSessionPolicy({ maxSessionAge: 3_600_000, idleTimeout: 600_000, touchInterval: 60_000 }),
    ).not.toThrow();
    expect(() =>
      requireSignIn({
        sessions: createSessionPolicy(),
        sessionCookieName: 'sid',
        loginPath: '/auth/login',
        api: false,
      }),
    ).not.toThrow();
    expect(() =>
      createCookieSession({ secret: SECRET, cookieName: 'c', maxAge: 60_000, secure: true, path: '/' }),
    ).not.toThrow();
  });
});
