/**
 * The discovery and size findings of the fifth review, each over real HTTP on 127.0.0.1: an https
 * issuer's document may not send the code and secret over plain http; a `hostname` client whose
 * document expires and cannot be read again keeps the document last read (the RFC 9207 `iss`
 * requirement stays on); the PAR endpoint must be on the issuer's origin; an oversized ID token or
 * userinfo JWT is refused on its size before its header is decoded or any key set is fetched.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { IdClient } from '../../src/client/id-client.js';
import { IdError } from '../../src/errors.js';
import { sendJson, STUB_PATHS } from '../helpers/stub-provider.js';
import { testKeyPair } from '../helpers/keys.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { clientFor, login, movableClock, startStubProvider, type StubProvider } from './support.js';

const DISCOVERY = '/v2/.well-known/openid-configuration';

async function failure(promise: Promise<unknown>): Promise<IdError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(IdError);
    return err as IdError;
  }
  throw new Error('expected a refusal');
}

function listen(server: Server | https.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(String((server.address() as AddressInfo).port))),
  );
}

async function close(server: Server | https.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A plain-http server on loopback that counts what it is asked. */
async function countingServer(): Promise<{ origin: string; hits: string[]; server: Server }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(404).end();
  });
  return { origin: `http://127.0.0.1:${await listen(server)}`, hits, server };
}

let stub: StubProvider;
beforeAll(async () => {
  stub = await startStubProvider();
});
afterAll(async () => {
  await stub.close();
});
beforeEach(() => {
  stub.override(DISCOVERY, undefined);
  stub.override(STUB_PATHS.token, undefined);
  stub.override(STUB_PATHS.userinfo, undefined);
});

describe('an https issuer whose document lists plain-http loopback endpoints', () => {
  let service: https.Server;
  let ca: string;
  let issuer: string;
  let plain: Awaited<ReturnType<typeof countingServer>>;

  beforeAll(async () => {
    const tls = selfSignedCertificate();
    ca = tls.cert;
    plain = await countingServer();
    service = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
      const o = `https://127.0.0.1:${(service.address() as AddressInfo).port}`;
      if (req.url === '/idp/.well-known/openid-configuration') {
        sendJson(res, 200, {
          issuer: `${o}/idp`,
          authorization_endpoint: `${o}/idp/authorize`,
          token_endpoint: `${plain.origin}/token`,
          jwks_uri: `${o}/idp/jwks`,
        });
      } else res.writeHead(404).end();
    });
    issuer = `https://127.0.0.1:${await listen(service)}/idp`;
  });
  afterAll(async () => {
    await close(service);
    await close(plain.server);
  });

  it('is refused (discovery_invalid naming token_endpoint) before a code or secret could go to it', async () => {
    const client = new IdClient({
      issuer,
      clientId: 'app',
      clientSecret: 'a-secret-never-sent-in-clear',
      redirectUri: 'https://app.example/callback',
      agent: new https.Agent({ ca }),
    });
    try {
      const err = await failure(client.discover());
      expect(err.code).toBe('discovery_invalid');
      expect(err.reason).toBe('token_endpoint');
      expect(err.message).toContain('plain-http loopback issuer');
      expect(plain.hits).toEqual([]);
    } finally {
      client.close();
    }
  });
});

describe('hostname: a document that expires and cannot be read again', () => {
  const faults: [string, (req: IncomingMessage, res: ServerResponse) => void, number][] = [
    ['a 503', (_req, res) => sendJson(res, 503, { error: 'temporarily_unavailable' }), 10_000],
    ['a reset connection', (_req, res) => res.socket?.destroy(), 10_000],
    ['no answer (timeout)', () => undefined, 300],
  ];

  it.each(faults)(
    'on %s the document last read is kept: a callback without iss is still refused (authorization_response_iss_missing)',
    async (_name, fault, timeout) => {
      stub.override(DISCOVERY, (_req, res) =>
        sendJson(res, 200, {
          issuer: stub.issuer,
          authorization_endpoint: `${stub.origin}/v2/oauth/authorize`,
          token_endpoint: `${stub.origin}/v2/oauth/token`,
          jwks_uri: `${stub.origin}/v2/.well-known/jwks.json`,
          authorization_response_iss_parameter_supported: true,
        }),
      );
      const clock = movableClock();
      const client = clientFor(stub, { clock: clock.now, jwksCacheMaxAge: 1000, jwksCooldown: 0, timeout });
      try {
        await client.discover();
        const callback = { code: 'code-1', state: 'state-1' };
        expect((await failure(client.checkAuthorizationResponse(callback))).code).toBe(
          'authorization_response_iss_missing',
        );
        stub.override(DISCOVERY, (req, res) => fault(req as unknown as IncomingMessage, res));
        clock.advance(2000);
        const before = client.discoveryFetchCount;
        expect((await failure(client.checkAuthorizationResponse(callback))).code).toBe(
          'authorization_response_iss_missing',
        );
        expect(client.discoveryFetchCount).toBe(before + 1);
        // The endpoints stay the spec's: the authorization URL does not change.
        const { url } = client.authorizationUrl({ codeChallenge: 'a'.repeat(43) });
        expect(url.startsWith(`${stub.origin}/v2/oauth/authorize?`)).toBe(true);
      } finally {
        client.close();
      }
    },
  );
});

