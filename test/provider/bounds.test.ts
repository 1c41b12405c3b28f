/**
 * Every provider map that request traffic can grow has a bound, and a flood from one address
 * never locks out a real person (from another address). Also: number matching offers twelve
 * numbers and a wrong pick ends the login; the control token guards the test controls.
 * All over real HTTP on loopback; the real person connects from 127.0.0.2.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { MATCH_CHOICES, matchNumbers } from '../../src/provider/authorize.js';
import { startProvider, type StartedProvider, type StartProviderOptions } from '../helpers/provider.js';
import { authorizeQuery, pkce, providerOptions, TEST_CLIENT, tokenBody } from '../helpers/provider-fixtures.js';

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request from `from` (a local loopback address). */
function call(
  url: string,
  options: { method?: string; body?: string; headers?: Record<string, string>; from?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        localAddress: options.from ?? '127.0.0.1',
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(options.body);
  });
}

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  body: new URLSearchParams(fields).toString(),
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
});

let started: StartedProvider | undefined;
afterEach(async () => {
  await started?.close();
  started = undefined;
});

async function start(extra: Partial<StartProviderOptions>): Promise<string> {
  started = await startProvider(providerOptions(extra));
  return started.baseUrl;
}

/** The QR page of a fresh authorization, from `from`. */
async function qrPage(base: string, from: string, challenge: string): Promise<Reply> {
  return call(`${base}/v2/oauth/authorize?${authorizeQuery(challenge)}`, { from });
}

/** A whole interactive sign-in from `from`: QR page, phone approval, status, token, userinfo. */
async function interactiveSignIn(base: string, from: string): Promise<number> {
  const { verifier, challenge } = pkce();
  const page = await qrPage(base, from, challenge);
  expect(page.status).toBe(200);
  const mobile = /data-qr-payload="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const match = /data-match-code="(\d\d)"/.exec(page.body)?.[1] ?? '';
  const statusPath = /"statusUrl":"([^"]+)"/.exec(page.body)?.[1] ?? '';
  const approved = await call(mobile, { ...form({ decision: 'approve', match, persona: 'ada' }), from });
  expect(approved.status).toBe(200);
  const { redirectTo } = JSON.parse((await call(`${base}${statusPath}`, { from })).body) as { redirectTo: string };
  return redeem(base, new URL(redirectTo).searchParams.get('code') ?? '', verifier, from);
}

/** Token then userinfo; the userinfo status. */
async function redeem(base: string, code: string, verifier: string, from: string): Promise<number> {
  const token = await call(`${base}/v2/oauth/token`, {
    ...form(tokenBody(code, verifier) as Record<string, string>),
    from,
  });
  expect(token.status).toBe(200);
  const { access_token } = JSON.parse(token.body) as { access_token: string };
  return (await call(`${base}/v2/oauth/userinfo`, { headers: { authorization: `Bearer ${access_token}` }, from }))
    .status;
}

/** An auto-approved sign-in from `from`. */
async function autoSignIn(base: string, from: string): Promise<number> {
  const { verifier, challenge } = pkce();
  const res = await qrPage(base, from, challenge);
  expect(res.status).toBe(302);
  return redeem(base, new URL(String(res.headers['location'])).searchParams.get('code') ?? '', verifier, from);
}

describe('number matching', () => {
  it(`offers ${MATCH_CHOICES} different two-digit numbers, one of them the QR page's; a wrong pick ends the login for good`, async () => {
    const base = await start({});
    const { challenge } = pkce();
    const page = await qrPage(base, '127.0.0.1', challenge);
    const mobile = /data-qr-payload="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const match = /data-match-code="(\d\d)"/.exec(page.body)?.[1] ?? '';
    const statusPath = /"statusUrl":"([^"]+)"/.exec(page.body)?.[1] ?? '';
    const phone = await call(mobile);
    const choices = [...phone.body.matchAll(/name="match" value="(\d\d)"/g)].map((m) => m[1]);
    expect(MATCH_CHOICES).toBeGreaterThanOrEqual(10);
    expect(choices).toHaveLength(MATCH_CHOICES);
    expect(new Set(choices).size).toBe(MATCH_CHOICES);
    expect(choices).toContain(match);

    const wrong = await call(
      mobile,
      form({ decision: 'approve', match: choices.find((c) => c !== match)!, persona: 'ada' }),
    );
    expect(wrong.status).toBe(403);
    expect(wrong.body).toContain('data-error-code="number_mismatch"');
    expect(JSON.parse((await call(`${base}${statusPath}`)).body)).toEqual({ status: 'mismatch' });
    const right = await call(mobile, form({ decision: 'approve', match, persona: 'ada' }));
    expect(right.status).toBe(409);
    expect(right.body).toContain('data-error-code="already_answered"');
  });

  it('draws distinct numbers from 10 to 99, one of them the code, even from bytes that are all unusable', () => {
    for (const bytes of [Buffer.alloc(64, 255), Buffer.from(Array.from({ length: 64 }, (_, i) => i))]) {
      const { choices, code } = matchNumbers(bytes);
      expect(new Set(choices).size).toBe(MATCH_CHOICES);
      expect(choices.every((c) => /^\d\d$/.test(c) && Number(c) >= 10)).toBe(true);
      expect(choices).toContain(code);
    }
  });
});

