/**
 * A FAPI 2.0 relying party written out by hand for the provider's tests: client assertions,
 * DPoP proofs, PAR, authorize, token and userinfo over real HTTP, each step overridable so a
 * test can send exactly the mistake it wants refused.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll } from 'vitest';
import {
  createTestProvider,
  startProvider,
  type TestFapiKeys,
  type TestProvider,
  type TestProviderOptions,
} from '../../helpers/provider.js';
import { testKeyPair } from '../../helpers/keys.js';
import { pkce } from '../../helpers/provider-fixtures.js';

/** A FAPI test provider (auto-approving unless told otherwise). */
export function startFapi(options: TestProviderOptions = {}): Promise<TestProvider> {
  return createTestProvider({ profile: 'fapi2', autoApprove: true, ...options });
}

function nowS(test: TestProvider): number {
  return Math.floor(test.provider.clock() / 1000);
}

/**
 * The FAPI provider and the DPoP key of one test file: started before its tests, closed after.
 * Read its members inside tests (they are set once the file's `beforeAll` has run).
 */
export function fapiFixture(options: TestProviderOptions = {}): { test: TestProvider; dpop: DpopKey } {
  const fixture = {} as { test: TestProvider; dpop: DpopKey };
  beforeAll(async () => {
    fixture.test = await startFapi(options);
    fixture.dpop = await DpopKey.make();
  });
  afterAll(() => fixture.test.close());
  return fixture;
}

/** A private_key_jwt assertion of the test client, with claim and header overrides (undefined removes). */
export async function assertion(
  test: TestProvider,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
  key: JWK = test.client.fapi!.signingKey,
): Promise<string> {
  const now = nowS(test);
  const payload: Record<string, unknown> = {
    iss: test.client.clientId,
    sub: test.client.clientId,
    aud: test.provider.issuer,
    jti: randomUUID(),
    iat: now,
    exp: now + 60,
    ...claims,
  };
  for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
  const alg = (header['alg'] as string | undefined) ?? 'ES256';
  return new SignJWT(payload).setProtectedHeader({ alg, kid: key.kid!, ...header }).sign(await importJWK(key, alg));
}

/** A DPoP key pair of one login, and proofs made with it. */
export class DpopKey {
  private constructor(
    readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'],
    readonly publicJwk: JWK,
  ) {}

  static async make(): Promise<DpopKey> {
    const pair = await generateKeyPair('ES256', { extractable: true });
    return new DpopKey(pair.privateKey, await exportJWK(pair.publicKey));
  }

  /** A proof for `htm` `htu`, with claim and header overrides (undefined removes). */
  async proof(
    test: TestProvider,
    htm: string,
    htu: string,
    claims: Record<string, unknown> = {},
    header: Record<string, unknown> = {},
  ): Promise<string> {
    const payload: Record<string, unknown> = { htm, htu, iat: nowS(test), jti: randomUUID(), ...claims };
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    const protectedHeader: Record<string, unknown> = { alg: 'ES256', typ: 'dpop+jwt', jwk: this.publicJwk, ...header };
    for (const [k, v] of Object.entries(protectedHeader)) if (v === undefined) delete protectedHeader[k];
    return new SignJWT(payload).setProtectedHeader(protectedHeader as { alg: string }).sign(this.privateKey);
  }
}

/** base64url(SHA-256(token)): the `ath` of a proof at userinfo. */
export function athOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** The authorization parameters of one login. */
export function loginParams(
  test: TestProvider,
  extra: Record<string, string> = {},
): { params: Record<string, string>; verifier: string } {
  const { verifier, challenge } = pkce();
  return {
    verifier,
    params: {
      response_type: 'code',
      client_id: test.client.clientId,
      redirect_uri: test.client.redirectUri,
      scope: 'openid profile.name',
      state: randomUUID(),
      nonce: randomUUID(),
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    },
  };
}

/** What a FAPI request sends beside its fields: a fresh assertion and proof unless given (null leaves one out). */
export interface FapiCallOptions {
  assertion?: string | null;
  proof?: string | null;
  headers?: Record<string, string>;
}

