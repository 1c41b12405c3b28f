/**
 * The OpenID Foundation's FAPI 2.0 Security Profile final server test plan (conformance suite,
 * `fapi2spfinal/FAPI2SPFinal*.java`), for the variant this provider serves: plain FAPI,
 * `private_key_jwt`, DPoP, OpenID Connect, unsigned (pushed) requests, plain response mode. One
 * test per module, named after it, each written from the module's own rule and driving the
 * provider over real HTTP with the suite's client shape: PAR without a DPoP proof (the suite binds
 * at PAR only in the modules that say so), `response_type`, `client_id`, `scope` and `redirect_uri`
 * repeated beside `request_uri` at authorize, a fresh `private_key_jwt` assertion with the issuer
 * as `aud`, and a DPoP proof at token and userinfo.
 *
 * Not in this file, as the suite leaves them out of this variant:
 * - needing a signed request object (removed by `FAPI2SPFinalTestPlan` for unsigned requests):
 *   EnsureServerAcceptsRequestObjectWithMultipleAud, EnsureRequestObjectWithoutExpFails,
 *   EnsureRequestObjectWithoutNbfFails, EnsureExpiredRequestObjectFails,
 *   EnsureRequestObjectWithBadAudFails, EnsureRequestObjectWithExpOver60Fails,
 *   AustraliaConnectIdRequestObjectWithExpOver10Fails, EnsureRequestObjectWithNbfOver60Fails,
 *   AustraliaConnectIdEnsureRequestObjectWithNbfOver15Fails,
 *   EnsureRequestObjectWithNbf8SecondsInTheFutureIsAccepted, EnsureSignedRequestObjectWithRS256Fails,
 *   EnsureRequestObjectSignatureAlgorithmIsNotNone, EnsureRequestObjectWithInvalidSignatureFails,
 *   EnsureMatchingKeyInAuthorizationRequest, EnsureUnsignedRequestAtParEndpointFails,
 *   PARRejectRequestUriInParAuthorizationRequest;
 * - not applicable to plain_fapi (`@VariantNotApplicable`): EnsureRegisteredRedirectUri,
 *   AustraliaConnectIdEnsureInvalidPurposeFails, EnsureServerHandlesNonMatchingIntentId,
 *   TestEssentialAcrScaClaim, BrazilEnsureBadPaymentSignatureFails,
 *   AustraliaConnectIdTestClaimsParameterIdTokenIdentityClaims.
 * Two modules the suite itself skips for this provider, as its metadata tells it to, are written
 * as that check: TestClaimsParameterIdentityClaims (no `claims_parameter_supported`) and
 * RefreshToken (no refresh token issued).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  calculateJwkThumbprint,
  compactDecrypt,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  exportJWK,
  importJWK,
  jwtVerify,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fapiTestKeys, startProvider, type StartedProvider } from '../../../src/provider/index.js';
import type { TestProvider } from '../../helpers/provider.js';
import { testKeyPair } from '../../helpers/keys.js';
import { assertion, athOf, DpopKey, loginParams } from './support.js';

const REDIRECT = 'http://127.0.0.1:3000/auth/callback';
const SECOND_REDIRECT = 'http://127.0.0.1:3000/auth/callback2';

let started: StartedProvider;
let waiting: StartedProvider;
let c1: TestProvider;
let c2: TestProvider;
let q1: TestProvider;

async function twoClients(autoApprove: boolean): Promise<{ started: StartedProvider; kits: TestProvider[] }> {
  const keys = [await fapiTestKeys(), await fapiTestKeys()];
  const ids = ['suite-client-1', 'suite-client-2'];
  const s = await startProvider({
    autoApprove,
    clients: ids.map((clientId, i) => ({
      clientId,
      redirectUris: [REDIRECT, SECOND_REDIRECT],
      publicKey: testKeyPair('rp').publicKeyPem,
      profile: 'fapi2' as const,
      jwks: keys[i]!.jwks as never,
      idTokenEncryptedResponseAlg: 'ECDH-ES+A256KW' as const,
    })),
  });
  const kits = ids.map((clientId, i) => ({
    provider: s.provider,
    baseUrl: s.baseUrl,
    client: { clientId, clientSecret: '', privateKey: '', redirectUri: REDIRECT, fapi: keys[i]! },
    close: () => s.close(),
  }));
  return { started: s, kits };
}

beforeAll(async () => {
  const auto = await twoClients(true);
  started = auto.started;
  [c1, c2] = auto.kits as [TestProvider, TestProvider];
  const qr = await twoClients(false);
  waiting = qr.started;
  q1 = qr.kits[0]!;
});
afterAll(async () => {
  await started.close();
  await waiting.close();
});

const url = (k: TestProvider, path: string) => `${k.baseUrl}${path}`;
const PAR = '/v2/oauth/par';
const TOKEN = '/v2/oauth/token';
const USERINFO = '/v2/oauth/userinfo';

interface Call {
  /** The assertion's claims (undefined removes one), or null for none. */
  claims?: Record<string, unknown> | null;
  header?: Record<string, unknown>;
  /** The DPoP proof: a key to sign a fresh one with (claims below), a ready proof, or null for none. */
  dpop?: DpopKey | string | null;
  proofClaims?: Record<string, unknown>;
}

