import { describe, expect, it } from 'vitest';
import {
  addPendingLogin,
  countPendingLogins,
  isExpired,
  takePendingLogin,
  type PendingLogin,
  type SessionLike,
} from '../../src/passport/pending-logins.js';

const KEY = 'nd-id';
const TTL = 10 * 60 * 1000;

function login(createdAt: number, extra: Partial<PendingLogin> = {}): PendingLogin {
  return { codeVerifier: `verifier-${createdAt}`, nonce: `nonce-${createdAt}`, createdAt, ...extra };
}

describe('pending logins', () => {
  it('gives back a stored login once, then never again (a replayed callback finds nothing)', () => {
    const session: SessionLike = {};
    addPendingLogin(session, KEY, 'state-a', login(1000, { returnTo: '/account' }), { max: 5, ttl: TTL, now: 1000 });
    expect(takePendingLogin(session, KEY, 'state-a')).toEqual(login(1000, { returnTo: '/account' }));
    expect(takePendingLogin(session, KEY, 'state-a')).toBeUndefined();
  });

  it('removes the session key once the last login is taken, so the session stays clean', () => {
    const session: SessionLike = { other: 1 };
    addPendingLogin(session, KEY, 's', login(1), { max: 5, ttl: TTL, now: 1 });
    takePendingLogin(session, KEY, 's');
    expect(session).toEqual({ other: 1 });
  });

  it('keeps several logins (tabs) apart by state and takes either first', () => {
    const session: SessionLike = {};
    addPendingLogin(session, KEY, 'tab-1', login(1), { max: 5, ttl: TTL, now: 1 });
    addPendingLogin(session, KEY, 'tab-2', login(2), { max: 5, ttl: TTL, now: 2 });
    expect(takePendingLogin(session, KEY, 'tab-2')?.codeVerifier).toBe('verifier-2');
    expect(takePendingLogin(session, KEY, 'tab-1')?.codeVerifier).toBe('verifier-1');
  });

  it('evicts the oldest login when more than the maximum are started', () => {
    const session: SessionLike = {};
    for (let i = 1; i <= 4; i++) {
      addPendingLogin(session, KEY, `s${i}`, login(i), { max: 3, ttl: TTL, now: i });
    }
    expect(countPendingLogins(session, KEY)).toBe(3);
    expect(takePendingLogin(session, KEY, 's1')).toBeUndefined();
    expect(takePendingLogin(session, KEY, 's2')).toBeDefined();
    expect(takePendingLogin(session, KEY, 's4')).toBeDefined();
  });

  it('drops expired logins when a new one is added, so abandoned logins do not grow the session', () => {
    const session: SessionLike = {};
    addPendingLogin(session, KEY, 'old', login(0), { max: 5, ttl: TTL, now: 0 });
    addPendingLogin(session, KEY, 'new', login(TTL + 1), { max: 5, ttl: TTL, now: TTL + 1 });
    expect(countPendingLogins(session, KEY)).toBe(1);
    expect(takePendingLogin(session, KEY, 'old')).toBeUndefined();
  });

  it('says a login is expired only once it is older than the TTL', () => {
    expect(isExpired(login(0), TTL, TTL)).toBe(false);
    expect(isExpired(login(0), TTL, TTL + 1)).toBe(true);
  });

  it.each([
    ['no state', undefined],
    ['an array of states', ['s', 's']],
    ['an empty state', ''],
    ['a prototype property name', '__proto__'],
    ['constructor', 'constructor'],
    ['a very long state', 's'.repeat(600)],
  ])('finds nothing for %s', (_name, state) => {
    const session: SessionLike = {};
    addPendingLogin(session, KEY, 's', login(1), { max: 5, ttl: TTL, now: 1 });
    expect(takePendingLogin(session, KEY, state)).toBeUndefined();
    expect(countPendingLogins(session, KEY)).toBe(1);
  });

  it('ignores malformed entries in the session instead of trusting them', () => {
    const session: SessionLike = {
      [KEY]: { bad: { codeVerifier: 1 }, good: login(5), alsoBad: 'x' },
    };
    expect(takePendingLogin(session, KEY, 'bad')).toBeUndefined();
    expect(takePendingLogin(session, KEY, 'good')).toEqual(login(5));
  });

  it('survives a JSON round trip through a session store', () => {
    let session: SessionLike = {};
    addPendingLogin(session, KEY, 's', login(1, { returnTo: '/x' }), { max: 5, ttl: TTL, now: 1 });
    session = JSON.parse(JSON.stringify(session)) as SessionLike;
    expect(takePendingLogin(session, KEY, 's')).toEqual(login(1, { returnTo: '/x' }));
  });
});
