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

  it('names the client of a wrong secret sent with HTTP Basic (form body, as a generic relying party sends it), never the secret', async () => {
    const lines: string[] = [];
    const started = await startProvider(providerOptions({ autoApprove: true, log: (line) => lines.push(line) }));
    try {
      const { verifier, challenge } = pkce();
      const code = await authorizeCode(started.baseUrl, challenge);
      const wrong = 'wrong-basic-secret-value';
      const basic = Buffer.from(`${encodeURIComponent(TEST_CLIENT.clientId)}:${encodeURIComponent(wrong)}`).toString(
        'base64',
      );
      const res = await fetch(`${started.baseUrl}/v2/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: TEST_CLIENT.redirectUri,
        }),
      });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_client');
      const refusal = lines.find((line) => line.includes('refused: invalid_client'));
      expect(refusal).toMatch(/^token: refused: invalid_client \(401\) for client test-client: /);
      for (const secret of [wrong, basic, code, verifier]) expect(lines.join('\n')).not.toContain(secret);
    } finally {
      await started.close();
    }
  });
});
