/**
 * The example app's key variables hold JWK JSON text as well as PEM: the JWKs that
 * `nd-id-provider init --profile fapi2` writes, pasted into the environment, sign a person in over
 * HTTP against the bundled provider; a truncated or public JWK is named at start-up, unechoed.
 */
import { createPrivateKey } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExampleApp } from '../../example-app/app.js';
import { ConfigError, loadConfig } from '../../example-app/config.js';
import { initFapiProvider, type FapiInit } from '../helpers/fapi-init.js';
import type { StartedProvider } from '../helpers/provider.js';

const CALLBACK = 'http://127.0.0.1:3000/auth/callback';
const CLIENT_ID = 'jwk-env-app';

let init: FapiInit;
let provider: StartedProvider;
let env: Record<string, string>;

beforeAll(async () => {
  init = await initFapiProvider(CLIENT_ID, CALLBACK);
  provider = init.provider;
  env = {
    ND_ID_HOSTNAME: provider.baseUrl,
    ND_ID_CLIENT_ID: CLIENT_ID,
    ND_ID_PROFILE: 'fapi2',
    ND_ID_PRIVATE_KEY: JSON.stringify(createPrivateKey(init.rsaPem).export({ format: 'jwk' })),
    ND_ID_CLIENT_ASSERTION_KEY: JSON.stringify(init.sig),
    ND_ID_ID_TOKEN_KEY: JSON.stringify(init.enc),
    ND_ID_REDIRECT_URI: CALLBACK,
    SESSION_SECRET: 'a-session-secret-that-is-long-enough-1234',
  };
});
afterAll(async () => {
  await init?.close();
});

function problemsOf(vars: Record<string, string>): readonly string[] {
  try {
    loadConfig(vars);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('example app keys as JWK JSON text', () => {
  it('signs a person in with the JWKs init --profile fapi2 wrote, given in the environment', async () => {
    const config = loadConfig(env);
    if (config.mode !== 'provider') throw new Error('expected the real-provider mode');
    const example = createExampleApp({
      provider: config.provider,
      sessionSecrets: config.site.sessionSecrets,
      log: () => undefined,
    });
    try {
      const browser = request.agent(example.app);
      const login = await browser.get('/auth/login');
      expect(login.status).toBe(302);
      const approved = await fetch(login.headers.location as string, { redirect: 'manual' });
      const back = new URL(approved.headers.get('location')!);
      const done = await browser.get(`${back.pathname}${back.search}`);
      expect(done.status).toBe(302);
      expect(done.headers.location).toBe('/profile');
      const profile = await browser.get('/profile');
      expect(profile.status).toBe(200);
      expect(profile.text).toContain(provider.provider.personas[0]!['profile.name']);
    } finally {
      await example.close();
    }
  });

  it('names a truncated JWK and a public JWK at start-up, without the key text', () => {
    const publicRsa = JSON.parse(env.ND_ID_PRIVATE_KEY!) as Record<string, unknown>;
    delete publicRsa.d;
    const problems = problemsOf({
      ...env,
      ND_ID_CLIENT_ASSERTION_KEY: env.ND_ID_CLIENT_ASSERTION_KEY!.slice(0, -1),
      ND_ID_PRIVATE_KEY: JSON.stringify(publicRsa),
    });
    expect(problems).toEqual([
      expect.stringMatching(/^ND_ID_CLIENT_ASSERTION_KEY starts with "\{" but is not valid JSON/),
      expect.stringMatching(/^ND_ID_PRIVATE_KEY is a JWK without its private member "d"/),
    ]);
    const secrets = [JSON.parse(env.ND_ID_CLIENT_ASSERTION_KEY!).d, publicRsa.n] as string[];
    for (const problem of problems) for (const secret of secrets) expect(problem).not.toContain(secret);
  });
});
