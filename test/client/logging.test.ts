/**
 * IdClient's logging: every failure path of a login is driven with known secret values (client
 * secret, code, verifier, access token, ID token, an NRIC) echoed back by the service wherever it
 * can put them, and no log output, through a logger, the default console path or
 * DEBUG=passport-nd-id*, contains any of them. Server-side failures are logged at warn as
 * provider_call_failed with code, endpoint, status and OAuth error code; the person's own
 * failures are not.
 */
import createDebug from 'debug';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import type { IdClientOptions } from '../../src/client/types.js';
import { IdError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { testKeyPair } from '../helpers/keys.js';
import { importRsaPublicKey } from '../../src/keys.js';
import { sendJson, startStubProvider, STUB_PATHS, type StubProvider } from '../helpers/stub-provider.js';

const SECRET = 'client-secret-KNOWN-4f1c9a77e2';
const CODE = 'auth-code-KNOWN-8b2d61f0c3';
const VERIFIER = 'verifier-KNOWN-' + 'q'.repeat(40);
const ACCESS_TOKEN = 'access-token-KNOWN-5e7a90b1d4';
const NRIC = 'S9812381D';

interface Scenario {
  name: string;
  /** The code the call fails with. */
  code: string;
  /** Logged as provider_call_failed (server-side), with this endpoint. */
  warns?: 'token' | 'userinfo' | 'jwks';
  oauthError?: string;
  client?: Partial<IdClientOptions>;
  setup(stub: StubProvider, echo: string): void | Promise<void>;
  /** Which call fails: the callback, or userinfo after a good callback. */
  step: 'callback' | 'userinfo';
}

const scenarios: Scenario[] = [
  {
    name: 'token endpoint 500',
    code: 'provider_server_error',
    warns: 'token',
    step: 'callback',
    setup: (s, echo) =>
      s.override(STUB_PATHS.token, (_r, res) => sendJson(res, 500, { error: 'server_error', error_description: echo })),
  },
  {
    name: 'client credentials refused',
    code: 'token_request_failed',
    warns: 'token',
    oauthError: 'invalid_client',
    step: 'callback',
    setup: (s, echo) =>
      s.override(STUB_PATHS.token, (_r, res) =>
        sendJson(res, 401, { error: 'invalid_client', error_description: echo }),
      ),
  },
  {
    name: 'client not allowed',
    code: 'token_request_failed',
    warns: 'token',
    oauthError: 'unauthorized_client',
    step: 'callback',
    setup: (s, echo) =>
      s.override(STUB_PATHS.token, (_r, res) =>
        sendJson(res, 400, { error: 'unauthorized_client', error_description: echo }),
      ),
  },
  {
    name: 'code refused (the person side)',
    code: 'token_request_failed',
    step: 'callback',
    setup: (s, echo) =>
      s.override(STUB_PATHS.token, (_r, res) =>
        sendJson(res, 400, { error: 'invalid_grant', error_description: echo }),
      ),
  },
  {
    name: 'an OAuth error code that is itself a secret',
    code: 'token_request_failed',
    step: 'callback',
    setup: (s) => s.override(STUB_PATHS.token, (_r, res) => sendJson(res, 400, { error: SECRET })),
  },
  {
    name: 'token endpoint redirects',
    code: 'provider_redirect_refused',
    warns: 'token',
    step: 'callback',
    setup: (s) =>
      s.override(STUB_PATHS.token, (_r, res) => {
        res.writeHead(302, { Location: `https://evil.example/?code=${CODE}&secret=${SECRET}` }).end();
      }),
  },
  {
    name: 'token endpoint answers non-JSON',
    code: 'provider_invalid_response',
    warns: 'token',
    step: 'callback',
    setup: (s, echo) =>
      s.override(STUB_PATHS.token, (_r, res) => {
        res.writeHead(200, { 'Content-Type': 'text/html' }).end(`<p>${echo}</p>`);
      }),
  },
  {
    name: 'service unreachable',
    code: 'provider_unreachable',
    warns: 'token',
    step: 'callback',
    client: { hostname: 'http://127.0.0.1:9' },
    setup: () => undefined,
  },
  {
    name: 'token endpoint hangs',
    code: 'provider_timeout',
    warns: 'token',
    step: 'callback',
    // Long enough for the discovery read before it on a loaded machine; the token endpoint never answers.
    client: { timeout: 1000 },
    setup: (s) => s.override(STUB_PATHS.token, () => undefined),
  },
  {
    name: 'key set 503',
    code: 'provider_server_error',
    warns: 'jwks',
    step: 'callback',
    setup: (s, echo) => s.override(STUB_PATHS.jwks, (_r, res) => sendJson(res, 503, { error: echo })),
  },
  {
    name: 'unusable key set',
    code: 'jwks_invalid',
    warns: 'jwks',
    step: 'callback',
    setup: (s, echo) => s.override(STUB_PATHS.jwks, (_r, res) => sendJson(res, 200, { keys: echo })),
  },
  {
    name: 'ID token for another audience',
    code: 'id_token_aud_mismatch',
    step: 'callback',
    setup: (s) => {
      s.claims = { aud: 'someone-else' };
    },
  },
  {
    name: 'userinfo 502',
    code: 'provider_server_error',
    warns: 'userinfo',
    step: 'userinfo',
    setup: (s, echo) =>
      s.override(STUB_PATHS.userinfo, (_r, res) =>
        sendJson(res, 502, { error: 'bad_gateway', error_description: echo }),
      ),
  },
  {
    name: 'access token refused (the person side)',
    code: 'userinfo_request_failed',
    step: 'userinfo',
    setup: (s, echo) =>
      s.override(STUB_PATHS.userinfo, (_r, res) =>
        sendJson(res, 401, { error: 'invalid_token', error_description: echo }),
      ),
  },
  {
    name: 'block key for another key',
    code: 'userinfo_key_decrypt_failed',
    warns: 'userinfo',
    step: 'userinfo',
    setup: (s) => {
      s.userinfo.recipient = importRsaPublicKey(testKeyPair('stranger').publicKeyPem);
    },
  },
  {
    name: 'attribute sent in clear',
    code: 'userinfo_malformed',
    warns: 'userinfo',
    step: 'userinfo',
    setup: (s) =>
      s.override(STUB_PATHS.userinfo, async (_r, res) =>
        sendJson(res, 200, { ...(await s.userinfoBody()), data: { 'profile.nric_number': NRIC } }),
      ),
  },
];

let stub: StubProvider;
let idToken: string;
const secrets = (): string[] => [
  SECRET,
  CODE,
  VERIFIER,
  ACCESS_TOKEN,
  idToken,
  NRIC,
  ...idToken.split('.').filter((p) => p.length > 10),
];

beforeAll(async () => {
  stub = await startStubProvider();
  stub.accessToken = ACCESS_TOKEN;
  stub.userinfo.data['profile.nric_number'] = NRIC;
});
afterAll(async () => {
  await stub.close();
});
afterEach(() => {
  vi.restoreAllMocks();
  createDebug.disable();
  stub.claims = {};
  delete stub.userinfo.recipient;
  for (const path of Object.values(STUB_PATHS)) stub.override(path, undefined);
});

/** Runs one scenario with a fresh client; returns the error it failed with. */
async function run(scenario: Scenario, options: Partial<IdClientOptions>): Promise<IdError> {
  const nonce = 'nonce-known-1234';
  stub.nonce = nonce;
  idToken = await stub.idToken();
  const echo = `${SECRET} ${CODE} ${VERIFIER} ${ACCESS_TOKEN} ${idToken} ${NRIC}`;
  const client = new IdClient({
    clientId: stub.clientId,
    clientSecret: SECRET,
    privateKey: stub.rpPrivateKeyPem,
    redirectUri: 'https://rp.example/callback',
    hostname: stub.origin,
    jwksCacheMaxAge: 0,
    ...options,
    ...scenario.client,
  });
  try {
    if (scenario.step === 'userinfo') {
      const { sub } = await client.callback({ code: CODE, codeVerifier: VERIFIER, nonce });
      await scenario.setup(stub, echo);
      await client.userinfo({ sub, accessToken: ACCESS_TOKEN });
    } else {
      await scenario.setup(stub, echo);
      await client.callback({ code: CODE, codeVerifier: VERIFIER, nonce });
    }
  } catch (err) {
    expect(err).toBeInstanceOf(IdError);
    expect((err as IdError).code).toBe(scenario.code);
    return err as IdError;
  } finally {
    client.close();
  }
  throw new Error(`${scenario.name}: the call succeeded`);
}

function expectClean(output: string): void {
  for (const value of secrets()) expect(output, 'a secret value reached the log').not.toContain(value);
}

/** A logger that keeps everything it is given, at every level. */
function capturingLogger(): Logger & { lines: { level: string; event: Record<string, unknown>; text: string }[] } {
  const lines: { level: string; event: Record<string, unknown>; text: string }[] = [];
  const at = (level: string) => (event: unknown, text: unknown) => {
    lines.push({ level, event: event as Record<string, unknown>, text: String(text) });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('IdClient logging through a logger', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))(
    '%s: logs no secret, and warns only when server-side',
    async (_n, scenario) => {
      const logger = capturingLogger();
      const err = await run(scenario, { logger });
      expectClean(JSON.stringify(logger.lines));
      expectClean(err.message);
      const warns = logger.lines.filter((l) => l.level === 'warn');
      if (scenario.warns === undefined) {
        expect(warns).toEqual([]);
      } else {
        expect(warns).toHaveLength(1);
        expect(warns[0]!.event).toMatchObject({
          event: 'provider_call_failed',
          code: scenario.code,
          endpoint: scenario.warns,
        });
        if (err.status !== undefined) expect(warns[0]!.event.status).toBe(err.status);
        if (scenario.oauthError) expect(warns[0]!.event.oauthError).toBe(scenario.oauthError);
      }
    },
  );

  it('logs the key-set fetch at debug', async () => {
    const logger = capturingLogger();
    const client = new IdClient({
      clientId: stub.clientId,
      clientSecret: SECRET,
      privateKey: stub.rpPrivateKeyPem,
      redirectUri: 'https://rp.example/cb',
      hostname: stub.origin,
      logger,
    });
    stub.nonce = 'n-123456';
    await client.callback({ code: CODE, codeVerifier: VERIFIER, nonce: 'n-123456' });
    client.close();
    expect(logger.lines).toEqual([
      { level: 'debug', event: { event: 'jwks_fetched', usableKeys: 1, refetch: false }, text: expect.any(String) },
    ]);
  });

  it('refuses a logger without the four level methods, naming the option', () => {
    const base = { clientId: 'c', clientSecret: 's', privateKey: stub.rpPrivateKeyPem, hostname: 'https://id.example' };
    expect(() => new IdClient({ ...base, logger: { info() {} } as never })).toThrow(
      /IdClient: logger must have debug, info, warn and error/,
    );
  });
});

describe('IdClient logging without a logger', () => {
  it.each(scenarios.map((s) => [s.name, s] as const))('%s: console.error gets no secret', async (_n, scenario) => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await run(scenario, {});
    const output = spy.mock.calls.flat().map(String).join('\n');
    expectClean(output);
    if (scenario.warns) expect(output).toContain(`"endpoint":"${scenario.warns}"`);
    else expect(output).toBe('');
  });

  it.each(scenarios.map((s) => [s.name, s] as const))(
    '%s: DEBUG=passport-nd-id* output has no secret',
    async (_n, scenario) => {
      createDebug.enable('passport-nd-id*');
      const chunks: string[] = [];
      vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        chunks.push(String(chunk));
        return true;
      });
      vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
        chunks.push(args.map(String).join(' '));
      });
      vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
        chunks.push(args.map(String).join(' '));
      });
      await run(scenario, {});
      const output = chunks.join('\n');
      if (scenario.warns) expect(output).toContain('passport-nd-id:client warn');
      expectClean(output);
    },
  );
});
