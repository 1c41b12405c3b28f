/**
 * The session policy and the in-memory sign-out store on their own: option mistakes named, the
 * store bounded with the oldest dropped first and entries expiring, and the policy's decisions.
 */
import { describe, expect, it } from 'vitest';
import { createSessionPolicy } from '../../src/flow/session-policy.js';
import { createMemorySignOutStore } from '../../src/flow/sign-out-store.js';
import { createRedisSignOutStore } from '../../src/flow/redis-sign-out-store.js';
import { recordSession } from '../../src/flow/session.js';

describe('createSessionPolicy', () => {
  it('names the option and its unit when an option is wrong', () => {
    expect(() => createSessionPolicy({ maxSessionAge: 12 })).toThrow(
      /maxSessionAge is in milliseconds.*12 hours is 43200000/,
    );
    expect(() => createSessionPolicy({ idleTimeout: -1 })).toThrow(/idleTimeout is in milliseconds/);
    expect(() => createSessionPolicy({ idleTimeout: 60_000, touchInterval: 60_000 })).toThrow(
      /touchInterval must be shorter than idleTimeout/,
    );
    expect(() => createSessionPolicy({ recordKey: 'passport' })).toThrow(/recordKey/);
    expect(() => createSessionPolicy({ signOutStore: {} as never })).toThrow(/signOutStore/);
    expect(() => createSessionPolicy({ clock: 5 as never })).toThrow(
      'createSessionPolicy: clock must be a function returning the time in ms since the epoch.',
    );
    expect(() => createRedisSignOutStore({} as never)).toThrow(/node-redis client/);
  });

  it('ends at the first limit that passed, touches at most once per interval, and keeps no record it cannot read', async () => {
    let now = 1_000_000;
    const policy = createSessionPolicy({
      maxSessionAge: 10 * 60_000,
      idleTimeout: 5 * 60_000,
      touchInterval: 60_000,
      clock: () => now,
    });
    const data: Record<string, unknown> = {};
    const session = recordSession(data);
    expect(await policy.check(session)).toEqual({ signedIn: false });
    policy.start(session, { sub: 'a', authTime: now - 5000 });
    now += 30_000;
    expect(await policy.check(session)).toMatchObject({ signedIn: true, touched: false });
    now += 31_000;
    expect(await policy.check(session)).toMatchObject({ signedIn: true, touched: true });
    for (let i = 0; i < 8; i++) {
      now += 4 * 60_000;
      const result = await policy.check(session);
      if (!result.signedIn) {
        expect(result.ended).toBe('max_session_age');
        break;
      }
    }
    data['nd-id.signin'] = { sub: 'a', signedInAt: 'yesterday', seenAt: now };
    expect(await policy.check(session)).toEqual({ signedIn: false });
  });

  it('judges a step-up: same person and recent enough, else why not', () => {
    const now = 5_000_000;
    const policy = createSessionPolicy({ clock: () => now });
    const prior = { sub: 'a', signedInAt: 0, authTime: 0, seenAt: 0 };
    expect(policy.stepUpOutcome(prior, { sub: 'a', authTime: now - 1000 }, 300)).toBe('ok');
    expect(policy.stepUpOutcome(prior, { sub: 'a', authTime: now - 400_000 }, 300)).toBe('not_recent');
    expect(policy.stepUpOutcome(prior, { sub: 'a' }, 300)).toBe('not_recent');
    expect(policy.stepUpOutcome(prior, { sub: 'b', authTime: now }, 300)).toBe('other_person');
    expect(policy.isRecent({ ...prior, authTime: now - 290_000 }, 300)).toBe(true);
    expect(policy.isRecent({ ...prior, authTime: now - 320_000 }, 300)).toBe(false);
  });
});

describe('createMemorySignOutStore', () => {
  it('is bounded: a full store clears its expired entries first, and refuses a new one rather than drop a live one', async () => {
    let now = 0;
    const store = createMemorySignOutStore({ maxEntries: 3, clock: () => now });
    await store.signOutBefore('a', 100, 1_000);
    for (const key of ['b', 'c']) await store.signOutBefore(key, 100, 60_000);
    await expect(store.signOutBefore('d', 100, 60_000)).rejects.toThrow(/all 3 entries are live/);
    expect(await store.signedOutBefore('a')).toBe(100);
    // A key it holds is still moved on when full.
    await store.signOutBefore('b', 200, 60_000);
    expect(await store.signedOutBefore('b')).toBe(200);
    now = 1_000; // 'a' has expired: it makes room
    await store.signOutBefore('d', 100, 60_000);
    expect(await store.signedOutBefore('d')).toBe(100);
    expect(await store.signedOutBefore('b')).toBe(200);
    await expect(store.signOutBefore('e', 100, 60_000)).rejects.toThrow(/all 3 entries are live/);
  });

  it('forgets an entry once its time to live passed, and never moves a time back', async () => {
    let now = 0;
    const store = createMemorySignOutStore({ clock: () => now });
    await store.signOutBefore('a', 500, 1000);
    await store.signOutBefore('a', 400, 1000);
    expect(await store.signedOutBefore('a')).toBe(500);
    now = 1001;
    expect(await store.signedOutBefore('a')).toBeUndefined();
  });
});