describe('control token', () => {
  const token = 'control-token-0123456789abcdef';
  const paths = ['/_provider/audit', '/_provider/conformance', '/_provider/faults'];

  it('with controlToken, the audit, conformance and fault controls answer 401 without it or with another, 200 with it', async () => {
    const base = await start({ auditEndpoint: true, conformance: true, faultControl: true, controlToken: token });
    for (const path of paths) {
      const none = await call(`${base}${path}`);
      expect([path, none.status, JSON.parse(none.body).error]).toEqual([path, 401, 'invalid_token']);
      expect(none.headers['www-authenticate']).toMatch(/^Bearer /);
      const other = await call(`${base}${path}`, { headers: { authorization: `Bearer ${token}x` } });
      expect([path, other.status]).toEqual([path, 401]);
      const ok = await call(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      expect([path, ok.status]).toEqual([path, 200]);
    }
    const plant = await call(`${base}/_provider/faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'status', status: 503 }),
      headers: { 'content-type': 'application/json' },
    });
    expect(plant.status).toBe(401);
    expect(started!.provider.faults.active()).toEqual([]);
    // Ending the run is a control too: without the token the plan keeps running.
    const finishUrl = `${base}/_provider/conformance/finish`;
    const refused = await call(finishUrl, { method: 'POST' });
    expect([refused.status, JSON.parse(refused.body).error]).toEqual([401, 'invalid_token']);
    expect(started!.provider.conformance.results().running).toBe(true);
    const finished = await call(finishUrl, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect([finished.status, JSON.parse(finished.body).exitCode]).toEqual([200, 0]);
    expect(started!.provider.conformance.results().running).toBe(false);
    // The sign-in endpoints need no token.
    expect(await interactiveSignIn(base, '127.0.0.1')).toBe(200);
  });

  it('without controlToken, the controls that are on answer anyone (the documented default)', async () => {
    const base = await start({ auditEndpoint: true, conformance: true, faultControl: true });
    for (const path of paths) expect([path, (await call(`${base}${path}`)).status]).toEqual([path, 200]);
  });

  it('refuses a control token shorter than 16 characters at start-up', async () => {
    await expect(
      startProvider(providerOptions({ controlToken: 'short', baseUrl: 'http://127.0.0.1:1' })),
    ).rejects.toThrow(/controlToken must be a string of 16 to 512/);
  });
});

describe('bounded maps: a flood from one address never locks out a person at another', () => {
  it('pending authorizations: the flooding address meets its quota (429), a person elsewhere signs in', async () => {
    const base = await start({ maxPendingPerAddress: 5, maxPending: 50 });
    const { challenge } = pkce();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await qrPage(base, '127.0.0.1', challenge)).status);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true);
    expect(await interactiveSignIn(base, '127.0.0.2')).toBe(200);
  });

  it('authorization codes: past maxCodes the oldest go first; a person signing in now is served', async () => {
    const base = await start({ autoApprove: true, maxCodes: 20 });
    const { challenge } = pkce();
    for (let i = 0; i < 60; i++) expect((await qrPage(base, '127.0.0.1', challenge)).status).toBe(302);
    expect(await autoSignIn(base, '127.0.0.2')).toBe(200);
  });

  it('access tokens: past maxAccessTokens the oldest go first; a person signing in now is served', async () => {
    const base = await start({ autoApprove: true, maxAccessTokens: 10 });
    for (let i = 0; i < 30; i++) await autoSignIn(base, '127.0.0.1');
    expect(await autoSignIn(base, '127.0.0.2')).toBe(200);
  });

  it("audit: careless requests in a client's name are counted, not stored, and a person still signs in", async () => {
    const base = await start({ auditEndpoint: true });
    const { challenge } = pkce();
    for (let i = 0; i < 200; i++) {
      await call(`${base}/v2/oauth/authorize?${authorizeQuery(challenge, { state: null, nonce: null })}`);
    }
    const findings = started!.provider.audit(TEST_CLIENT.clientId);
    const stateMissing = findings.find((f) => f.code === 'state_missing');
    expect(stateMissing?.count).toBeGreaterThanOrEqual(1);
    expect(findings.length).toBeLessThan(20);
    expect(await interactiveSignIn(base, '127.0.0.2')).toBe(200);
  });
});
