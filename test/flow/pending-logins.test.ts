import { describe, expect, it } from 'vitest';
import {
  addPendingLogin,
  countPendingLogins,
  isExpired,
  takePendingLogin,
  type PendingLogin,
} from '../../src/flow/pending-logins.js';
import { recordSession } from '../../src/flow/session.js';

/** The session record these tests inspect; the module reads and writes it through recordSession. */
type SessionLike = Record<string, unknown>;

const KEY = 'nd-id';
const TTL = 10 * 60 * 1000;

function login(createdAt: number, extra: Partial<PendingLogin> = {}): PendingLogin {
  return { codeVerifier: `verifier-${createdAt}`, nonce: `nonce-${createdAt}`, createdAt, ...extra };
}

describe('pending logins', () => {
  it('gives back a stored login once, then never again (a replayed callback finds nothing)', () => {
    const session: SessionLike = {};
    addPendingLogin(recordSession(session), KEY, 'state-a', login(1000, { returnTo: '/account' }), {
      max: 5,
      ttl: TTL,
      now: 1000,
    });
    expect(takePendingLogin(recordSession(session), KEY, 'state-a')).toEqual(login(1000, { returnTo: '/account' }));
    expect(takePendingLogin(recordSession(session), KEY, 'state-a')).toBeUndefined();
  });

  it('removes the session key once the last login is taken, so the session stays clean', () => {
    const session: SessionLike = { other: 1 };
    addPendingLogin(recordSession(session), KEY, 's', login(1), { max: 5, ttl: TTL, now: 1 });
    takePendingLogin(recordSession(session), KEY, 's');
    expect(session).toEqual({ other: 1 });
  });

  it('keeps several logins (tabs) apart by state and takes either first', () => {
    const session: SessionLike = {};
    addPendingLogin(recordSession(session), KEY, 'tab-1', login(1), { max: 5, ttl: TTL, now: 1 });
    addPendingLogin(recordSession(session), KEY, 'tab-2', login(2), { max: 5, ttl: TTL, now: 2 });
    expect(takePendingLogin(recordSession(session), KEY, 'tab-2')?.codeVerifier).toBe('verifier-2');
    expect(takePendingLogin(recordSession(session), KEY, 'tab-1')?.codeVerifier).toBe('verifier-1');
  });

  it('evicts the oldest login when more than the maximum are started', () => {
    const session: SessionLike = {};
    for (let i = 1; i <= 4; i++) {
      addPendingLogin(recordSession(session), KEY, `s${i}`, login(i), { max: 3, ttl: TTL, now: i });
    }
    expect(countPendingLogins(recordSession(session), KEY)).toBe(3);
    expect(takePendingLogin(recordSession(session), KEY, 's1')).toBeUndefined();
    expect(takePendingLogin(recordSession(session), KEY, 's2')).toBeDefined();
    expect(takePendingLogin(recordSession(session), KEY, 's4')).toBeDefined();
  });

  it('drops expired logins when a new one is added, so abandoned logins do not grow the session', () => {
    const session: SessionLike = {};
    addPendingLogin(recordSession(session), KEY, 'old', login(0), { max: 5, ttl: TTL, now: 0 });
    addPendingLogin(recordSession(session), KEY, 'new', login(TTL + 1), { max: 5, ttl: TTL, now: TTL + 1 });
    expect(countPendingLogins(recordSession(session), KEY)).toBe(1);
    expect(takePendingLogin(recordSession(session), KEY, 'old')).toBeUndefined();
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
    addPendingLogin(recordSession(session), KEY, 's', login(1), { max: 5, ttl: TTL, now: 1 });
    expect(takePendingLogin(recordSession(session), KEY, state)).toBeUndefined();
    expect(countPendingLogins(recordSession(session), KEY)).toBe(1);
  });

  it('ignores malformed entries in the session instead of trusting them', () => {
    const session: SessionLike = {
      [KEY]: { bad: { codeVerifier: 1 }, good: login(5), alsoBad: 'x' },
    };
    expect(takePendingLogin(recordSession(session), KEY, 'bad')).toBeUndefined();
    expect(takePendingLogin(recordSession(session), KEY, 'good')).toEqual(login(5));
  });

  it('survives a JSON round trip through a session store', () => {
    let session: SessionLike = {};
    addPendingLogin(recordSession(session), KEY, 's', login(1, { returnTo: '/x' }), { max: 5, ttl: TTL, now: 1 });
    session = JSON.parse(JSON.stringify(session)) as SessionLike;
    expect(takePendingLogin(recordSession(session), KEY, 's')).toEqual(login(1, { returnTo: '/x' }));
  });
});
