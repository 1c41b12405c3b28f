/**
 * The provider's metadata decides, over real HTTP on 127.0.0.1: the endpoints come from the
 * discovery document (read once, cached, read again when a key is unknown), a field that is not
 * https is refused naming it, the spec's paths stand in for `hostname` when the document cannot
 * be read, the ID-token algorithms are the app's allowlist narrowed to the provider's, and the
 * extra authorization parameters never replace the client's own.
 */
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IdError } from '../../src/errors.js';
import { createLoginFlow } from '../../src/flow/login-flow.js';
import { classifyFailure } from '../../src/flow/failure.js';
import { sendJson, STUB_PATHS } from '../helpers/stub-provider.js';
import { recordingLogger } from '../helpers/harness.js';
import { clientFor, login, startStubProvider, type StubProvider } from './support.js';

const DISCOVERY = '/v2/.well-known/openid-configuration';
let stub: StubProvider;

beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(async () => {
  await stub.close();
});
beforeEach(() => {
  stub.override(DISCOVERY, undefined);
  stub.override('/elsewhere/token', undefined);
  stub.override('/elsewhere/jwks', undefined);
  stub.override(STUB_PATHS.token, undefined);
});

/** Serves `doc` (built from the stub's origin) as the discovery document. */
function serveDiscovery(doc: (origin: string) => Record<string, unknown>): void {
  stub.override(DISCOVERY, (_req, res) => sendJson(res, 200, doc(stub.origin)));
}

const standard = (o: string) => ({
  issuer: `${o}/v2`,
  authorization_endpoint: `${o}/v2/authorize-here`,
  token_endpoint: `${o}/elsewhere/token`,
  jwks_uri: `${o}/elsewhere/jwks`,
});

function count(path: string): number {
  return stub.requests.filter((r) => r.path === path).length;
}

async function failure(promise: Promise<unknown>): Promise<IdError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(IdError);
    return err as IdError;
  }
  throw new Error('expected a refusal');
}

describe('endpoints from the discovery document', () => {
  it('an issuer with a path: authorization, token and key-set endpoints are the ones the document names, read once for many logins', async () => {
    serveDiscovery(standard);
    stub.override('/elsewhere/token', (_req, res) =>
      sendJson(res, 200, { access_token: stub.accessToken, id_token: '' }),
    );
    const client = clientFor(stub, { hostname: undefined, issuer: `${stub.origin}/v2` });
    const before = count(DISCOVERY);
    await client.discover();
    const { url } = client.authorizationUrl({ codeChallenge: 'a'.repeat(43), state: 'state-1' });
    expect(url.startsWith(`${stub.origin}/v2/authorize-here?`)).toBe(true);
    stub.override('/elsewhere/token', async (_req, res) =>
      sendJson(res, 200, { access_token: stub.accessToken, id_token: await stub.idToken() }),
    );
    stub.override('/elsewhere/jwks', (_req, res) => sendJson(res, 200, { keys: stub.keys.map((k) => k.publicJwk) }));
    for (let i = 0; i < 3; i += 1) await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(count(DISCOVERY) - before).toBe(1);
    expect(client.discoveryFetchCount).toBe(1);
    expect(client.jwksFetchCount).toBe(1);
    client.close();
  });

  it.each([
    ['token_endpoint', (o: string) => ({ ...standard(o), token_endpoint: 'http://id.example/token' })],
    ['jwks_uri', (o: string) => ({ ...standard(o), jwks_uri: 'http://id.example/jwks' })],
    ['authorization_endpoint', (o: string) => ({ ...standard(o), authorization_endpoint: undefined })],
    ['userinfo_endpoint', (o: string) => ({ ...standard(o), userinfo_endpoint: 'ftp://id.example/me' })],
  ])(
    'a document whose %s is missing, not a URL or not https is refused (discovery_invalid), naming the field',
    async (field, doc) => {
      serveDiscovery(doc);
      const client = clientFor(stub, { hostname: undefined, issuer: `${stub.origin}/v2` });
      const err = await failure(client.discover());
      expect(err.code).toBe('discovery_invalid');
      expect(err.reason).toBe(field);
      expect(err.message).toContain(field);
      expect(classifyFailure(err).serverSide).toBe(true);
      client.close();
    },
  );

  it('with hostname, the spec paths stand in when discovery cannot be reached (500), and a document naming another issuer is still refused', async () => {
    stub.override(DISCOVERY, (_req, res) => sendJson(res, 500, { error: 'server_error' }));
    const client = clientFor(stub);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(
      client.authorizationUrl({ codeChallenge: 'a'.repeat(43) }).url.startsWith(`${stub.origin}/v2/oauth/authorize?`),
    ).toBe(true);
    client.close();
    serveDiscovery((o) => ({ ...standard(o), issuer: `${o}/v2/` }));
    const other = clientFor(stub);
    expect((await failure(login(other, stub))).code).toBe('discovery_issuer_mismatch');
    other.close();
  });

  it('an ID token whose key is not in the set makes the client read the document again, and find the key at the jwks_uri it moved to', async () => {
    serveDiscovery((o) => ({
      ...standard(o),
      token_endpoint: `${o}${STUB_PATHS.token}`,
      jwks_uri: `${o}${STUB_PATHS.jwks}`,
    }));
    const client = clientFor(stub, { hostname: undefined, issuer: `${stub.origin}/v2`, jwksCooldown: 0 });
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    const moved = await stub.rotate('moved-key', { keepOld: true });
    stub.override('/elsewhere/jwks', (_req, res) => sendJson(res, 200, { keys: [moved.publicJwk] }));
    stub.override(STUB_PATHS.jwks, (_req, res) => sendJson(res, 200, { keys: [] }));
    serveDiscovery((o) => ({ ...standard(o), token_endpoint: `${o}${STUB_PATHS.token}` }));
    const before = count(DISCOVERY);
    await expect(login(client, stub)).resolves.toMatchObject({ sub: stub.sub });
    expect(count(DISCOVERY) - before).toBe(1);
    stub.override(STUB_PATHS.jwks, undefined);
    client.close();
  });
});

