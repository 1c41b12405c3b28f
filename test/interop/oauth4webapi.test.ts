/**
 * oauth4webapi against the provider in interactive mode: the QR page, the phone's number matching
 * and approval over HTTP, then the code exchange with its application-level signature check,
 * max_age, and userinfo by POST with the form body token.
 */
import { createPrivateKey } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';
import { decryptAttributes } from './decrypt-userinfo.js';

let started: StartedProvider;
let as: oauth.AuthorizationServer;
const rp: oauth.Client = { client_id: TEST_CLIENT.clientId };
const insecure = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  started = await startTestProvider({ pollIntervalMs: 50 });
  const issuer = new URL(started.provider.issuer);
  as = await oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { ...insecure, algorithm: 'oidc' }),
  );
});
afterAll(() => started.close());

describe('oauth4webapi against the provider', () => {
  it('QR page, number matching and approval on the phone, code exchange with signature and max_age checks, userinfo by POST', async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: rp.client_id,
      redirect_uri: TEST_CLIENT.redirectUri,
      scope: 'openid profile.name',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      max_age: '120',
    }).toString();

    const html = await (await fetch(url)).text();
    const phoneUrl = /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '';
    const matchCode = /data-match-code="(\d\d)"/.exec(html)?.[1] ?? '';
    const statusUrl = new URL(
      (JSON.parse(/id="qr-config">([^<]*)</.exec(html)?.[1] ?? '{}') as { statusUrl: string }).statusUrl,
      url,
    );
    const phone = await fetch(phoneUrl, {
      method: 'POST',
      body: new URLSearchParams({ decision: 'approve', persona: 'ada', match: matchCode }),
    });
    expect(phone.status).toBe(200);
    const decided = (await (await fetch(statusUrl)).json()) as { status: string; redirectTo: string };
    expect(decided.status).toBe('approved');

    const params = oauth.validateAuthResponse(as, rp, new URL(decided.redirectTo), state);
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      rp,
      oauth.ClientSecretPost(TEST_CLIENT.clientSecret),
      params,
      TEST_CLIENT.redirectUri,
      verifier,
      insecure,
    );
    const tokens = await oauth.processAuthorizationCodeResponse(as, rp, response, {
      expectedNonce: nonce,
      maxAge: 120,
      requireIdToken: true,
    });
    // The ID token's RS256 signature against the published key set.
    await oauth.validateApplicationLevelSignature(as, response, insecure);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(typeof claims.auth_time).toBe('number');

    const userinfo = await fetch(as.userinfo_endpoint!, {
      method: 'POST',
      body: new URLSearchParams({ access_token: tokens.access_token }),
    });
    const body = await oauth.processUserInfoResponse(as, rp, claims.sub, userinfo);
    const persona = started.provider.personas.find((p) => p.id === 'ada')!;
    expect(await decryptAttributes(body, createPrivateKey(testKeyPair('rp').privateKeyPem))).toEqual({
      'profile.name': persona['profile.name'],
    });
  });
});
