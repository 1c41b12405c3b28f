import { describe, expect, it } from 'vitest';
import { startProvider } from '../helpers/provider.js';
import {
  authorizeCode,
  authorizeQuery,
  pkce,
  postToken,
  providerOptions,
  TEST_CLIENT,
  tokenBody,
} from '../helpers/provider-fixtures.js';

describe('logging', () => {
  it('is off by default', async () => {
    const writes: string[] = [];
    const original = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string | Uint8Array) => {
      writes.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    try {
      const started = await startProvider(providerOptions({ autoApprove: true }));
      const { challenge } = pkce();
      await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`, { redirect: 'manual' });
      await started.close();
    } finally {
      process.stderr.write = original;
    }
    expect(writes.join('')).not.toMatch(/nd-id-provider|authorize/);
  });

  it('when on, never writes a secret, code, token or personal attribute', async () => {
    const lines: string[] = [];
    const started = await startProvider(providerOptions({ autoApprove: true, log: (line) => lines.push(line) }));
    try {
      const { verifier, challenge } = pkce();
      const code = await authorizeCode(started.baseUrl, challenge);
      const tokens = (await (await postToken(started.baseUrl, tokenBody(code, verifier))).json()) as Record<
        string,
        string
      >;
      await fetch(`${started.baseUrl}/v2/oauth/userinfo`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      });
      await postToken(started.baseUrl, tokenBody(code, verifier));
      await postToken(started.baseUrl, tokenBody(code, verifier, { client_secret: 'wrong-secret' }));

      const log = lines.join('\n');
      expect(lines.length).toBeGreaterThanOrEqual(5);
      expect(log).toMatch(
        /refused: invalid_grant \(400\) for client test-client: The authorization code was already used/,
      );
      expect(log).toMatch(/refused: invalid_client \(401\) for client test-client/);
      const persona = started.provider.personas[0]!;
      for (const secret of [
        TEST_CLIENT.clientSecret,
        'wrong-secret',
        code,
        verifier,
        challenge,
        tokens.access_token!,
        tokens.id_token!,
        persona['profile.name'],
        persona['profile.nric_number'],
        persona['profile.passport_expiry_date'],
        started.provider.subjectFor(TEST_CLIENT.clientId, persona.id),
        'state-123',
        'nonce-456',
      ]) {
        expect(log).not.toContain(secret);
      }
    } finally {
      await started.close();
    }
  });
});
