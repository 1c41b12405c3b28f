/**
 * Options are read from what the caller gave, never through the prototype chain: after another
 * bug pollutes `Object.prototype`, no public constructor or factory takes the planted value. Each
 * case plants it, builds the object and shows the planted value has no effect; the pollution is
 * removed in `finally`, so nothing else in the run sees it.
 */
import { generateKeyPairSync } from 'node:crypto';
import passport from 'passport';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import { createFetchLogin } from '../../src/adapters/fetch.js';
import { ndIdSignInGuard } from '../../src/adapters/nest-guard.js';
import { IdClient } from '../../src/client/id-client.js';
import { IdError } from '../../src/errors.js';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { requireSignIn } from '../../src/passport/require-sign-in.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { ndIdSession } from '../../src/passport/signed-in-session.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { createProvider } from '../../src/provider/index.js';
import { providerOptions } from '../helpers/provider-fixtures.js';
import { clientFor, login, startStubProvider, type StubProvider } from '../client/support.js';

/** Runs `body` with `planted` on Object.prototype (enumerable, as `obj.__proto__.x = v` plants it), removing every planted name afterwards. */
function polluted<T>(planted: Record<string, unknown>, body: () => T): T {
  plant(planted);
  try {
    return body();
  } finally {
    unplant(planted);
  }
}

/** As {@link polluted}, for the whole of an async `body`. */
async function pollutedWhile<T>(planted: Record<string, unknown>, body: () => Promise<T>): Promise<T> {
  plant(planted);
  try {
    return await body();
  } finally {
    unplant(planted);
  }
}

function plant(planted: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(planted)) {
    Object.defineProperty(Object.prototype, name, { value, configurable: true, writable: true, enumerable: true });
  }
}

function unplant(planted: Record<string, unknown>): void {
  for (const name of Object.keys(planted)) delete (Object.prototype as Record<string, unknown>)[name];
}

const base = {
  clientId: 'app',
  clientSecret: 'a-client-secret-0123456789',
  privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string,
};

let stub: StubProvider;
beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(async () => {
  await stub.close();
});

describe('a polluted Object.prototype', () => {
  it('allowInsecureHttp: IdClient and NdIdStrategy still refuse a plain-http hostname off loopback', () => {
    polluted({ allowInsecureHttp: true }, () => {
      expect(() => new IdClient({ ...base, hostname: 'http://id.example' })).toThrow(/plain http/);
      expect(
        () => new NdIdStrategy({ ...base, hostname: 'http://id.example', callbackURL: 'https://app.example/cb' }),
      ).toThrow(/plain http/);
    });
  });

  it('clockTolerance: an ID token expired an hour ago is still refused over HTTP (id_token_expired)', async () => {
    const now = Math.floor(Date.now() / 1000);
    stub.claims = { iat: now - 7200, exp: now - 3600 };
    const client = polluted({ clockTolerance: 1e12 }, () => clientFor(stub));
    try {
      const err = await login(client, stub).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IdError);
      expect((err as IdError).code).toBe('id_token_expired');
    } finally {
      stub.claims = {};
      client.close();
    }
  });

  it('idleTimeout: the session policy keeps its 30-minute idle timeout', () => {
    const policy = polluted({ idleTimeout: false }, () => createSessionPolicy());
    expect(policy.idleTimeout).toBe(30 * 60 * 1000);
  });

  it('secure: a cookie session set on an https request is still Secure', async () => {
    const setCookie = await pollutedWhile({ secure: false }, async () => {
      const store = createCookieSession({ secret: 's'.repeat(32) });
      const request = new Request('https://app.example/auth/login');
      const session = await store.load(request);
      session.set('k', 'v');
      return store.commit(session, request);
    });
    expect(setCookie).toMatch(/; Secure/);
  });

  it('sessions: the router, ndIdSession, requireSignIn, the Nest guard and createFetchLogin use their own default policy', () => {
    const notAPolicy = { check: 'not a function' };
    polluted({ sessions: notAPolicy }, () => {
      const authenticator = new passport.Passport();
      expect(() => ndIdRouter({ passport: authenticator })).not.toThrow();
      expect(() => ndIdSession({ passport: authenticator })).not.toThrow();
      expect(() => requireSignIn({})).not.toThrow();
      expect(() => ndIdSignInGuard({})).not.toThrow();
      const client = new IdClient({ ...base, hostname: 'http://127.0.0.1:9', redirectUri: 'http://127.0.0.1:9/cb' });
      expect(() =>
        createFetchLogin({ client, session: createCookieSession({ secret: 's'.repeat(32) }) }),
      ).not.toThrow();
      client.close();
    });
  });

  it("issuerPath: the provider's configuration keeps its own issuer", () => {
    const provider = polluted({ issuerPath: '/elsewhere' }, () =>
      createProvider({ ...providerOptions(), baseUrl: 'http://127.0.0.1:9' }),
    );
    try {
      expect(provider.issuer).toBe('http://127.0.0.1:9/v2');
    } finally {
      provider.close();
    }
  });
});
