import { SgidClient, generatePkcePair } from '@opengovsg/sgid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartedProvider } from '../../src/provider/index.js';
import { testKeyPair } from '../helpers/keys.js';
import { startTestProvider, TEST_CLIENT } from '../helpers/provider-fixtures.js';

describe('the official reference client against our provider', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider({ autoApprove: true });
  });
  afterAll(() => started.close());

  it('signs in and decrypts name, identity number and passport expiry date', async () => {
    for (const privateKey of [testKeyPair('rp').privateKeyPem, testKeyPair('rp').privateKeyPkcs1Pem]) {
      const client = new SgidClient({
        clientId: TEST_CLIENT.clientId,
        clientSecret: TEST_CLIENT.clientSecret,
        privateKey,
        redirectUri: TEST_CLIENT.redirectUri,
        hostname: started.baseUrl,
      });
      const { codeVerifier, codeChallenge } = generatePkcePair();
      const { url, nonce } = client.authorizationUrl({
        state: 'interop-state',
        scope: ['openid', 'profile.name', 'profile.nric_number', 'profile.passport_expiry_date'],
        codeChallenge,
      });
      const res = await fetch(url, { redirect: 'manual' });
      expect(res.status).toBe(302);
      const callback = new URL(res.headers.get('location') ?? '');
      expect(`${callback.origin}${callback.pathname}`).toBe(TEST_CLIENT.redirectUri);
      expect(callback.searchParams.get('state')).toBe('interop-state');
      const code = callback.searchParams.get('code') ?? '';

      const { sub, accessToken } = await client.callback({ code, nonce, codeVerifier });
      const persona = started.provider.personas[0]!;
      expect(sub).toBe(started.provider.subjectFor(TEST_CLIENT.clientId, persona.id));

      const info = await client.userinfo({ sub, accessToken });
      expect(info.sub).toBe(sub);
      expect(info.data).toEqual({
        'profile.name': persona['profile.name'],
        'profile.nric_number': persona['profile.nric_number'],
        'profile.passport_expiry_date': persona['profile.passport_expiry_date'],
      });
    }
  });
});