describe('the ID-token algorithm allowlist', () => {
  it('none of idTokenSigningAlgorithms in the provider list: a clear refusal naming both, before any token is redeemed', async () => {
    serveDiscovery((o) => ({ ...standard(o), id_token_signing_alg_values_supported: ['RS256'] }));
    const { logger, text } = recordingLogger();
    const client = clientFor(stub, { idTokenSigningAlgorithms: ['ES256'], logger });
    const before = count('/elsewhere/token');
    const err = await failure(login(client, stub));
    expect(err.code).toBe('id_token_alg_not_allowed');
    expect(err.message).toMatch(/idTokenSigningAlgorithms: ES256.*id_token_signing_alg_values_supported \(RS256\)/);
    expect(count('/elsewhere/token')).toBe(before);
    // The document was read fine: the mismatch is the app's setting, not a failed call to the provider.
    expect(text()).not.toContain('provider_call_failed');
    client.close();
  });

  it('a token signed with an algorithm outside the allowlist is refused (the provider lists none)', async () => {
    const client = clientFor(stub, { idTokenSigningAlgorithms: ['PS256'] });
    expect(client.idTokenAlgorithms).toEqual(['PS256']);
    const err = await failure(login(client, stub));
    expect(err.code).toBe('id_token_alg_not_allowed');
    expect(classifyFailure(err)).toMatchObject({ serverSide: true, status: 500 });
    client.close();
  });

  it('the profile defaults: RS256 in the base profile', () => {
    expect(clientFor(stub).idTokenAlgorithms).toEqual(['RS256']);
  });
});

describe('the login flow with a provider whose answers are at fault', () => {
  it('an algorithm the app does not accept is a server-side failure with a diagnosis naming the option, logged at error without a logger', async () => {
    const client = clientFor(stub, { idTokenSigningAlgorithms: ['ES256'] });
    const lines: string[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => void lines.push(args.map(String).join(' '));
    try {
      const flow = createLoginFlow({ client, redirectUri: 'https://rp.example/callback' });
      const session = new Map<string, unknown>();
      const fs = {
        get: (k: string) => session.get(k),
        set: (k: string, v: unknown) => void session.set(k, v),
        delete: (k: string) => void session.delete(k),
      };
      const { state } = await flow.start(fs);
      const err = await failure(flow.complete(fs, { code: 'c', state }));
      expect(err.code).toBe('id_token_alg_not_allowed');
      expect(err.diagnosis?.code).toBe('id_token_alg_refused');
      expect(err.diagnosis?.fix).toContain('idTokenSigningAlgorithms');
      expect(lines.some((l) => l.includes('id_token_alg_not_allowed'))).toBe(true);
    } finally {
      console.error = original;
      client.close();
    }
  });
});

describe("a provider's standard userinfo", () => {
  const withUserinfo = (o: string) => ({
    ...standard(o),
    token_endpoint: `${o}${STUB_PATHS.token}`,
    jwks_uri: `${o}${STUB_PATHS.jwks}`,
    userinfo_endpoint: `${o}/elsewhere/me`,
  });

  it('JSON claims and a signed application/jwt are read as claims; a sub that is not the ID token one is refused', async () => {
    serveDiscovery(withUserinfo);
    const client = clientFor(stub, { hostname: undefined, issuer: `${stub.origin}/v2`, privateKey: undefined });
    const { sub, accessToken } = await login(client, stub);
    stub.override('/elsewhere/me', (_req, res) => sendJson(res, 200, { sub, name: 'Ada' }));
    await expect(client.userinfo({ sub, accessToken })).resolves.toEqual({
      sub,
      data: {},
      claims: { sub, name: 'Ada' },
    });
    const key = stub.keys[0]!;
    const jwt = await new SignJWT({ sub, name: 'Ada', iss: `${stub.origin}/v2`, aud: stub.clientId })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid })
      .sign(key.privateKey);
    stub.override('/elsewhere/me', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/jwt' });
      res.end(jwt);
    });
    await expect(client.userinfo({ sub, accessToken })).resolves.toMatchObject({
      sub,
      data: {},
      claims: { name: 'Ada' },
    });
    expect(stub.requests.filter((r) => r.path === '/elsewhere/me').at(-1)!.headers.accept).toBe(
      'application/jwt, application/json',
    );
    stub.override('/elsewhere/me', (_req, res) => sendJson(res, 200, { sub: 'someone-else' }));
    expect((await failure(client.userinfo({ sub, accessToken }))).code).toBe('userinfo_sub_mismatch');
    stub.override('/elsewhere/me', (_req, res) => sendJson(res, 200, { name: 'no sub' }));
    expect((await failure(client.userinfo({ sub, accessToken }))).code).toBe('userinfo_malformed');
    stub.override('/elsewhere/me', undefined);
    client.close();
  });
});

