import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpiringStore } from '../../src/provider/store.js';
import { PendingQuota } from '../../src/provider/pending-quota.js';
import type { StartedProvider } from '../../src/provider/index.js';
import { authorizeQuery, manualClock, pkce, startTestProvider } from '../helpers/provider-fixtures.js';

describe('bounded stores', () => {
  it('never return an expired entry', () => {
    const clock = manualClock();
    const store = new ExpiringStore<string>(clock.now, 10);
    store.set('a', 'A', clock.now() + 5_000);
    expect(store.get('a')).toBe('A');
    clock.advance(5);
    expect(store.get('a')).toBeUndefined();
  });

  it('drop expired entries first, then the oldest, and never grow past their bound', () => {
    const clock = manualClock();
    const store = new ExpiringStore<number>(clock.now, 3);
    store.set('short', 0, clock.now() + 1_000);
    store.set('x', 1, clock.now() + 60_000);
    store.set('y', 2, clock.now() + 60_000);
    clock.advance(2);
    store.set('z', 3, clock.now() + 60_000);
    expect([store.get('x'), store.get('y'), store.get('z')]).toEqual([1, 2, 3]);
    expect(store.isFull()).toBe(true);
    store.set('w', 4, clock.now() + 60_000);
    expect(store.size).toBe(3);
    expect(store.get('x')).toBeUndefined();
    expect(store.get('w')).toBe(4);
  });

  it('drop the expired entries at the front as they are next written, also once the entry the last sweep stopped at is gone', () => {
    const clock = manualClock();
    const store = new ExpiringStore<string>(clock.now, 10);
    store.set('long', 'L', clock.now() + 10_000);
    store.set('short', 'S', clock.now() + 1_000);
    store.set('next', 'N', clock.now() + 60_000); // its sweep stops at 'long', the front
    store.delete('long'); // 'short' is the front now, and expires first
    clock.advance(2);
    store.set('later', 'A', clock.now() + 60_000);
    expect(store.size).toBe(2);
    clock.advance(60);
    store.set('last', 'Z', clock.now() + 60_000);
    expect(store.size).toBe(1);
  });

  it('a store full of live entries frees a place as soon as any of them expires, also one written later with an earlier expiry', () => {
    const clock = manualClock();
    const store = new ExpiringStore<number>(clock.now, 3);
    const start = clock.now();
    store.set('a', 1, start + 60_000);
    store.set('b', 2, start + 60_000);
    store.set('c', 3, start + 60_000);
    expect(store.isFull()).toBe(true); // walked: nothing expires before start + 60 s
    store.delete('b');
    store.set('d', 4, start + 5_000); // the clock stepped back for this writer: it expires first
    expect(store.isFull()).toBe(true);
    clock.advance(6);
    expect(store.isFull()).toBe(false);
    expect([store.get('a'), store.get('c'), store.get('d')]).toEqual([1, 3, undefined]);
    clock.advance(60);
    expect(store.isFull()).toBe(false);
    expect(store.size).toBe(0);
  });

  it('a per-address quota counts live entries only and frees them at expiry or release', () => {
    const clock = manualClock();
    const quota = new PendingQuota(clock.now, 2, 100);
    const t = clock.now() + 10_000;
    expect(quota.tryAdd('203.0.113.7', t)).toBe(true);
    expect(quota.tryAdd('203.0.113.7', t + 1)).toBe(true);
    expect(quota.tryAdd('203.0.113.7', t + 2)).toBe(false);
    expect(quota.tryAdd('198.51.100.1', t)).toBe(true);
    quota.release('203.0.113.7', t);
    expect(quota.count('203.0.113.7')).toBe(1);
    clock.advance(11);
    expect(quota.count('203.0.113.7')).toBe(0);
    expect(quota.tryAdd('203.0.113.7', clock.now() + 10_000)).toBe(true);
  });

  it('drops only the expired entries of an address that holds many, oldest first', () => {
    const clock = manualClock();
    const quota = new PendingQuota(clock.now, 10_000, 100);
    const start = clock.now();
    for (let i = 1; i <= 5_000; i++) expect(quota.tryAdd('192.0.2.9', start + i)).toBe(true);
    clock.advance(1); // entries expiring at start+1 … start+1000 are now over
    expect(quota.count('192.0.2.9')).toBe(4_000);
    quota.release('192.0.2.9', start + 4_000);
    expect(quota.count('192.0.2.9')).toBe(3_999);
    clock.advance(4);
    expect(quota.count('192.0.2.9')).toBe(0);
  });

  it('keeps entries in expiry order when the clock steps back, so an expired one never hides behind a live one', () => {
    const clock = manualClock();
    const quota = new PendingQuota(clock.now, 3, 100);
    const start = clock.now();
    expect(quota.tryAdd('192.0.2.10', start + 5_000)).toBe(true);
    expect(quota.tryAdd('192.0.2.10', start + 1_000)).toBe(true); // added after a step back
    expect(quota.tryAdd('192.0.2.10', start + 9_000)).toBe(true);
    clock.advance(2); // start+1000 is over: one place is free again
    expect(quota.count('192.0.2.10')).toBe(2);
    expect(quota.tryAdd('192.0.2.10', clock.now() + 10_000)).toBe(true);
    expect(quota.tryAdd('192.0.2.10', clock.now() + 10_000)).toBe(false);
  });
});

