import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HOSTNAME, IdClient } from '../../src/client/id-client.js';
import { generatePkcePair } from '../../src/pkce.js';
import { STUB_PATHS } from '../helpers/stub-provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { CLIENT_SECRET, REDIRECT_URI, clientFor, login, startStubProvider, type StubProvider } from './support.js';

let stub: StubProvider;
beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(() => stub.close());

describe('IdClient login', () => {
  it('signs a user in: callback returns sub, tokens and claims; userinfo returns the decrypted attributes', async () => {
    const client = clientFor(stub);
    const { codeVerifier } = generatePkcePair();
    stub.nonce = 'n-1';
    const result = await client.callback({ code: 'the-code', nonce: 'n-1', codeVerifier });
    expect(result.sub).toBe(stub.sub);
    expect(result.accessToken).toBe(stub.accessToken);
    expect(result.idToken.split('.')).toHaveLength(3);
    expect(result.claims).toMatchObject({ iss: stub.issuer, aud: stub.clientId, nonce: 'n-1' });
    const tokenRequest = stub.requests.filter((r) => r.path === STUB_PATHS.token).at(-1)!;
    expect(tokenRequest.headers['content-type']).toBe('application/json');
    expect(tokenRequest.headers.accept).toBe('application/json');
    expect(tokenRequest.body).toEqual({
      client_id: stub.clientId,
      client_secret: CLIENT_SECRET,
      code: 'the-code',
      grant_type: 'authorization_code',
      code_verifier: codeVerifier,
      redirect_uri: REDIRECT_URI,
    });

    const info = await client.userinfo({ sub: result.sub, accessToken: result.accessToken });
    expect(info).toEqual({ sub: stub.sub, data: stub.userinfo.data });
    const userinfoRequest = stub.requests.filter((r) => r.path === STUB_PATHS.userinfo).at(-1)!;
    expect(userinfoRequest.method).toBe('GET');
    expect(userinfoRequest.headers.authorization).toBe(`Bearer ${stub.accessToken}`);
    client.close();
  });

  it('accepts a PKCS#1 private key with literal \\n escapes, as read from an environment variable', async () => {
    const escaped = testKeyPair('rp').privateKeyPkcs1Pem.replace(/\n/g, '\\n');
    const client = clientFor(stub, { privateKey: escaped });
    const { sub, accessToken } = await login(client, stub);
    await expect(client.userinfo({ sub, accessToken })).resolves.toMatchObject({ sub: stub.sub });
  });

  it('reuses one keep-alive connection for the token, JWKS and userinfo calls', async () => {
    const client = clientFor(stub);
    const before = stub.requests.length;
    const { sub, accessToken } = await login(client, stub);
    await client.userinfo({ sub, accessToken });
    await login(client, stub);
    const mine = stub.requests.slice(before);
    expect(mine.length).toBeGreaterThanOrEqual(4);
    expect(mine.every((r) => r.headers.connection === 'keep-alive')).toBe(true);
  });

  it('returns data {} without touching the key when no scope carries data', async () => {
    const client = clientFor(stub);
    const { sub, accessToken } = await login(client, stub);
    stub.override(STUB_PATHS.userinfo, (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ sub, data: {} }));
    });
    try {
      await expect(client.userinfo({ sub, accessToken })).resolves.toEqual({ sub, data: {} });
    } finally {
      stub.override(STUB_PATHS.userinfo, undefined);
    }
  });
});

