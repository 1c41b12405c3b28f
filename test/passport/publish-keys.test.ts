/**
 * The app's public keys served for registration by jwks_uri, over real HTTP: from ndIdRouter
 * (`publishKeys`) and from the fetch handlers (`jwks()`). Public members only, `sig` and `enc`,
 * the JWKS media type; a base-profile client has nothing to publish.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import passport from 'passport';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { createFetchLogin } from '../../src/adapters/fetch.js';
import { createCookieSession } from '../../src/adapters/cookie-session.js';
import { ndIdRouter } from '../../src/passport/router.js';
import { NdIdStrategy } from '../../src/passport/strategy.js';
import { testKeyPair } from '../helpers/keys.js';

const rsa = testKeyPair('rp');
const assertion = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const retired = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const common = { clientId: 'fapi-app', privateKey: rsa.privateKeyPem, hostname: 'http://127.0.0.1:9' };
const fapi = {
  ...common,
  profile: 'fapi2' as const,
  clientAssertionKey: assertion.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  retiredPublicKeys: [
    {
      publicKey: retired.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      use: 'sig' as const,
      until: '2999-01-01',
    },
  ],
};

let close: (() => void) | undefined;
afterEach(() => {
  close?.();
  close = undefined;
});

async function serve(app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  close = () => server.close();
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function expectPublicJwks(body: { keys: Record<string, unknown>[] }): void {
  expect(body.keys.map((k) => k.use)).toEqual(['sig', 'enc', 'sig']);
  for (const key of body.keys)
    for (const member of PRIVATE_MEMBERS) expect(key, `${String(key.kid)}.${member}`).not.toHaveProperty(member);
  expect(JSON.stringify(body)).not.toContain(String(assertion.privateKey.export({ format: 'jwk' }).d));
}

describe('GET /auth/jwks.json from ndIdRouter({ publishKeys })', () => {
  it('serves the assertion, decryption and retired keys, public members only, as application/jwk-set+json', async () => {
    const authenticator = new passport.Passport();
    const strategy = new NdIdStrategy({ ...fapi, callbackURL: 'http://127.0.0.1:3000/auth/callback' });
    authenticator.use(strategy);
    const app = express();
    app.use('/auth', ndIdRouter({ passport: authenticator, publishKeys: strategy }));
    const base = await serve(app);
    const res = await fetch(`${base}/auth/jwks.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expectPublicJwks((await res.json()) as { keys: Record<string, unknown>[] });
  });

  it('serves nothing without publishKeys, and refuses a base-profile strategy at construction', async () => {
    const authenticator = new passport.Passport();
    const base = new NdIdStrategy({ ...common, clientSecret: 's', callbackURL: 'http://127.0.0.1:3000/auth/callback' });
    authenticator.use(base);
    expect(() => ndIdRouter({ passport: authenticator, publishKeys: base })).toThrow(
      /base profile, which has no keys to publish/,
    );
    const app = express();
    app.use('/auth', ndIdRouter({ passport: authenticator }));
    expect((await fetch(`${await serve(app)}/auth/jwks.json`)).status).toBe(404);
  });
});

describe('FetchLogin.jwks()', () => {
  const session = createCookieSession({ secret: 'x'.repeat(40) });
  it('answers the public key set for a fapi2 client and 404 for a base one', async () => {
    const login = createFetchLogin({
      client: new IdClient({ ...fapi, redirectUri: 'http://127.0.0.1:3000/cb' }),
      session,
    });
    const app = express();
    app.get('/auth/jwks.json', async (_req, res) => {
      const answer = login.jwks();
      res
        .status(answer.status)
        .set('Content-Type', answer.headers.get('content-type') ?? '')
        .send(await answer.text());
    });
    const res = await fetch(`${await serve(app)}/auth/jwks.json`);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwk-set\+json/);
    expectPublicJwks((await res.json()) as { keys: Record<string, unknown>[] });
    const baseLogin = createFetchLogin({
      client: new IdClient({ ...common, clientSecret: 's', redirectUri: 'http://127.0.0.1:3000/cb' }),
      session,
    });
    expect(baseLogin.jwks().status).toBe(404);
  });
});