/** POST a form as the suite's client does: its fields, its assertion, and its proof when given. */
async function post(k: TestProvider, path: string, fields: Record<string, string>, call: Call): Promise<Response> {
  const body = new URLSearchParams(fields);
  if (call.claims !== null) {
    body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    // The suite's claims (CreateClientAuthenticationAssertionClaimsWithIssAudience): iss, sub, the
    // issuer as aud, a 20-character jti, nbf and iat now, exp a minute ahead.
    const now = Math.floor(k.provider.clock() / 1000);
    const jti = randomBytes(15).toString('base64url').replace(/[-_]/g, 'A');
    body.set('client_assertion', await assertion(k, { jti, nbf: now, ...call.claims }, call.header ?? {}));
  }
  const proof =
    call.dpop instanceof DpopKey ? await call.dpop.proof(k, 'POST', url(k, path), call.proofClaims ?? {}) : call.dpop;
  return fetch(url(k, path), {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(typeof proof === 'string' ? { dpop: proof } : {}),
    },
    body,
  });
}

/** The suite's PAR: the parameters, client_id, an assertion; no DPoP proof unless given. */
function par(k: TestProvider, params: Record<string, string>, call: Call = {}): Promise<Response> {
  return post(k, PAR, params, { dpop: null, ...call });
}

/** The suite's redirect: request_uri, with response_type, client_id, scope and redirect_uri repeated. */
function authorize(
  k: TestProvider,
  requestUri: string,
  pushed: Record<string, string>,
  extra: Record<string, string> = {},
): Promise<Response> {
  const query = new URLSearchParams({ request_uri: requestUri });
  for (const name of ['response_type', 'client_id', 'scope', 'redirect_uri']) {
    if (pushed[name] !== undefined) query.set(name, pushed[name]);
  }
  for (const [name, value] of Object.entries(extra)) query.set(name, value);
  return fetch(`${k.baseUrl}/v2/oauth/authorize?${query}`, { redirect: 'manual' });
}

function token(k: TestProvider, fields: Record<string, string>, call: Call = {}): Promise<Response> {
  return post(k, TOKEN, { grant_type: 'authorization_code', redirect_uri: REDIRECT, ...fields }, call);
}

async function requestUriOf(res: Response): Promise<string> {
  expect(res.status).toBe(201);
  return ((await res.json()) as { request_uri: string }).request_uri;
}

/** The callback's parameters, or the refusal page's code. */
async function outcome(res: Response): Promise<URLSearchParams | string> {
  if (res.status === 302) return new URL(res.headers.get('location') ?? '').searchParams;
  expect(res.status).toBe(400);
  return /data-error-code="([^"]+)"/.exec(await res.text())?.[1] ?? '';
}

async function callback(res: Response): Promise<URLSearchParams> {
  const back = await outcome(res);
  if (typeof back === 'string') throw new Error(`authorize refused: ${back}`);
  return back;
}

interface Login {
  params: Record<string, string>;
  verifier: string;
  back: URLSearchParams;
  code: string;
}

/** PAR then authorize in the suite's shape, up to the callback. */
async function authorized(k: TestProvider, extra: Record<string, string> = {}, call: Call = {}): Promise<Login> {
  const { params, verifier } = loginParams(k, { redirect_uri: REDIRECT, ...extra });
  for (const [name, value] of Object.entries(params)) if (value === '') delete params[name];
  const back = await callback(await authorize(k, await requestUriOf(await par(k, params, call)), params));
  return { params, verifier, back, code: back.get('code') ?? '' };
}

interface Tokens {
  access_token: string;
  id_token: string;
  token_type: string;
  expires_in: number;
}

/** A whole login up to the tokens, each checked as the suite checks a token response. */
async function signedIn(k: TestProvider, dpop: DpopKey, extra: Record<string, string> = {}, call: Call = {}) {
  const login = await authorized(k, extra, call);
  expect(login.back.get('iss')).toBe(k.provider.issuer);
  const redirectUri = login.params['redirect_uri'] ?? REDIRECT;
  const res = await token(k, { code: login.code, code_verifier: login.verifier, redirect_uri: redirectUri }, { dpop });
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toContain('no-store');
  const tokens = (await res.json()) as Tokens;
  expect(tokens.token_type).toBe('DPoP');
  return { ...login, tokens, claims: await idTokenClaims(k, tokens.id_token) };
}

