import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExpiringStore } from '../../src/provider/store.js';
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
    store.set('w', 4, clock.now() + 60_000);
    expect(store.size).toBe(3);
    expect(store.get('x')).toBeUndefined();
    expect(store.get('w')).toBe(4);
  });
});

describe('pending QR logins are bounded', () => {
  let started: StartedProvider;
  beforeAll(async () => {
    started = await startTestProvider({ maxPending: 2 });
  });
  afterAll(() => started.close());

  it('the oldest QR page expires when more than maxPending are open, and its phone link says so', async () => {
    const { challenge } = pkce();
    const payloads: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const html = await (await fetch(`${started.baseUrl}/v2/oauth/authorize?${authorizeQuery(challenge)}`)).text();
      payloads.push(/data-qr-payload="([^"]+)"/.exec(html)?.[1] ?? '');
    }
    expect((await fetch(payloads[0]!)).status).toBe(410);
    expect((await fetch(payloads[1]!)).status).toBe(200);
    expect((await fetch(payloads[2]!)).status).toBe(200);
  });
});