describe('the PAR endpoint of another origin than the issuer', () => {
  it('is refused (discovery_invalid naming it) and nothing is pushed there', async () => {
    const elsewhere = await countingServer();
    const server = createServer((req, res) => {
      const o = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      if (req.url === '/tenant/.well-known/openid-configuration') {
        sendJson(res, 200, {
          issuer: `${o}/tenant`,
          authorization_endpoint: `${o}/tenant/authorize`,
          pushed_authorization_request_endpoint: `${elsewhere.origin}/par`,
          token_endpoint: `${o}/tenant/token`,
          jwks_uri: `${o}/tenant/jwks`,
        });
      } else res.writeHead(404).end();
    });
    const o = `http://127.0.0.1:${await listen(server)}`;
    const client = new IdClient({
      issuer: `${o}/tenant`,
      clientId: 'fapi-app',
      privateKey: testKeyPair('rp').privateKeyPem,
      redirectUri: 'http://127.0.0.1:3000/auth/callback',
      profile: 'fapi2',
      clientAssertionKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    });
    try {
      const { key } = await client.dpopKeyForLogin();
      const err = await failure(client.pushAuthorizationRequest({ codeChallenge: 'a'.repeat(43), dpopKey: key }));
      expect(err.code).toBe('discovery_invalid');
      expect(err.reason).toBe('pushed_authorization_request_endpoint');
      expect(elsewhere.hits).toEqual([]);
    } finally {
      client.close();
      await close(server);
      await close(elsewhere.server);
    }
  });
});

describe('hostname in the FAPI 2.0 profile: the spec paths, whatever the document names', () => {
  it('pushes to /v2/oauth/par and sends the browser to /v2/oauth/authorize, not to the endpoints the document lists', async () => {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      const o = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      hits.push(req.url ?? '');
      req.resume();
      if (req.url === DISCOVERY) {
        sendJson(res, 200, {
          issuer: `${o}/v2`,
          authorization_endpoint: `${o}/elsewhere/authorize`,
          pushed_authorization_request_endpoint: `${o}/elsewhere/par`,
          token_endpoint: `${o}/elsewhere/token`,
          jwks_uri: `${o}/elsewhere/jwks`,
          authorization_response_iss_parameter_supported: true,
        });
      } else if (req.url === '/v2/oauth/par') {
        req.on('end', () => sendJson(res, 201, { request_uri: 'urn:par:1', expires_in: 60 }));
      } else res.writeHead(404).end();
    });
    const o = `http://127.0.0.1:${await listen(server)}`;
    const client = new IdClient({
      hostname: o,
      clientId: 'fapi-app',
      privateKey: testKeyPair('rp').privateKeyPem,
      redirectUri: 'http://127.0.0.1:3000/auth/callback',
      profile: 'fapi2',
      clientAssertionKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
    });
    try {
      const { key } = await client.dpopKeyForLogin();
      const pushed = await client.pushAuthorizationRequest({ codeChallenge: 'a'.repeat(43), dpopKey: key });
      expect(pushed.url).toBe(`${o}/v2/oauth/authorize?client_id=fapi-app&request_uri=urn%3Apar%3A1`);
      expect(hits).toEqual([DISCOVERY, '/v2/oauth/par']);
      // What the document advertises still holds: a callback without iss is refused.
      expect((await failure(client.checkAuthorizationResponse({ code: 'c', state: 's' }))).code).toBe(
        'authorization_response_iss_missing',
      );
    } finally {
      client.close();
      await close(server);
    }
  });
});

/** A compact JWS whose header is `header` and whose payload is `bytes` characters of padding. */
function hugeJws(header: Record<string, unknown>, bytes: number): string {
  return `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${'A'.repeat(bytes)}.c2ln`;
}

describe('size before header', () => {
  it('a 930 KB ID token whose header names HS256 is refused on its size (id_token_malformed), no key set fetched', async () => {
    stub.serveTokens({ access_token: stub.accessToken, id_token: hugeJws({ alg: 'HS256' }, 930 * 1024) });
    const client = clientFor(stub);
    try {
      const jwksBefore = stub.jwksFetches;
      const err = await failure(login(client, stub));
      expect(err.code).toBe('id_token_malformed');
      expect(stub.jwksFetches).toBe(jwksBefore);
    } finally {
      client.close();
    }
  });

  it('a 267 KiB userinfo JWT with an unknown kid is refused on its size (userinfo_malformed): no key-set or discovery fetch', async () => {
    stub.override(DISCOVERY, (_req, res) =>
      sendJson(res, 200, {
        issuer: stub.issuer,
        authorization_endpoint: `${stub.origin}/v2/authorize`,
        token_endpoint: `${stub.origin}${STUB_PATHS.token}`,
        userinfo_endpoint: `${stub.origin}${STUB_PATHS.userinfo}`,
        jwks_uri: `${stub.origin}${STUB_PATHS.jwks}`,
      }),
    );
    const client = clientFor(stub, { hostname: undefined, issuer: stub.issuer, jwksCooldown: 0 });
    try {
      const signedIn = await login(client, stub);
      const huge = hugeJws({ alg: 'RS256', kid: 'a-key-nobody-has' }, 267 * 1024);
      stub.override(STUB_PATHS.userinfo, (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/jwt' }).end(huge);
      });
      const jwksBefore = stub.jwksFetches;
      const discoveryBefore = client.discoveryFetchCount;
      const err = await failure(client.userinfo({ sub: signedIn.sub, accessToken: signedIn.accessToken }));
      expect(err.code).toBe('userinfo_malformed');
      expect(stub.jwksFetches).toBe(jwksBefore);
      expect(client.discoveryFetchCount).toBe(discoveryBefore);
    } finally {
      client.close();
    }
  });
});