describe('a discovery field the app cannot use, through the flow', () => {
  it('refuses to start the login: a server-side failure whose diagnosis names the field', async () => {
    serveDiscovery((o) => ({ ...standard(o), token_endpoint: 'http://id.example/token' }));
    const client = clientFor(stub, { hostname: undefined, issuer: `${stub.origin}/v2` });
    const flow = createLoginFlow({
      client,
      redirectUri: 'https://rp.example/callback',
      logger: { debug() {}, info() {}, warn() {}, error() {} },
    });
    const session = new Map<string, unknown>();
    const fs = {
      get: (k: string) => session.get(k),
      set: (k: string, v: unknown) => void session.set(k, v),
      delete: (k: string) => void session.delete(k),
    };
    const err = await failure(flow.start(fs));
    expect(err.code).toBe('discovery_invalid');
    expect(classifyFailure(err)).toMatchObject({ serverSide: true, status: 500 });
    expect(err.diagnosis?.code).toBe('discovery_field_refused');
    expect(err.diagnosis?.cause).toContain('token_endpoint');
    expect(session.size).toBe(0);
    client.close();
  });
});

describe('extra authorization parameters', () => {
  it('are sent after the client own, a login value replacing the client default, and can never replace state, nonce or PKCE', async () => {
    const client = clientFor(stub, { authorizationParams: { ui_locales: 'en', prompt: 'login' } });
    const { url } = client.authorizationUrl({
      codeChallenge: 'a'.repeat(43),
      state: 's-1',
      authorizationParams: { prompt: 'consent', redirect_uri_https_type: 'app_claimed_https' },
    });
    const q = new URL(url).searchParams;
    expect(q.get('ui_locales')).toBe('en');
    expect(q.getAll('prompt')).toEqual(['consent']);
    expect(q.get('redirect_uri_https_type')).toBe('app_claimed_https');
    expect(q.getAll('state')).toEqual(['s-1']);
    for (const reserved of ['state', 'nonce', 'code_challenge', 'redirect_uri', 'client_id', 'dpop_jkt']) {
      expect(() =>
        client.authorizationUrl({ codeChallenge: 'a'.repeat(43), authorizationParams: { [reserved]: 'x' } }),
      ).toThrow(`${reserved} is set by the client itself`);
    }
    client.close();
  });

  it('the flow passes a login own parameters on, and refuses the context type in the base profile', async () => {
    const client = clientFor(stub);
    const flow = createLoginFlow({ client, redirectUri: 'https://rp.example/callback' });
    const session = new Map<string, unknown>();
    const fs = {
      get: (k: string) => session.get(k),
      set: (k: string, v: unknown) => void session.set(k, v),
      delete: (k: string) => void session.delete(k),
    };
    const { redirectUrl } = await flow.start(fs, {
      authorizationParams: { login_hint: 'ada', acr_values: 'urn:loa:2' },
    });
    const q = new URL(redirectUrl).searchParams;
    expect([q.get('login_hint'), q.get('acr_values')]).toEqual(['ada', 'urn:loa:2']);
    await expect(flow.start(fs, { authorizationParams: { nonce: 'mine' } })).rejects.toThrow(
      'nonce is set by the client itself',
    );
    await expect(flow.start(fs, { authenticationContextType: 'APP_AUTHENTICATION_DEFAULT' })).rejects.toThrow(
      /authenticationContextType is sent only in the fapi2 profile/,
    );
    client.close();
  });
});