/** The ID token decrypted, its kid named and its signature verified with the provider's key set, as the suite does. */
async function idTokenClaims(k: TestProvider, idToken: string): Promise<Record<string, unknown>> {
  const key = k.client.fapi!.encryptionKey;
  const { plaintext } = await compactDecrypt(idToken, await importJWK(key, key.alg));
  const jws = new TextDecoder().decode(plaintext);
  expect(decodeProtectedHeader(jws).kid).toEqual(expect.any(String));
  const keys = createRemoteJWKSet(new URL(url(k, '/v2/.well-known/jwks.json')));
  const { payload } = await jwtVerify(jws, keys, {
    algorithms: ['PS256', 'ES256', 'EdDSA'],
    issuer: k.provider.issuer,
    audience: k.client.clientId,
    currentDate: new Date(k.provider.clock()),
  });
  expect(decodeJwt(jws)).toEqual(payload);
  return payload as Record<string, unknown>;
}

function userinfo(k: TestProvider, dpop: DpopKey, accessToken: string, scheme = 'DPoP', claims = {}) {
  return (async () =>
    fetch(url(k, USERINFO), {
      headers: {
        authorization: `${scheme} ${accessToken}`,
        dpop: await dpop.proof(k, 'GET', url(k, USERINFO), { ath: athOf(accessToken), ...claims }),
      },
    }))();
}

async function errorOf(res: Response): Promise<{ status: number; error: string }> {
  const body = (await res.json()) as { error: string };
  return { status: res.status, error: body.error };
}