/** POST a form to `path` as the FAPI client: the fields, its assertion and its DPoP proof. */
async function postAsClient(
  test: TestProvider,
  dpop: DpopKey,
  path: string,
  fields: Record<string, string>,
  options: FapiCallOptions,
): Promise<Response> {
  const body = new URLSearchParams(fields);
  const signed = options.assertion === undefined ? await assertion(test) : options.assertion;
  if (signed !== null) {
    body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    body.set('client_assertion', signed);
  }
  const proof = options.proof === undefined ? await dpop.proof(test, 'POST', `${test.baseUrl}${path}`) : options.proof;
  return fetch(`${test.baseUrl}${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(proof === null ? {} : { dpop: proof }),
      ...options.headers,
    },
    body,
  });
}

/** POST to the PAR endpoint: the params, a fresh assertion unless given, and a proof unless `proof: null`. */
export function push(
  test: TestProvider,
  dpop: DpopKey,
  params: Record<string, string>,
  options: FapiCallOptions = {},
): Promise<Response> {
  return postAsClient(test, dpop, '/v2/oauth/par', params, options);
}

/** Authorize with only client_id and request_uri (auto-approval): the callback URL. */
export async function authorizeUri(
  test: TestProvider,
  requestUri: string,
  extra: Record<string, string> = {},
): Promise<Response> {
  const query = new URLSearchParams({ client_id: test.client.clientId, request_uri: requestUri, ...extra });
  return fetch(`${test.baseUrl}/v2/oauth/authorize?${query}`, { redirect: 'manual' });
}

/** POST to the token endpoint as a FAPI client: fields, a fresh assertion and proof unless overridden. */
export function tokenCall(
  test: TestProvider,
  dpop: DpopKey,
  fields: Record<string, string>,
  options: FapiCallOptions = {},
): Promise<Response> {
  return postAsClient(
    test,
    dpop,
    '/v2/oauth/token',
    { grant_type: 'authorization_code', redirect_uri: test.client.redirectUri, ...fields },
    options,
  );
}

/** PAR then authorize: the code and the verifier of one approved login. */
export async function codeOf(
  test: TestProvider,
  dpop: DpopKey,
  extra: Record<string, string> = {},
): Promise<{ code: string; verifier: string; state: string; nonce: string }> {
  const { params, verifier } = loginParams(test, extra);
  const pushed = await push(test, dpop, params);
  if (pushed.status !== 201) throw new Error(`PAR answered ${pushed.status}: ${await pushed.text()}`);
  const { request_uri } = (await pushed.json()) as { request_uri: string };
  const back = new URL((await authorizeUri(test, request_uri)).headers.get('location') ?? '');
  return { code: back.searchParams.get('code') ?? '', verifier, state: params['state']!, nonce: params['nonce']! };
}

/** A whole login up to the tokens. */
export async function tokensOf(
  test: TestProvider,
  dpop: DpopKey,
): Promise<{ access_token: string; id_token: string; token_type: string }> {
  const { code, verifier } = await codeOf(test, dpop);
  const res = await tokenCall(test, dpop, { code, code_verifier: verifier });
  if (res.status !== 200) throw new Error(`token answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as { access_token: string; id_token: string; token_type: string };
}

/** The signed ID token inside the encrypted one. */
export async function decryptIdToken(test: TestProvider, jwe: string): Promise<string> {
  const key = test.client.fapi!.encryptionKey;
  const { plaintext } = await compactDecrypt(jwe, await importJWK(key, key.alg));
  return new TextDecoder().decode(plaintext);
}

/** GET userinfo with a DPoP-bound token. */
export async function userinfoCall(
  test: TestProvider,
  dpop: DpopKey,
  token: string,
  options: { scheme?: string; proof?: string | null } = {},
): Promise<Response> {
  const url = `${test.baseUrl}/v2/oauth/userinfo`;
  const proof = options.proof === undefined ? await dpop.proof(test, 'GET', url, { ath: athOf(token) }) : options.proof;
  return fetch(url, {
    headers: { authorization: `${options.scheme ?? 'DPoP'} ${token}`, ...(proof === null ? {} : { dpop: proof }) },
  });
}

/**
 * A provider with one FAPI client (auto-approving) whose key set is registered as given: by
 * `jwksUri` (the caller serves `keys`, or something else, at the URL) or inline (`jwks`).
 */
export async function startWithJwksUri(
  clientId: string,
  source: string | { keys: JWK[] },
  keys: TestFapiKeys,
): Promise<TestProvider> {
  const redirectUri = 'http://127.0.0.1:3000/auth/callback';
  const registered = typeof source === 'string' ? { jwksUri: source } : { jwks: source };
  const started = await startProvider({
    autoApprove: true,
    clients: [
      {
        clientId,
        redirectUris: [redirectUri],
        publicKey: testKeyPair('rp').publicKeyPem,
        profile: 'fapi2',
        ...registered,
        idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW',
      },
    ],
  });
  return {
    provider: started.provider,
    baseUrl: started.baseUrl,
    client: { clientId, clientSecret: '', privateKey: '', redirectUri, fapi: keys },
    close: () => started.close(),
  };
}

/** A client's JWKS host on 127.0.0.1 answering with `handler`: its origin, and how to close it. */
export async function jwksHost(handler: RequestListener): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
