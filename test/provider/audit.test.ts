/**
 * The audit over real HTTP: each mistake of a relying party becomes a finding with its code, a
 * count and a first-seen time; the good behaviour gives none; nothing the client sent is kept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditFinding, StartedProvider } from '../../src/provider/index.js';
import { Audit, formatAuditTable } from '../../src/provider/testing/audit.js';
import {
  authorizeCode,
  authorizeQuery,
  OTHER_CLIENT,
  pkce,
  postToken,
  startTestProvider,
  TEST_CLIENT,
  tokenBody,
} from '../helpers/provider-fixtures.js';

const GOOD_STATE = 'Zq3xT0b9_Yl7mR2c-Kd8sAo'; // 23 unreserved characters

let started: StartedProvider | undefined;
afterEach(async () => {
  await started?.close();
  started = undefined;
});

async function start(extra: Record<string, unknown> = {}): Promise<StartedProvider> {
  started = await startTestProvider({ autoApprove: 'chandra', ...extra });
  return started;
}

function codes(findings: AuditFinding[]): Record<string, number> {
  return Object.fromEntries(findings.map((f) => [f.code, f.count]));
}

/** A fresh state and nonce per call, as a good client sends them. */
let serial = 0;
function fresh(): Record<string, string> {
  serial += 1;
  return { state: `${GOOD_STATE}-${serial}`, nonce: `nonce-${serial}-${GOOD_STATE}` };
}

