/**
 * What a person signing in through ndIdRouter sees when the provider misbehaves: a small page
 * with a sensible status and a "Try again" link (never a stack, a secret, a token or personal
 * data), in bounded time, nobody signed in, and a normal sign-in once the fault has passed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Fault, FaultOptions } from '../../src/provider/index.js';
import {
  approve,
  currentUser,
  expectSafePage,
  followCallback,
  PERSONA,
  startLogin,
  startRp,
  type Rp,
} from '../passport/harness.js';
import { guardProcess, settle } from './support.js';

guardProcess();

/** The RP's client timeout in these tests, in ms: long enough for the discovery read at the login on a loaded machine. */
const TIMEOUT = 1000;
/** Generous bound for one callback: proves "no hang", not speed. */
const BOUND = 5 * 3000;

let rp: Rp | undefined;
afterEach(async () => {
  await rp?.close();
  rp = undefined;
});

/** A browser that started a login and was sent back with a code; the fault is injected just before the callback. */
async function callbackUnder(fault: Fault, options: FaultOptions = {}, warmUp = false) {
  // The short timeout only where the fault is latency; elsewhere a loaded machine must not turn a lie into a timeout.
  rp = await startRp({ timeout: fault.kind === 'latency' ? TIMEOUT : 5000 });
  if (warmUp) {
    const earlier = rp.browser();
    expect((await followCallback(earlier, await approve(await startLogin(earlier)))).status).toBe(302);
  }
  const browser = rp.browser();
  const callback = await approve(await startLogin(browser));
  rp.provider.provider.faults.inject(fault, options);
  const settled = await settle(Promise.resolve(followCallback(browser, callback)), BOUND);
  if (settled.error !== undefined) throw settled.error;
  return { res: settled.value!, ms: settled.ms, browser };
}

/** The page shows no token or code. */
function expectNoTokens(text: string): void {
  expect(text).not.toMatch(/eyJ[\w-]+\./);
  expect(text).not.toMatch(/code=/);
}

describe('the service is down or slow: the person sees "Sign-in is unavailable" and can try again', () => {
  it('a token endpoint slower than the timeout shows a 504 page soon after the timeout', async () => {
    const { res, ms, browser } = await callbackUnder({ kind: 'latency', ms: 10_000 }, { endpoint: 'token' });
    expectSafePage(res, 504);
    expect(res.text).toContain('Sign-in is unavailable');
    expect(res.text).toContain('Try again');
    // Far below the 10 s latency: the timeout cut it short.
    expect(ms).toBeLessThan(TIMEOUT + 4000);
    expect(await currentUser(browser)).toBeNull();
  });

  it.each([
    ['a 500 from the token endpoint', { kind: 'status', status: 500 }, 'token'],
    ['a 503 from the token endpoint', { kind: 'status', status: 503 }, 'token'],
    ['a 503 from userinfo', { kind: 'status', status: 503 }, 'userinfo'],
    ['a 500 from the JWKS endpoint', { kind: 'status', status: 500 }, 'jwks'],
    ['a connection reset on the token endpoint', { kind: 'reset' }, 'token'],
    ['a token answer cut short', { kind: 'truncated' }, 'token'],
    ['an HTML proxy page instead of userinfo', { kind: 'non_json' }, 'userinfo'],
    ['a JWKS cut short', { kind: 'truncated' }, 'jwks'],
  ] as const)('%s shows a 502 page saying the service cannot be reached', async (_name, fault, endpoint) => {
    const { res, browser } = await callbackUnder(fault as Fault, { endpoint, times: 2 });
    expectSafePage(res, 502);
    expect(res.text).toMatch(/cannot be reached/);
    expect(res.text).toContain('Try again');
    expectNoTokens(res.text);
    expect(await currentUser(browser)).toBeNull();
  });
});

describe('the service lies: the person sees "Sign-in failed" (401) and nobody is signed in', () => {
  it.each([
    ['an ID token with a wrong signature', 'bad_signature', false],
    ['an ID token signed with a key never published', 'unknown_key', true],
    ['an expired ID token', 'expired_id_token', false],
    ['an ID token issued to another client', 'wrong_audience', false],
    ["userinfo about someone else's sub", 'sub_mismatch', false],
  ] as const)('%s', async (_name, kind, warmUp) => {
    const { res, browser } = await callbackUnder({ kind }, {}, warmUp);
    expectSafePage(res, 401);
    expect(res.text).toContain('Sign-in failed');
    expect(res.text).toContain('Try again');
    expectNoTokens(res.text);
    expect(await currentUser(browser)).toBeNull();
  });
});

describe('recoverable faults', () => {
  it('a key rotation between two sign-ins is invisible: the second person is signed in', async () => {
    const { res, browser } = await callbackUnder({ kind: 'rotated_key' }, {}, true);
    expect(res.status).toBe(302);
    expect(await currentUser(browser)).toMatchObject({ sub: expect.any(String) });
  });

  it('after a one-time 500, trying again signs the person in', async () => {
    const { res, browser } = await callbackUnder({ kind: 'status', status: 500 }, { endpoint: 'token' });
    expectSafePage(res, 502);
    const again = await followCallback(browser, await approve(await startLogin(browser)));
    expect(again.status).toBe(302);
    expect(await currentUser(browser)).toMatchObject({ data: { 'profile.name': PERSONA['profile.name'] } });
  });
});

describe('faults on the browser-facing authorize endpoint', () => {
  it("a 503 on authorize shows the provider's own HTML error page, without a stack", async () => {
    rp = await startRp();
    const authorize = await startLogin(rp.browser());
    rp.provider.provider.faults.inject({ kind: 'status', status: 503 }, { endpoint: 'authorize' });
    const res = await fetch(authorize, { redirect: 'manual' });
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('retry-after')).toBe('30');
    const text = await res.text();
    expect(text).toContain('temporarily_unavailable');
    expect(text).not.toMatch(/\bat .+:\d+:\d+/);
  });
});
