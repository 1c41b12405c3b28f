import { describe, expect, it } from 'vitest';
import { startProvider } from '../helpers/provider.js';
import {
  authorizeCode,
  OTHER_CLIENT,
  pkce,
  postToken,
  providerOptions,
  TEST_CLIENT,
  tokenBody,
} from '../helpers/provider-fixtures.js';

async function subOf(baseUrl: string, client: typeof TEST_CLIENT): Promise<string> {
  const { verifier, challenge } = pkce();
  const code = await authorizeCode(baseUrl, challenge, {
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
  });
  const res = await postToken(
    baseUrl,
    tokenBody(code, verifier, {
      client_id: client.clientId,
      client_secret: client.clientSecret,
      redirect_uri: client.redirectUri,
    }),
  );
  const { id_token } = (await res.json()) as { id_token: string };
  return (JSON.parse(Buffer.from(id_token.split('.')[1]!, 'base64url').toString()) as { sub: string }).sub;
}

describe('pairwise sub', () => {
  it('is the same for a person and client across two provider instances sharing subjectSecret, and differs across clients', async () => {
    const subjectSecret = 'a-stable-subject-secret-for-tests';
    const one = await startProvider(providerOptions({ autoApprove: 'dewi', subjectSecret }));
    const two = await startProvider(providerOptions({ autoApprove: 'dewi', subjectSecret }));
    try {
      const a1 = await subOf(one.baseUrl, TEST_CLIENT);
      const a2 = await subOf(two.baseUrl, TEST_CLIENT);
      const b1 = await subOf(one.baseUrl, OTHER_CLIENT);
      expect(a1).toBe(a2);
      expect(b1).not.toBe(a1);
      expect(a1).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(a1).not.toContain('dewi');
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('changes with another subjectSecret, and differs between people', async () => {
    const one = await startProvider(providerOptions({ autoApprove: 'dewi', subjectSecret: 'first-secret-0123456789' }));
    const two = await startProvider(
      providerOptions({ autoApprove: 'dewi', subjectSecret: 'second-secret-0123456789' }),
    );
    try {
      expect(await subOf(one.baseUrl, TEST_CLIENT)).not.toBe(await subOf(two.baseUrl, TEST_CLIENT));
      expect(one.provider.subjectFor(TEST_CLIENT.clientId, 'ada')).not.toBe(
        one.provider.subjectFor(TEST_CLIENT.clientId, 'ben'),
      );
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });
});