describe('IdClient constructor', () => {
  const base = {
    clientId: 'c',
    clientSecret: 's',
    privateKey: testKeyPair('rp').privateKeyPem,
    hostname: 'https://id.example',
  };

  it.each([
    ['clientId', { clientId: undefined }, 'IdClient: clientId must be a non-empty string'],
    ['clientId', { clientId: '' }, 'IdClient: clientId must be a non-empty string'],
    ['clientSecret', { clientSecret: 42 }, 'IdClient: clientSecret must be a non-empty string'],
    ['privateKey', { privateKey: '' }, 'IdClient: privateKey must be a non-empty PEM string'],
    [
      'issuer',
      { hostname: undefined, issuer: 'https://id.example/oidc?x=1' },
      "IdClient: issuer must be the provider's issuer URL",
    ],
    [
      'issuer',
      { hostname: undefined, issuer: 'http://id.example/oidc' },
      'IdClient: issuer http://id.example/oidc is plain http:',
    ],
    ['issuer', { issuer: 'https://id.example/oidc' }, 'IdClient: give either issuer or hostname, not both'],
    [
      'idTokenSigningAlgorithms',
      { idTokenSigningAlgorithms: ['HS256'] },
      'IdClient: idTokenSigningAlgorithms must be a non-empty array',
    ],
    [
      'idTokenSigningAlgorithms',
      { idTokenSigningAlgorithms: [] },
      'IdClient: idTokenSigningAlgorithms must be a non-empty array',
    ],
    ['requireIssParameter', { requireIssParameter: 'yes' }, 'IdClient: requireIssParameter must be true or false'],
    [
      'authorizationParams',
      { authorizationParams: { state: 'x' } },
      'IdClient: authorizationParams: state is set by the client itself',
    ],
    [
      'authorizationParams',
      { authorizationParams: { code_challenge: 'x' } },
      'IdClient: authorizationParams: code_challenge is set by the client itself',
    ],
    [
      'authorizationParams',
      { authorizationParams: { prompt: 'a\nb' } },
      'IdClient: authorizationParams: prompt must be a non-empty string',
    ],
    ['privateKey', { privateKey: 'not a key' }, 'IdClient: privateKey must be a PEM RSA private key'],
    ['redirectUri', { redirectUri: 'not a url' }, 'IdClient: redirectUri must be an absolute http(s) URL'],
    ['hostname', { hostname: 'ftp://id.example' }, 'IdClient: hostname must be the http(s) origin'],
    ['hostname', { hostname: 'https://id.example/v2' }, 'IdClient: hostname must be the http(s) origin'],
    ['hostname', { hostname: 'https://id.example/?x=1' }, 'IdClient: hostname must be the http(s) origin'],
    ['timeout', { timeout: 0 }, 'IdClient: timeout must be a finite number'],
    ['maxResponseBytes', { maxResponseBytes: Number.NaN }, 'IdClient: maxResponseBytes must be a finite number'],
    ['clockTolerance', { clockTolerance: -1 }, 'IdClient: clockTolerance must be a finite number'],
    ['jwksCooldown', { jwksCooldown: 'soon' }, 'IdClient: jwksCooldown must be a finite number'],
    ['jwksCacheMaxAge', { jwksCacheMaxAge: -1 }, 'IdClient: jwksCacheMaxAge must be a finite number'],
    ['clock', { clock: 5 }, 'IdClient: clock must be a function'],
  ])('throws a TypeError naming %s when it is ill-typed', (_name, patch, message) => {
    expect(() => new IdClient({ ...base, ...(patch as object) } as never)).toThrow(TypeError);
    expect(() => new IdClient({ ...base, ...(patch as object) } as never)).toThrow(message);
  });

  it('requires hostname, saying to set it', () => {
    const { hostname: _h, ...rest } = base;
    expect(() => new IdClient(rest as never)).toThrow(
      /IdClient: hostname is required: set it to the origin of the service/,
    );
  });

  it('refuses the placeholder DEFAULT_HOSTNAME, saying to set hostname', () => {
    for (const hostname of [DEFAULT_HOSTNAME, `${DEFAULT_HOSTNAME}/`]) {
      expect(() => new IdClient({ ...base, hostname })).toThrow(TypeError);
      expect(() => new IdClient({ ...base, hostname })).toThrow(/placeholder .*set it to the origin of the service/);
    }
  });

  it('refuses a plain http: origin that is not loopback, saying what to do', () => {
    for (const hostname of [
      'http://id.example',
      'http://10.0.0.5:8080',
      'http://[fe80::1]',
      'http://128.0.0.1',
      'http://localhost.evil.example',
    ]) {
      expect(() => new IdClient({ ...base, hostname })).toThrow(
        /plain http: .*use the https: origin .*allowInsecureHttp: true/,
      );
    }
  });

  it('accepts http: on loopback (localhost, 127.0.0.0/8, ::1) and elsewhere only with allowInsecureHttp: true', () => {
    for (const hostname of [
      'http://localhost:3000',
      'http://127.0.0.1:8080',
      'http://127.1.2.3',
      'http://[::1]:9000',
    ]) {
      expect(new IdClient({ ...base, hostname }).origin).toBe(new URL(hostname).origin);
    }
    expect(new IdClient({ ...base, hostname: 'http://id.test.lan', allowInsecureHttp: true }).issuer).toBe(
      'http://id.test.lan/v2',
    );
    expect(() => new IdClient({ ...base, hostname: 'http://id.test.lan', allowInsecureHttp: 'yes' } as never)).toThrow(
      /allowInsecureHttp must be true or false/,
    );
  });

  it('accepts a hostname with or without a trailing slash', () => {
    expect(new IdClient({ ...base, hostname: 'https://id.example/' }).issuer).toBe('https://id.example/v2');
    expect(new IdClient({ ...base, hostname: 'http://127.0.0.1:8080' }).issuer).toBe('http://127.0.0.1:8080/v2');
  });

  it('never echoes the private key in its error', () => {
    const { privateKeyPem } = testKeyPair('rp');
    const broken = privateKeyPem.replace('MII', 'XXX');
    let message = '';
    try {
      new IdClient({ ...base, privateKey: broken });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/privateKey/);
    expect(message).not.toContain(broken.split('\n')[2]);
  });
});

