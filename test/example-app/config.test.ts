import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_SCOPE, loadConfig } from '../../example-app/config.js';
import { testKeyPair } from '../helpers/keys.js';

const SECRET = 'a-session-secret-that-is-long-enough-1234';

function realProviderEnv(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    ND_ID_HOSTNAME: 'https://id.example',
    ND_ID_CLIENT_ID: 'rp-1',
    ND_ID_CLIENT_SECRET: 'client-secret-value',
    ND_ID_PRIVATE_KEY: testKeyPair().privateKeyPem,
    ND_ID_REDIRECT_URI: 'https://rp.example/auth/callback',
    SESSION_SECRET: SECRET,
    TRUST_PROXY: '1',
    ...overrides,
  };
}

function problemsOf(env: Record<string, string | undefined>): readonly string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('loadConfig accepted the configuration');
}

describe('example app configuration', () => {
  it('with no ND_ID_* variable, runs the embedded provider on port 3000', () => {
    const config = loadConfig({});
    expect(config.mode).toBe('embedded');
    expect(config.site.port).toBe(3000);
    expect(config.site.host).toBe('127.0.0.1');
    expect(config.mode === 'embedded' && config.scope).toBe(DEFAULT_SCOPE);
  });

  it("ND_ID_PROVIDER_PORT fixes the built-in provider's port and keeps the embedded mode; it is refused with another service", () => {
    const config = loadConfig({ ND_ID_PROVIDER_PORT: '4455' });
    expect(config.mode).toBe('embedded');
    expect(config.mode === 'embedded' && config.providerPort).toBe(4455);
    const fallback = loadConfig({});
    expect(fallback.mode === 'embedded' && fallback.providerPort).toBe(0);
    expect(problemsOf({ ND_ID_PROVIDER_PORT: 'x' })).toContain(
      'ND_ID_PROVIDER_PORT must be a whole number from 0 to 65535',
    );
    expect(problemsOf(realProviderEnv({ ND_ID_PROVIDER_PORT: '4455' })).join('\n')).toMatch(
      /ND_ID_PROVIDER_PORT sets the port of the built-in provider only/,
    );
  });

  it('PORT overrides the port', () => {
    expect(loadConfig({ PORT: '4123' }).site.port).toBe(4123);
  });

  it('a complete real-provider configuration is accepted', () => {
    const config = loadConfig(realProviderEnv({ REDIS_URL: 'redis://127.0.0.1:6379' }));
    expect(config.mode).toBe('provider');
    if (config.mode !== 'provider') return;
    expect(config.provider).toMatchObject({
      hostname: 'https://id.example',
      clientId: 'rp-1',
      redirectUri: 'https://rp.example/auth/callback',
      scope: DEFAULT_SCOPE,
    });
    expect(config.site.redisUrl).toBe('redis://127.0.0.1:6379');
    expect(config.site.trustProxy).toBe(1);
  });

  it('a private key with literal \\n escapes, as environment variables carry it, is accepted', () => {
    const escaped = testKeyPair().privateKeyPkcs1Pem.trim().split('\n').join('\\n');
    const config = loadConfig(realProviderEnv({ ND_ID_PRIVATE_KEY: escaped }));
    expect(config.mode === 'provider' && config.provider.privateKey).toContain('-----BEGIN RSA PRIVATE KEY-----\n');
  });

  it('reads the private key from ND_ID_PRIVATE_KEY_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'example-config-'));
    const file = join(dir, 'key.pem');
    writeFileSync(file, testKeyPair().privateKeyPem);
    const config = loadConfig(realProviderEnv({ ND_ID_PRIVATE_KEY: undefined, ND_ID_PRIVATE_KEY_FILE: file }));
    expect(config.mode).toBe('provider');
  });

  it('setting one ND_ID_* variable names every other missing one, one sentence each', () => {
    const problems = problemsOf({ ND_ID_HOSTNAME: 'https://id.example' });
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/^ND_ID_CLIENT_ID is required/);
    expect(problems[1]).toMatch(/^ND_ID_CLIENT_SECRET is required/);
    expect(problems[2]).toMatch(/^ND_ID_PRIVATE_KEY .*or ND_ID_PRIVATE_KEY_FILE .*is required/);
    expect(problems[3]).toMatch(/^ND_ID_REDIRECT_URI is required/);
    expect(problems[4]).toMatch(/^SESSION_SECRET is required/);
  });

  it.each([
    ['ND_ID_HOSTNAME', 'not a url', /^ND_ID_HOSTNAME must be an absolute http\(s\) URL/],
    ['ND_ID_HOSTNAME', 'http://id.example', /^ND_ID_HOSTNAME must use https/],
    ['ND_ID_HOSTNAME', 'https://id.example/v2', /^ND_ID_HOSTNAME must be an origin only/],
    ['ND_ID_REDIRECT_URI', 'http://rp.example/auth/callback', /^ND_ID_REDIRECT_URI must use https/],
    ['ND_ID_REDIRECT_URI', 'https://rp.example/', /^ND_ID_REDIRECT_URI needs a path of its own/],
    ['ND_ID_PRIVATE_KEY', 'not a key', /^ND_ID_PRIVATE_KEY is not a readable PEM private key/],
    ['ND_ID_PRIVATE_KEY_FILE', '/nonexistent/key.pem', /^Set only one of ND_ID_PRIVATE_KEY and ND_ID_PRIVATE_KEY_FILE/],
    ['SESSION_SECRET', 'short', /^SESSION_SECRET must be at least 32 characters/],
    ['REDIS_URL', 'http://127.0.0.1:6379', /^REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/],
    ['PORT', 'eighty', /^PORT must be a whole number/],
    ['TRUST_PROXY', 'false', /^TRUST_PROXY is required when ND_ID_REDIRECT_URI is https/],
    ['ND_ID_SCOPE', 'profile.name', /^ND_ID_SCOPE must include "openid"/],
    ['LOGIN_TTL_SECONDS', '0', /^LOGIN_TTL_SECONDS must be a whole number from 1 to 2592000/],
    ['SESSION_MAX_AGE_SECONDS', '8h', /^SESSION_MAX_AGE_SECONDS must be a whole number/],
    ['MAX_MEMORY_SESSIONS', '-5', /^MAX_MEMORY_SESSIONS must be a whole number/],
  ])('an invalid %s (%s) is refused with a sentence naming it', (name, bad, message) => {
    const problems = problemsOf(realProviderEnv({ [name]: bad }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('session lifetimes and the in-memory bound are read in seconds and sessions, in both modes', () => {
    const embedded = loadConfig({
      LOGIN_TTL_SECONDS: '60',
      SESSION_MAX_AGE_SECONDS: '120',
      MAX_MEMORY_SESSIONS: '5000',
    });
    expect(embedded.site).toMatchObject({ loginTtlMs: 60_000, sessionMaxAgeMs: 120_000, maxMemorySessions: 5000 });
    const real = loadConfig(realProviderEnv({ LOGIN_TTL_SECONDS: '30' }));
    expect(real.site.loginTtlMs).toBe(30_000);
    expect(real.site.sessionMaxAgeMs).toBeUndefined();
  });

  it('MAX_MEMORY_SESSIONS together with REDIS_URL is refused: the bound would not apply', () => {
    const problems = problemsOf(realProviderEnv({ REDIS_URL: 'redis://127.0.0.1:6379', MAX_MEMORY_SESSIONS: '100' }));
    expect(problems).toEqual([expect.stringMatching(/^MAX_MEMORY_SESSIONS applies only without REDIS_URL/)]);
  });

  it('a key file that cannot be read is named, without its path contents', () => {
    const problems = problemsOf(
      realProviderEnv({ ND_ID_PRIVATE_KEY: undefined, ND_ID_PRIVATE_KEY_FILE: '/nonexistent/key.pem' }),
    );
    expect(problems).toEqual(['ND_ID_PRIVATE_KEY_FILE names a file that cannot be read (ENOENT)']);
  });

  it('an invalid private key is reported without echoing the value', () => {
    const bad = '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----';
    const problems = problemsOf(realProviderEnv({ ND_ID_PRIVATE_KEY: bad }));
    expect(problems.join('\n')).not.toContain('c2VjcmV0');
  });

  it('plain http is accepted for a service and app on loopback', () => {
    const config = loadConfig(
      realProviderEnv({
        ND_ID_HOSTNAME: 'http://127.0.0.1:4000',
        ND_ID_REDIRECT_URI: 'http://localhost:3000/auth/callback',
        TRUST_PROXY: undefined,
      }),
    );
    expect(config.mode).toBe('provider');
  });
});

describe('ND_ID_PROFILE=fapi2', () => {
  const assertionKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ format: 'pem', type: 'pkcs8' })
    .toString();

  it('replaces the client secret by the assertion key, and carries the context message', () => {
    const config = loadConfig(
      realProviderEnv({
        ND_ID_PROFILE: 'fapi2',
        ND_ID_CLIENT_SECRET: undefined,
        ND_ID_CLIENT_ASSERTION_KEY: assertionKey,
        ND_ID_CONTEXT_MESSAGE: 'Sign in to the example app',
      }),
    );
    if (config.mode !== 'provider') throw new Error('expected the real-provider mode');
    expect(config.provider).toMatchObject({ profile: 'fapi2', contextMessage: 'Sign in to the example app' });
    expect(config.provider.clientSecret).toBeUndefined();
    expect(config.provider.clientAssertionKey).toContain('BEGIN PRIVATE KEY');
  });

  it('names every mistake: no assertion key, a leftover secret, an unknown profile, a message too long', () => {
    expect(problemsOf(realProviderEnv({ ND_ID_PROFILE: 'fapi2' }))).toEqual([
      expect.stringMatching(/^ND_ID_CLIENT_SECRET is not used with ND_ID_PROFILE=fapi2/),
      expect.stringMatching(/^ND_ID_CLIENT_ASSERTION_KEY \(the PEM text\) or ND_ID_CLIENT_ASSERTION_KEY_FILE/),
    ]);
    expect(problemsOf(realProviderEnv({ ND_ID_PROFILE: 'fapi3' }))).toEqual([
      expect.stringMatching(/^ND_ID_PROFILE must be "fapi2"/),
    ]);
    expect(
      problemsOf(
        realProviderEnv({
          ND_ID_PROFILE: 'fapi2',
          ND_ID_CLIENT_SECRET: undefined,
          ND_ID_CLIENT_ASSERTION_KEY: assertionKey,
          ND_ID_CONTEXT_MESSAGE: 'x'.repeat(101),
        }),
      ),
    ).toEqual([expect.stringMatching(/ND_ID_CONTEXT_MESSAGE must be at most 100 characters/)]);
    expect(problemsOf(realProviderEnv({ ND_ID_CONTEXT_MESSAGE: 'hello' }))).toEqual([
      expect.stringMatching(/only with ND_ID_PROFILE=fapi2/),
    ]);
  });
});