async function openQr(started: StartedProvider): Promise<{ status: number; payload: string; html: string }> {
  const { challenge } = pkce();
  const res = await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`);
  const html = await res.text();
  return { status: res.status, payload: /data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '', html };
}

describe('pending QR logins are bounded without evicting anyone', () => {
  const clock = manualClock();
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider({ maxPending: 2, clock: clock.now });
  });
  afterAll(() => started.close());

  it('when the store is full a newcomer gets a 429 page, and the live QR pages keep working', async () => {
    const first = await openQr(started);
    const second = await openQr(started);
    const third = await openQr(started);
    expect(third.status).toBe(429);
    expect(third.html).toContain('data-error-code="too_many_requests"');
    expect(third.payload).toBe('');
    expect((await fetch(first.payload)).status).toBe(200);
    expect((await fetch(second.payload)).status).toBe(200);
    clock.advance(121);
    expect((await openQr(started)).status).toBe(200);
  });
});

describe('pending QR logins per source address', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider({ maxPending: 100, maxPendingPerAddress: 3 });
  });
  afterAll(() => started.close());

  it('an address past its quota gets 429 with Retry-After, and its own earlier pages stay live', async () => {
    const pages = [await openQr(started), await openQr(started), await openQr(started)];
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200]);
    const { challenge } = pkce();
    const refused = await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('120');
    for (const p of pages) expect((await fetch(p.payload)).status).toBe(200);
  });

  it('Cancel on a QR page gives its place back and returns to the client with access_denied', async () => {
    const one = await startTestProvider({ maxPendingPerAddress: 1 });
    try {
      const page = await openQr(one);
      expect((await openQr(one)).status).toBe(429);
      const cancel = /id="cancel" href="([^"]+)"/.exec(page.html)?.[1] ?? '';
      const res = await fetch(new URL(cancel, one.baseUrl), { redirect: 'manual' });
      expect(res.status).toBe(303);
      const back = new URL(res.headers.get('location') ?? '');
      expect(Object.fromEntries(back.searchParams)).toEqual({
        error: 'access_denied',
        state: 'state-123',
        iss: one.provider.issuer,
      });
      expect((await fetch(page.payload)).status).toBe(410);
      expect((await openQr(one)).status).toBe(200);
    } finally {
      await one.close();
    }
  });
});

/** The number the QR page shows, which the phone must pick to approve. */
function matchCodeOf(html: string): string {
  return /data-match-code="(\d\d)"/.exec(html)?.[1] ?? '';
}

/** Answer a QR page on the phone: approve (with the right number), deny, or pick a wrong number. */
async function answerOnPhone(payload: string, html: string, how: 'approve' | 'deny' | 'mismatch'): Promise<number> {
  const right = matchCodeOf(html);
  const fields: Record<string, string> =
    how === 'deny'
      ? { decision: 'deny' }
      : { decision: 'approve', persona: 'ada', match: how === 'approve' ? right : right === '10' ? '11' : '10' };
  const res = await fetch(payload, { method: 'POST', body: new URLSearchParams(fields) });
  await res.arrayBuffer();
  return res.status;
}

/** The QR page's view of its login once answered. */
async function pollOutcome(started: StartedProvider, html: string): Promise<{ status: string; redirectTo?: string }> {
  const statusUrl = /"statusUrl":"([^"]+)"/.exec(html)?.[1] ?? '';
  return (await (await fetch(new URL(statusUrl, started.baseUrl))).json()) as { status: string; redirectTo?: string };
}

describe('an answered QR login gives its places back at once', () => {
  it('25 sign-ins one after another from one address all reach the QR page and their answer (default quota of 20)', async () => {
    const started = await startTestProvider();
    try {
      const ways = ['approve', 'deny', 'mismatch'] as const;
      for (let i = 0; i < 25; i++) {
        const page = await openQr(started);
        expect(page.status, `sign-in ${i + 1}`).toBe(200);
        const how = ways[i % 3]!;
        expect(await answerOnPhone(page.payload, page.html, how)).toBe(how === 'mismatch' ? 403 : 200);
        const outcome = await pollOutcome(started, page.html);
        expect(outcome.status).toBe(how === 'approve' ? 'approved' : how === 'deny' ? 'denied' : 'mismatch');
        if (how === 'approve') expect(new URL(outcome.redirectTo ?? '').searchParams.get('code')).toBeTruthy();
      }
    } finally {
      await started.close();
    }
  });

  it('the provider-wide bound counts waiting logins only; an answered page still shows its outcome and refuses a second answer', async () => {
    const lines: string[] = [];
    const started = await startTestProvider({ maxPending: 2, maxPendingPerAddress: 2, log: (l) => lines.push(l) });
    try {
      const first = await openQr(started);
      const second = await openQr(started);
      expect((await openQr(started)).status).toBe(429);
      expect(await answerOnPhone(first.payload, first.html, 'approve')).toBe(200);
      expect(await answerOnPhone(second.payload, second.html, 'deny')).toBe(200);
      const third = await openQr(started);
      const fourth = await openQr(started);
      expect([third.status, fourth.status]).toEqual([200, 200]);
      expect((await openQr(started)).status).toBe(429);
      expect((await pollOutcome(started, first.html)).status).toBe('approved');
      expect((await pollOutcome(started, second.html)).status).toBe('denied');
      expect(await answerOnPhone(first.payload, first.html, 'approve')).toBe(409);
      // Each refusal's log line names the client.
      expect(lines).toContain('authorize: refused: too many pending sign-ins for client test-client');
      expect(lines).toContain('mobile: answer refused for client test-client: already answered');
    } finally {
      await started.close();
    }
  });
});
