/**
 * ndIdFastify()'s options are checked when it is built, and a route reached without a session
 * plugin says so (500, session_missing) rather than signing anyone in, over real HTTP.
 */
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { ndIdFastify, ndIdFastifyGuards } from '../../src/fastify.js';
import { testKeyPair } from '../helpers/keys.js';

const client = new IdClient({
  clientId: 'app',
  clientSecret: 'app-secret',
  privateKey: testKeyPair('rp').privateKeyPem,
  hostname: 'https://id.example',
  redirectUri: 'https://app.example/auth/callback',
});
const loose = (value: Record<string, unknown>) => value as unknown as Parameters<typeof ndIdFastify>[0];

describe('ndIdFastify options', () => {
  it('refuses an unknown option, naming it (a session setting given here would otherwise be ignored)', () => {
    expect(() => ndIdFastify(loose({ client, idleTimeout: 60_000 }))).toThrow(/ndIdFastify\(\).*idleTimeout/);
  });

  it('refuses redirects and a login path that leave the site, and a userKey the flow uses', () => {
    expect(() => ndIdFastify({ client, successRedirect: 'https://evil.example/' })).toThrow(/successRedirect/);
    expect(() => ndIdFastify({ client, logoutRedirect: '//evil.example' })).toThrow(/logoutRedirect/);
    expect(() => ndIdFastify({ client, loginPath: 'auth/login' })).toThrow(/loginPath/);
    expect(() => ndIdFastify({ client, userKey: 'nd-id.signin' })).toThrow(/userKey/);
  });

  it('refuses a step-up guard without whole seconds, and unknown guard options', () => {
    const guards = ndIdFastifyGuards();
    expect(() => guards.requireRecentSignIn(-1)).toThrow(/whole number of seconds/);
    expect(() => guards.requireSignIn(loose({ loginpath: '/x' }) as never)).toThrow(/loginpath/);
  });
});

describe('ndIdFastify without a session plugin', () => {
  const app = Fastify();
  afterEach(async () => {
    await app.close();
  });

  it('answers the login route 500 (no store) and the guard the same, never signing anyone in', async () => {
    const auth = ndIdFastify({ client });
    await app.register(auth.plugin, { prefix: '/auth' });
    app.get('/account', { preHandler: auth.requireSignIn() }, async () => 'secret');
    const base = await app.listen({ host: '127.0.0.1', port: 0 });
    for (const path of ['/auth/login', '/account']) {
      const res = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(500);
      expect(res.headers.get('cache-control'), path).toContain('no-store');
      expect(await res.text(), path).not.toContain('secret');
    }
  });
});