describe('provider.audit()', () => {
  it('has no finding for a client that logs in correctly, twice', async () => {
    const { provider, baseUrl } = await start();
    for (let i = 0; i < 2; i++) {
      const { verifier, challenge } = pkce();
      const code = await authorizeCode(baseUrl, challenge, fresh());
      const res = await postToken(baseUrl, tokenBody(code, verifier));
      expect(res.status).toBe(200);
      const { access_token } = (await res.json()) as { access_token: string };
      expect(
        (await fetch(`${baseUrl}/v2/oauth/userinfo`, { headers: { authorization: `Bearer ${access_token}` } })).status,
      ).toBe(200);
    }
    expect(provider.audit()).toEqual([]);
  });

  it('reports reused PKCE challenge, state and nonce, once each', async () => {
    const { provider, baseUrl } = await start();
    const { challenge } = pkce();
    const same = fresh();
    await authorizeCode(baseUrl, challenge, same);
    await authorizeCode(baseUrl, challenge, same);
    expect(codes(provider.audit(TEST_CLIENT.clientId))).toEqual({
      pkce_challenge_reused: 1,
      state_reused: 1,
      nonce_reused: 1,
    });
  });

  it('reports a missing state and nonce, and a weak state (short, or outside the unreserved set)', async () => {
    const { provider, baseUrl } = await start();
    await authorizeCode(baseUrl, pkce().challenge, { state: null, nonce: null });
    await authorizeCode(baseUrl, pkce().challenge, { ...fresh(), state: 'short-state' });
    await authorizeCode(baseUrl, pkce().challenge, { ...fresh(), state: 'this state has spaces in it, 40 chars!!' });
    const findings = provider.audit();
    expect(codes(findings)).toEqual({ state_missing: 1, state_weak: 2, nonce_missing: 1 });
    const weak = findings.find((f) => f.code === 'state_weak');
    expect(weak?.message).toMatch(/22 characters/);
    expect(new Date(weak?.firstSeen ?? '').getTime()).toBeGreaterThan(0);
  });

  it('reports a code redeemed twice and a wrong verifier', async () => {
    const { provider, baseUrl } = await start();
    const a = pkce();
    const code = await authorizeCode(baseUrl, a.challenge, fresh());
    expect((await postToken(baseUrl, tokenBody(code, a.verifier))).status).toBe(200);
    expect((await postToken(baseUrl, tokenBody(code, a.verifier))).status).toBe(400);
    const b = pkce();
    const code2 = await authorizeCode(baseUrl, b.challenge, fresh());
    const res = await postToken(baseUrl, tokenBody(code2, pkce().verifier));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    expect(codes(provider.audit())).toEqual({ code_redeemed_twice: 1, token_request_without_verifier_match: 1 });
  });

  it('attributes a wrong secret and an unregistered redirect_uri to a registered client only', async () => {
    const { provider, baseUrl } = await start();
    const wrong = await postToken(
      baseUrl,
      tokenBody('some-code', pkce().verifier, { client_secret: 'not-the-secret-0123456789' }),
    );
    expect(wrong.status).toBe(401);
    const stranger = await postToken(
      baseUrl,
      tokenBody('some-code', pkce().verifier, { client_id: 'nobody', client_secret: 'x' }),
    );
    expect(stranger.status).toBe(401);
    const bad = await fetch(
      `${baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge, { ...fresh(), redirect_uri: 'http://127.0.0.1:9999/elsewhere' })}`,
    );
    expect(bad.status).toBe(400);
    const unknown = await fetch(
      `${baseUrl}/v2/oauth/authorize?${authorizeQuery(pkce().challenge, { client_id: 'nobody', redirect_uri: 'http://127.0.0.1/x' })}`,
    );
    expect(unknown.status).toBe(400);
    expect(codes(provider.audit(TEST_CLIENT.clientId))).toEqual({
      client_secret_wrong: 1,
      redirect_uri_not_registered: 1,
    });
    expect(provider.audit('nobody')).toEqual([]);
    expect(provider.audit(OTHER_CLIENT.clientId)).toEqual([]);
    expect(provider.audit().every((f) => f.clientId === TEST_CLIENT.clientId)).toBe(true);
  });

  it('keeps no state, nonce, challenge, code, secret or token in its findings', async () => {
    const { provider, baseUrl } = await start();
    const { verifier, challenge } = pkce();
    const sent = { state: 'weak-STATE-value', nonce: 'NONCE-value-to-hide' };
    const code = await authorizeCode(baseUrl, challenge, sent);
    await authorizeCode(baseUrl, challenge, sent);
    await postToken(baseUrl, tokenBody(code, verifier));
    await postToken(baseUrl, tokenBody(code, verifier, { client_secret: 'WRONG-secret-value-123' }));
    await postToken(baseUrl, tokenBody(code, verifier));
    const text = JSON.stringify(provider.audit()) + formatAuditTable(provider.audit());
    expect(provider.audit().length).toBeGreaterThanOrEqual(5);
    for (const secret of [
      sent.state,
      sent.nonce,
      challenge,
      verifier,
      code,
      'WRONG-secret-value-123',
      TEST_CLIENT.clientSecret,
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('ID-token faults feed the audit', () => {
  it.each(['bad_signature', 'unknown_key', 'expired_id_token', 'wrong_audience'] as const)(
    'flags id_token_not_checked when userinfo is called with the access token of a %s ID token, and not for a sound one',
    async (kind) => {
      const { provider, baseUrl } = await start();
      const redeem = async (): Promise<string> => {
        const { verifier, challenge } = pkce();
        const res = await postToken(baseUrl, tokenBody(await authorizeCode(baseUrl, challenge, fresh()), verifier));
        return ((await res.json()) as { access_token: string }).access_token;
      };
      const userinfo = (token: string) =>
        fetch(`${baseUrl}/v2/oauth/userinfo`, { headers: { authorization: `Bearer ${token}` } });
      expect((await userinfo(await redeem())).status).toBe(200);
      expect(codes(provider.audit())).toEqual({});
      provider.faults.inject({ kind }, { endpoint: 'token', times: 1 });
      expect((await userinfo(await redeem())).status).toBe(200);
      expect(codes(provider.audit())).toEqual({ id_token_not_checked: 1 });
    },
  );
});

describe('GET /_provider/audit', () => {
  it('answers 404 unless auditEndpoint is on', async () => {
    const { baseUrl } = await start();
    expect((await fetch(`${baseUrl}/_provider/audit`)).status).toBe(404);
  });

  it('serves the findings as JSON, of all clients or of one', async () => {
    const { baseUrl } = await start({ auditEndpoint: true });
    await authorizeCode(baseUrl, pkce().challenge, { state: null, nonce: 'n-0123456789' });
    const res = await fetch(`${baseUrl}/_provider/audit`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { findings: AuditFinding[] };
    expect(body.findings.map((f) => [f.clientId, f.code, f.count])).toEqual([
      [TEST_CLIENT.clientId, 'state_missing', 1],
    ]);
    const other = (await (await fetch(`${baseUrl}/_provider/audit?client_id=${OTHER_CLIENT.clientId}`)).json()) as {
      findings: unknown[];
    };
    expect(other.findings).toEqual([]);
  });

  it('refuses a non-boolean auditEndpoint with a TypeError naming it', () => {
    return expect(startTestProvider({ auditEndpoint: 'yes' as unknown as boolean })).rejects.toThrow(
      /auditEndpoint must be true or false/,
    );
  });
});

describe('Audit (unit)', () => {
  const request = (state: string, n: number) => ({
    ok: true as const,
    request: { clientId: 'c', state, nonce: `nonce-${n}`, codeChallenge: `challenge-${n}`.padEnd(43, 'x') },
  });

  it('flags id_token_not_checked when userinfo is called with the access token of a broken ID token', () => {
    const audit = new Audit(
      () => 0,
      (id) => id === 'c',
    );
    audit.markBrokenIdToken('token-broken');
    audit.userinfo('c', 'token-fine');
    expect(audit.findings()).toEqual([]);
    audit.userinfo('c', 'token-broken');
    expect(audit.findings().map((f) => f.code)).toEqual(['id_token_not_checked']);
  });

  it('stays bounded: past the cap per client the oldest hashes are forgotten', () => {
    const audit = new Audit(
      () => 0,
      () => true,
      10,
    );
    for (let i = 0; i < 11; i++) audit.authorize('c', request(`${GOOD_STATE}-${i}`, i));
    audit.authorize('c', request(`${GOOD_STATE}-0`, 100)); // forgotten: not a reuse any more
    expect(audit.findings()).toEqual([]);
    audit.authorize('c', request(`${GOOD_STATE}-10`, 101)); // still remembered
    expect(codes(audit.findings())).toEqual({ state_reused: 1 });
  });

  it('prints a table with one line per finding', () => {
    const audit = new Audit(
      () => Date.UTC(2026, 0, 1),
      () => true,
    );
    expect(formatAuditTable(audit.findings())).toBe('Audit: no findings.\n');
    audit.flag('c', 'client_secret_wrong');
    audit.flag('c', 'client_secret_wrong');
    const table = formatAuditTable(audit.findings());
    expect(table.split('\n')[0]).toBe('Audit: 1 finding');
    expect(table).toMatch(/c\s+client_secret_wrong\s+2\s+2026-01-01T00:00:00.000Z/);
  });
});