describe('FAPI 2.0 Security Profile final server plan: well-behaved client', () => {
  it('FAPI2SPFinalDiscoveryEndpointVerification', async () => {
    const doc = (await (await fetch(url(c1, '/v2/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(doc['issuer']).toBe(c1.provider.issuer);
    expect(doc['pushed_authorization_request_endpoint']).toBe(`${c1.provider.issuer}/oauth/par`);
    expect(doc['require_pushed_authorization_requests']).toBe(true);
    expect(doc['token_endpoint_auth_methods_supported']).toContain('private_key_jwt');
    expect(doc['token_endpoint_auth_signing_alg_values_supported']).not.toContain('RS256');
    expect(doc['dpop_signing_alg_values_supported']).toEqual(expect.arrayContaining(['ES256', 'PS256']));
    expect(doc['code_challenge_methods_supported']).toEqual(['S256']);
    expect(doc['response_types_supported']).toEqual(['code']);
    expect(doc['authorization_response_iss_parameter_supported']).toBe(true);
    expect(doc['scopes_supported']).toContain('openid');
    expect(doc['grant_types_supported']).toContain('authorization_code');
    const fapiAlgs = ['PS256', 'ES256', 'EdDSA', 'Ed25519'];
    expect(doc['id_token_signing_alg_values_supported']).toEqual(expect.arrayContaining([expect.toBeOneOf(fapiAlgs)]));
    for (const alg of doc['dpop_signing_alg_values_supported'] as string[]) expect(fapiAlgs).toContain(alg);
    for (const alg of doc['token_endpoint_auth_signing_alg_values_supported'] as string[])
      expect(fapiAlgs).toContain(alg);
    expect(doc['subject_types_supported']).toEqual(expect.any(Array));
    expect(doc['authorization_endpoint']).toBe(`${c1.provider.issuer}/oauth/authorize`);
    expect(doc['token_endpoint']).toBe(`${c1.provider.issuer}/oauth/token`);
    expect(doc['jwks_uri']).toBe(`${c1.provider.issuer}/.well-known/jwks.json`);
  });

  it('FAPI2SPFinalHappyFlow', async () => {
    // Two clients, the second with its second registered redirect URI, as the module runs them.
    for (const [k, redirectUri] of [
      [c1, REDIRECT],
      [c2, SECOND_REDIRECT],
    ] as const) {
      const dpop = await DpopKey.make();
      const { tokens, claims, params, back } = await signedIn(k, dpop, { redirect_uri: redirectUri });
      expect(back.get('state')).toBe(params['state']);
      expect(claims).toMatchObject({ iss: k.provider.issuer, aud: k.client.clientId, nonce: params['nonce'] });
      expect(typeof claims['sub']).toBe('string');
      const atHash = createHash('sha256').update(tokens.access_token).digest().subarray(0, 16).toString('base64url');
      expect(claims['at_hash']).toBe(atHash);
      expect(typeof tokens.expires_in).toBe('number');
      expect((await userinfo(k, dpop, tokens.access_token)).status).toBe(200);
    }
  });

  it('FAPI2SPFinalUserRejectsAuthentication', async () => {
    c1.provider.approveNext({ deny: true });
    const login = await authorized(c1);
    expect(login.back.get('error')).toBe('access_denied');
    expect(login.back.get('state')).toBe(login.params['state']);
    expect(login.back.get('iss')).toBe(c1.provider.issuer);
  });

  it('FAPI2SPFinalEnsureAuthorizationRequestWithoutStateSuccess', async () => {
    const { back } = await signedIn(c1, await DpopKey.make(), { state: '' });
    expect(back.has('state')).toBe(false);
  });

  it('FAPI2SPFinalEnsureAuthorizationRequestWithoutNonceSuccess', async () => {
    const { claims } = await signedIn(c1, await DpopKey.make(), { nonce: '' });
    expect(claims).not.toHaveProperty('nonce');
  });

  it('FAPI2SPFinalEnsureAuthorizationRequestWith64CharNonceSuccess', async () => {
    const nonce = 'n'.repeat(64);
    expect((await signedIn(c1, await DpopKey.make(), { nonce })).claims['nonce']).toBe(nonce);
  });

  it('FAPI2SPFinalEnsureOtherScopeOrderSucceeds', async () => {
    await signedIn(c1, await DpopKey.make(), { scope: 'profile.name openid' });
  });

  it('FAPI2SPFinalTestClaimsParameterIdentityClaims (skipped by the suite: no claims_parameter_supported)', async () => {
    const doc = (await (await fetch(url(c1, '/v2/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(doc['claims_parameter_supported']).not.toBe(true);
  });

  it('FAPI2SPFinalAccessTokenTypeHeaderCaseSensitivity', async () => {
    const dpop = await DpopKey.make();
    const { tokens } = await signedIn(c1, dpop);
    expect((await userinfo(c1, dpop, tokens.access_token, 'dpop')).status).toBe(200);
    expect((await userinfo(c1, dpop, tokens.access_token, 'DpOp')).status).toBe(200);
  });
});

describe('FAPI 2.0 Security Profile final server plan: DPoP', () => {
  it('FAPI2SPFinalCheckDpopProofNbfExp', async () => {
    const dpop = await DpopKey.make();
    const now = Math.floor(c1.provider.clock() / 1000);
    const times = { nbf: now - 5, exp: now + 60 };
    const { tokens } = await signedIn(c1, dpop, {}, { dpop, proofClaims: times });
    expect((await userinfo(c1, dpop, tokens.access_token, 'DPoP', times)).status).toBe(200);
  });

  for (const [name, shift] of [
    ['FAPI2SPFinalEnsureDpopProofWithIat10SecondsBeforeSucceeds', -10],
    ['FAPI2SPFinalEnsureDpopProofWithIat10SecondsAfterSucceeds', 10],
  ] as const) {
    it(name, async () => {
      const dpop = await DpopKey.make();
      const iat = Math.floor(c1.provider.clock() / 1000) + shift;
      const login = await authorized(c1, {}, { dpop, proofClaims: { iat } });
      const res = await token(c1, { code: login.code, code_verifier: login.verifier }, { dpop, proofClaims: { iat } });
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as Tokens;
      expect((await userinfo(c1, dpop, access_token, 'DPoP', { iat })).status).toBe(200);
    });
  }

  it('FAPI2SPFinalEnsureMismatchedDpopJktFails', async () => {
    const dpop = await DpopKey.make();
    const other = await DpopKey.make();
    const { params } = loginParams(c1, { dpop_jkt: await calculateJwkThumbprint(other.publicJwk) });
    const res = await par(c1, params, { dpop });
    expect(await errorOf(res)).toEqual({ status: 400, error: 'invalid_dpop_proof' });
  });

  it('FAPI2SPFinalEnsureTokenEndpointFailsWithMismatchedDpopProofJkt', async () => {
    const login = await authorized(c1, {}, { dpop: await DpopKey.make() });
    const res = await token(c1, { code: login.code, code_verifier: login.verifier }, { dpop: await DpopKey.make() });
    expect((await errorOf(res)).error).toBe('invalid_grant');
  });

  it('FAPI2SPFinalEnsureTokenEndpointFailsWithMismatchedDpopJkt', async () => {
    const jkt = await calculateJwkThumbprint((await DpopKey.make()).publicJwk);
    const login = await authorized(c1, { dpop_jkt: jkt });
    const res = await token(c1, { code: login.code, code_verifier: login.verifier }, { dpop: await DpopKey.make() });
    expect((await errorOf(res)).error).toBe('invalid_grant');
  });

  it('FAPI2SPFinalEnsureDpopProofAtParEndpointBindingSuccess', async () => {
    const dpop = await DpopKey.make();
    await signedIn(c1, dpop, {}, { dpop });
  });

  it('FAPI2SPFinalEnsureDpopAuthCodeBindingSuccess', async () => {
    const dpop = await DpopKey.make();
    await signedIn(c1, dpop, { dpop_jkt: await calculateJwkThumbprint(dpop.publicJwk) }, { dpop });
  });

  it('FAPI2SPFinalDpopNegativeTests', async () => {
    const dpop = await DpopKey.make();
    const { tokens } = await signedIn(c1, dpop);
    const at = url(c1, USERINFO);
    const ath = athOf(tokens.access_token);
    const now = Math.floor(c1.provider.clock() / 1000);
    const proof = (claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
      dpop.proof(c1, 'GET', at, { ath, ...claims }, header);
    const call = (dpopHeader: string | undefined, scheme = 'DPoP') =>
      fetch(at, {
        headers: {
          authorization: `${scheme} ${tokens.access_token}`,
          ...(dpopHeader === undefined ? {} : { dpop: dpopHeader }),
        },
      }).then((res) => res.status);
    const reheader = (jws: string, change: (h: Record<string, unknown>) => void) => {
      const [h = '', p = '', sig = ''] = jws.split('.');
      const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
      change(header);
      return `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${p}.${sig}`;
    };
    const privateJwk = await exportJWK(dpop.privateKey);
    const fixedJti = await proof({ jti: 'fixed-jti-of-the-module' });
    // Each block of the module, in its order: the proof sent, and whether the module expects success.
    // Its default-port block has nothing to change here: the provider's loopback URL names its own port.
    const blocks: Array<[string, () => Promise<number>, boolean]> = [
      ['all upper case header name', async () => call(await proof()), true],
      ['more than one DPoP header', async () => call(`${await proof()}, ${await proof()}`), false],
      ['not a well-formed JWT', async () => call('not.a-jwt'), false],
      ['typ missing', async () => call(await proof({}, { typ: undefined })), false],
      ['alg missing', async () => call(reheader(await proof(), (h) => delete h['alg'])), false],
      ['jwk missing', async () => call(await proof({}, { jwk: undefined })), false],
      ['jti missing', async () => call(await proof({ jti: undefined })), false],
      ['htm missing', async () => call(await proof({ htm: undefined })), false],
      ['htu missing', async () => call(await proof({ htu: undefined })), false],
      ['iat missing', async () => call(await proof({ iat: undefined })), false],
      ['ath missing', async () => call(await proof({ ath: undefined })), false],
      ['typ invalid', async () => call(await proof({}, { typ: 'JWT' })), false],
      ['alg none', async () => call(reheader(await proof(), (h) => (h['alg'] = 'none')).replace(/[^.]+$/, '')), false],
      ['invalid signature', async () => call(`${(await proof()).slice(0, -6)}AAAAAA`), false],
      ['jwk holds the private key', async () => call(await proof({}, { jwk: privateJwk })), false],
      ['htm PUT', async () => call(await proof({ htm: 'PUT' })), false],
      ['htu with a query and fragment', async () => call(await proof({ htu: `${at}?a=b#c` })), true],
      ['htu without a query and fragment', async () => call(await proof({ htu: at })), true],
      ['htu another URL', async () => call(await proof({ htu: url(c1, '/v2/other') })), false],
      ['iat an hour ahead', async () => call(await proof({ iat: now + 3600 })), false],
      ['iat an hour ago', async () => call(await proof({ iat: now - 3600 })), false],
      ['jti first use', async () => call(fixedJti), true],
      ['jti second use', async () => call(fixedJti), false],
      ['ath incorrect', async () => call(await proof({ ath: athOf('another token') })), false],
      ['signed by another key', async () => call(await (await DpopKey.make()).proof(c1, 'GET', at, { ath })), false],
      ['extra header members and claims', async () => call(await proof({ extra: 'x' }, { extra: 'y' })), true],
      [
        'htu scheme and host in capitals',
        async () => call(await proof({ htu: at.replace('http://127.0.0.1', 'HTTP://127.0.0.1') })),
        true,
      ],
      ['no DPoP proof', async () => call(undefined), false],
      ['no DPoP proof, scheme Bearer', async () => call(undefined, 'Bearer'), false],
      ['a correct proof still works', async () => call(await proof()), true],
    ];
    for (const [block, send, succeeds] of blocks) {
      const status = await send();
      expect(status === 200 ? 'accepted' : [400, 401].includes(status) ? 'refused' : String(status), block).toBe(
        succeeds ? 'accepted' : 'refused',
      );
    }
  });
});

describe('FAPI 2.0 Security Profile final server plan: parameters outside the pushed request', () => {
  it('FAPI2SPFinalEnsureDifferentNonceInsideAndOutsideRequestObject', async () => {
    const { params } = loginParams(c1, { redirect_uri: REDIRECT });
    const res = await authorize(c1, await requestUriOf(await par(c1, params)), params, { nonce: 'outside' });
    // One of the three outcomes the module accepts: an error page naming invalid_request.
    expect(await outcome(res)).toBe('invalid_request');
  });

  it('FAPI2SPFinalEnsureDifferentStateInsideAndOutsideRequestObject', async () => {
    const { params } = loginParams(c1, { redirect_uri: REDIRECT });
    const res = await authorize(c1, await requestUriOf(await par(c1, params)), params, { state: 'outside' });
    expect(await outcome(res)).toBe('invalid_request');
  });

  it('FAPI2SPFinalEnsureAuthorizationRequestWithLongNonce', async () => {
    const nonce = 'n'.repeat(384);
    expect((await signedIn(c1, await DpopKey.make(), { nonce })).claims['nonce']).toBe(nonce);
  });

  it('FAPI2SPFinalEnsureAuthorizationRequestWithLongState', async () => {
    const state = 's'.repeat(384);
    expect((await signedIn(c1, await DpopKey.make(), { state })).back.get('state')).toBe(state);
  });

  it('FAPI2SPFinalStateOnlyOutsideRequestObjectNotUsed', async () => {
    const { params } = loginParams(c1, { redirect_uri: REDIRECT });
    delete params['state'];
    const back = await callback(
      await authorize(c1, await requestUriOf(await par(c1, params)), params, { state: 'outside' }),
    );
    expect(back.get('code')).toEqual(expect.any(String));
    expect(back.has('state')).toBe(false);
  });

  it('FAPI2SPFinalEnsureRequestObjectWithoutRedirectUriFails', async () => {
    const { params } = loginParams(c1);
    delete params['redirect_uri'];
    expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it('FAPI2SPFinalParWithoutDuplicateParameters', async () => {
    const { params, verifier } = loginParams(c1, { redirect_uri: REDIRECT });
    const uri = await requestUriOf(await par(c1, params));
    const query = new URLSearchParams({ client_id: c1.client.clientId, request_uri: uri });
    const back = await callback(await fetch(`${c1.baseUrl}/v2/oauth/authorize?${query}`, { redirect: 'manual' }));
    const res = await token(
      c1,
      { code: back.get('code') ?? '', code_verifier: verifier },
      { dpop: await DpopKey.make() },
    );
    expect(res.status).toBe(200);
  });
});

describe('FAPI 2.0 Security Profile final server plan: authorization request refusals', () => {
  it('FAPI2SPFinalTolerateUnregisteredRedirectUri', async () => {
    const { params } = loginParams(c1, { redirect_uri: 'http://127.0.0.1:3000/unregistered' });
    // RFC 9126 2.4 lets a server accept it; this one refuses, at PAR, with RFC 9126 2.3's code.
    expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it('FAPI2SPFinalEnsureUnsignedAuthorizationRequestWithoutUsingParFails', async () => {
    const { params } = loginParams(c1);
    const res = await fetch(`${c1.baseUrl}/v2/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
    expect(await outcome(res)).toBe('invalid_request');
  });

  it('FAPI2SPFinalEnsureRedirectUriInAuthorizationRequest', async () => {
    const { params } = loginParams(c1);
    delete params['redirect_uri'];
    expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'invalid_request' });
  });

  for (const [name, responseType] of [
    ['FAPI2SPFinalEnsureResponseTypeCodeIdTokenFails', 'code id_token'],
    ['FAPI2SPFinalEnsureResponseTypeTokenFails', 'token'],
  ] as const) {
    it(name, async () => {
      const { params } = loginParams(c1, { response_type: responseType });
      expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'unsupported_response_type' });
    });
  }

  it('FAPI2SPFinalPAREnsurePKCERequired', async () => {
    const { params } = loginParams(c1);
    delete params['code_challenge'];
    delete params['code_challenge_method'];
    expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it('FAPI2SPFinalPAREnsurePlainPKCERejected', async () => {
    const { params } = loginParams(c1, { code_challenge_method: 'plain' });
    expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it('FAPI2SPFinalPARRejectRequestUriInParAuthorizationFormParams', async () => {
    const { params } = loginParams(c1, { request_uri: 'urn:ietf:params:oauth:request_uri:random' });
    expect(await errorOf(await par(c1, params))).toEqual({ status: 400, error: 'invalid_request' });
  });

  it('FAPI2SPFinalPARRejectInvalidHttpVerb', async () => {
    const res = await fetch(url(c1, PAR));
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
  });
});

describe('FAPI 2.0 Security Profile final server plan: request_uri', () => {
  it('FAPI2SPFinalPAREnsureServerAcceptsReusedRequestUriBeforeAuthenticationCompletion', async () => {
    const { params, verifier } = loginParams(q1, { redirect_uri: REDIRECT });
    const uri = await requestUriOf(await par(q1, params));
    // The first visit: the QR page, nobody signs in.
    expect((await authorize(q1, uri, params)).status).toBe(200);
    // The second visit: the person signs in (the kit approves it).
    q1.provider.approveNext({ persona: 'ada' });
    const back = await callback(await authorize(q1, uri, params));
    expect(back.get('state')).toBe(params['state']);
    const res = await token(
      q1,
      { code: back.get('code') ?? '', code_verifier: verifier },
      { dpop: await DpopKey.make() },
    );
    expect(res.status).toBe(200);
  });

  it('FAPI2SPFinalPARAttemptReuseRequestUri', async () => {
    const { params } = loginParams(c1, { redirect_uri: REDIRECT });
    const uri = await requestUriOf(await par(c1, params));
    await callback(await authorize(c1, uri, params));
    expect(await outcome(await authorize(c1, uri, params))).toBe('invalid_request_uri');
  });

  it('FAPI2SPFinalPARAttemptToUseExpiredRequestUri', async () => {
    const { params } = loginParams(c1, { redirect_uri: REDIRECT });
    const res = await par(c1, params);
    const { request_uri, expires_in } = (await res.json()) as { request_uri: string; expires_in: number };
    c1.provider.advanceClock(expires_in * 1000 + 1000);
    expect(await outcome(await authorize(c1, request_uri, params))).toBe('invalid_request_uri');
  });

  it('FAPI2SPFinalPAREnsureRequestUriIsBoundToClient', async () => {
    const { params } = loginParams(c1, { redirect_uri: REDIRECT });
    const uri = await requestUriOf(await par(c1, params));
    const query = new URLSearchParams({ client_id: c2.client.clientId, request_uri: uri });
    expect(await outcome(await fetch(`${c2.baseUrl}/v2/oauth/authorize?${query}`, { redirect: 'manual' }))).toBe(
      'invalid_request_uri',
    );
  });
});

describe('FAPI 2.0 Security Profile final server plan: token endpoint', () => {
  it('FAPI2SPFinalEnsureClientIdInTokenEndpoint', async () => {
    const login = await authorized(c1);
    const res = await token(
      c1,
      { code: login.code, code_verifier: login.verifier, client_id: c2.client.clientId },
      {
        dpop: await DpopKey.make(),
      },
    );
    expect(await errorOf(res)).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('FAPI2SPFinalEnsureHolderOfKeyRequired', async () => {
    const login = await authorized(c1);
    const res = await token(c1, { code: login.code, code_verifier: login.verifier }, { dpop: null });
    expect((await errorOf(res)).error).toBe('invalid_dpop_proof');
  });

  it('FAPI2SPFinalEnsureAuthorizationCodeIsBoundToClient', async () => {
    const login = await authorized(c1);
    const res = await token(c2, { code: login.code, code_verifier: login.verifier }, { dpop: await DpopKey.make() });
    expect((await errorOf(res)).error).toBe('invalid_grant');
  });

  it('FAPI2SPFinalAttemptReuseAuthorizationCodeAfterOneSecond', async () => {
    const dpop = await DpopKey.make();
    const { code, verifier, tokens } = await signedIn(c1, dpop);
    c1.provider.advanceClock(1000);
    expect((await errorOf(await token(c1, { code, code_verifier: verifier }, { dpop }))).error).toBe('invalid_grant');
    // The tokens of the code are revoked (RFC 6749 4.1.2's recommendation).
    expect((await userinfo(c1, dpop, tokens.access_token)).status).toBe(401);
  });

  it('FAPI2SPFinalAttemptToUseExpiredAuthCode', async () => {
    const login = await authorized(c1);
    c1.provider.advanceClock(61_000);
    const res = await token(c1, { code: login.code, code_verifier: login.verifier }, { dpop: await DpopKey.make() });
    expect((await errorOf(res)).error).toBe('invalid_grant');
  });

  it('FAPI2SPFinalPAREnsurePKCECodeVerifierRequired', async () => {
    const login = await authorized(c1);
    const res = await token(c1, { code: login.code }, { dpop: await DpopKey.make() });
    expect(await errorOf(res)).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('FAPI2SPFinalPARIncorrectPKCECodeVerifierRejected', async () => {
    const login = await authorized(c1);
    const res = await token(c1, { code: login.code, code_verifier: 'x'.repeat(43) }, { dpop: await DpopKey.make() });
    expect(await errorOf(res)).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('FAPI2SPFinalRefreshToken (skipped by the suite: no refresh token issued)', async () => {
    const { tokens } = await signedIn(c1, await DpopKey.make());
    expect(tokens).not.toHaveProperty('refresh_token');
    // And the metadata agrees (the module's warning otherwise): no refresh_token grant advertised.
    const doc = (await (await fetch(url(c1, '/v2/.well-known/openid-configuration'))).json()) as Record<
      string,
      unknown
    >;
    expect(doc['grant_types_supported']).not.toContain('refresh_token');
  });
});

describe('FAPI 2.0 Security Profile final server plan: private_key_jwt', () => {
  const refusedAtToken = async (call: Call) => {
    const login = await authorized(c1);
    return errorOf(
      await token(c1, { code: login.code, code_verifier: login.verifier }, { dpop: await DpopKey.make(), ...call }),
    );
  };

  it('FAPI2SPFinalEnsureSignedClientAssertionWithRS256Fails', async () => {
    const rsa = await fapiTestKeys('RSA-OAEP-256');
    // An RS256 assertion: refused for its alg before any key is looked for.
    const signed = await assertion(
      c1,
      {},
      { alg: 'RS256', kid: c1.client.fapi!.signingKey.kid },
      {
        ...rsa.encryptionKey,
        alg: 'RS256',
        use: 'sig',
      },
    );
    const login = await authorized(c1);
    const body = new URLSearchParams({
      grant_type: 'authorization_code',
      redirect_uri: REDIRECT,
      code: login.code,
      code_verifier: login.verifier,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: signed,
    });
    const dpop = await DpopKey.make();
    const res = await fetch(url(c1, TOKEN), {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        dpop: await dpop.proof(c1, 'POST', url(c1, TOKEN)),
      },
      body,
    });
    expect(await errorOf(res)).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('FAPI2SPFinalEnsureClientAssertionInTokenEndpoint', async () => {
    const login = await authorized(c1);
    const res = await token(
      c1,
      { code: login.code, code_verifier: login.verifier, client_id: c1.client.clientId },
      {
        claims: null,
        dpop: await DpopKey.make(),
      },
    );
    expect(['invalid_client', 'invalid_request']).toContain((await errorOf(res)).error);
  });

  it('FAPI2SPFinalEnsureClientAssertionWithExpIs5MinutesInPastFails', async () => {
    const now = Math.floor(c1.provider.clock() / 1000);
    expect(await refusedAtToken({ claims: { exp: now - 300, iat: now - 360 } })).toEqual({
      status: 401,
      error: 'invalid_client',
    });
  });

  it('FAPI2SPFinalEnsureClientAssertionWithWrongAudFails', async () => {
    expect(await refusedAtToken({ claims: { aud: 'https://other.example' } })).toEqual({
      status: 401,
      error: 'invalid_client',
    });
  });

  it('FAPI2SPFinalEnsureClientAssertionWithNoSubFails', async () => {
    expect(await refusedAtToken({ claims: { sub: undefined } })).toEqual({ status: 401, error: 'invalid_client' });
  });

  it('FAPI2SPFinalPAREnsureJWTClientAssertionWithIatNbf8SecondsInTheFutureIsAccepted', async () => {
    const now = Math.floor(c1.provider.clock() / 1000);
    const { params } = loginParams(c1);
    expect((await par(c1, params, { claims: { iat: now + 8, nbf: now + 8, exp: now + 68 } })).status).toBe(201);
  });

  it('FAPI2SPFinalPAREnsureJWTClientAssertionWithIatNbfOver60SecondsInTheFutureFails', async () => {
    const now = Math.floor(c1.provider.clock() / 1000);
    const { params } = loginParams(c1);
    const res = await par(c1, params, { claims: { iat: now + 70, nbf: now + 70, exp: now + 130 } });
    expect(await errorOf(res)).toEqual({ status: 401, error: 'invalid_client' });
  });

  for (const [name, aud] of [
    ['FAPI2SPFinalPAREndpointAsArrayAudienceFails', (k: TestProvider) => [url(k, PAR)]],
    ['FAPI2SPFinalPAREndpointAsAudienceFails', (k: TestProvider) => url(k, PAR)],
    ['FAPI2SPFinalPARTokenEndpointAsAudienceFails', (k: TestProvider) => url(k, TOKEN)],
  ] as const) {
    it(name, async () => {
      const { params } = loginParams(c1);
      expect(await errorOf(await par(c1, params, { claims: { aud: aud(c1) } }))).toEqual({
        status: 401,
        error: 'invalid_client',
      });
    });
  }
});