describe('IdClient.authorizationUrl', () => {
  const client = new IdClient({
    clientId: 'client one',
    clientSecret: 's',
    privateKey: testKeyPair('rp').privateKeyPem,
    redirectUri: REDIRECT_URI,
    hostname: 'https://id.example',
  });
  const { codeChallenge } = generatePkcePair();

  it('builds the spec 4.1 URL with a random nonce and the default scope encoded with %20', () => {
    const { url, nonce } = client.authorizationUrl({ codeChallenge, state: 'st/1' });
    expect(url.startsWith('https://id.example/v2/oauth/authorize?')).toBe(true);
    expect(url).toContain('scope=openid%20profile.name');
    expect(url).not.toContain('+');
    const q = new URL(url).searchParams;
    expect(Object.fromEntries(q)).toEqual({
      response_type: 'code',
      client_id: 'client one',
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile.name',
      code_challenge: codeChallenge,
      code_challenge_method: 'S256',
      state: 'st/1',
      nonce,
    });
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('omits the nonce when nonce is null, and uses a given one as is', () => {
    const none = client.authorizationUrl({ codeChallenge, nonce: null });
    expect(none.nonce).toBeUndefined();
    expect(new URL(none.url).searchParams.has('nonce')).toBe(false);
    const given = client.authorizationUrl({ codeChallenge, nonce: 'my-nonce' });
    expect(given.nonce).toBe('my-nonce');
    expect(new URL(given.url).searchParams.get('nonce')).toBe('my-nonce');
  });

  it('accepts scope as an array or a string, and a redirectUri override', () => {
    const { url } = client.authorizationUrl({
      codeChallenge,
      scope: ['openid', 'profile.nric_number'],
      redirectUri: 'https://rp.example/other',
    });
    expect(url).toContain('scope=openid%20profile.nric_number');
    expect(new URL(url).searchParams.get('redirect_uri')).toBe('https://rp.example/other');
  });

  it('refuses a scope without openid', () => {
    expect(() => client.authorizationUrl({ codeChallenge, scope: 'profile.name' })).toThrow(/must include "openid"/);
  });

  it('refuses a missing or ill-formed codeChallenge', () => {
    expect(() => client.authorizationUrl({} as never)).toThrow(/codeChallenge/);
    expect(() => client.authorizationUrl({ codeChallenge: 'short' })).toThrow(/codeChallenge/);
  });

  it('refuses when no redirect URI is given anywhere', () => {
    const bare = new IdClient({
      clientId: 'c',
      clientSecret: 's',
      privateKey: testKeyPair('rp').privateKeyPem,
      hostname: 'https://id.example',
    });
    expect(() => bare.authorizationUrl({ codeChallenge })).toThrow(/redirectUri is required/);
  });
});
