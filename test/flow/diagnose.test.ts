import { describe, expect, it } from 'vitest';
import { diagnoseCallback, diagnoseClockSkew, diagnoseExpired, type CallbackEvidence } from '../../src/flow/diagnose.js';
import { LoginLedger } from '../../src/flow/login-ledger.js';

const NOW = 1_800_000_000_000;
const base: CallbackEvidence = {
  hasState: true,
  cookieHeaderPresent: true,
  sessionCookiePresent: true,
  sessionNotInStore: false,
  cookie: { sameSite: 'lax', secure: 'auto' },
  secure: true,
  host: 'app.example',
  pendingForThisClient: 0,
  pendingForOtherClients: 0,
  stateBoundElsewhere: false,
  loginTtl: 600_000,
  now: NOW,
};

describe('diagnoseCallback picks the most likely cause from the evidence', () => {
  const cases: Array<[string, Partial<CallbackEvidence>, string]> = [
    ['no state at all', { hasState: false }, 'callback_without_state'],
    ['state bound to another strategy', { stateBoundElsewhere: true }, 'pending_login_other_client'],
    ['SameSite=Strict cookie never comes back', { sessionCookiePresent: false, cookie: { sameSite: 'strict' } }, 'cookie_samesite_strict'],
    ['secure cookie on plain http', { sessionCookiePresent: false, secure: false, cookie: { secure: true } }, 'cookie_secure_over_http'],
    [
      'TLS proxy without trust proxy',
      { sessionCookiePresent: false, secure: false, forwardedProto: 'https', cookie: { secure: true } },
      'cookie_secure_behind_proxy',
    ],
    [
      'login started on another host',
      { sessionCookiePresent: false, host: '127.0.0.1:3000', ledger: { startedAt: NOW - 5000, host: 'localhost:3000', outcome: 'pending', outcomeAt: NOW - 5000 } },
      'host_mismatch',
    ],
    ['no cookie, nothing else known', { sessionCookiePresent: false, cookieHeaderPresent: false }, 'cookie_not_sent'],
    ['store lost the session', { sessionNotInStore: true }, 'session_not_in_store'],
    ['replayed callback', { ledger: { startedAt: NOW - 9000, host: 'app.example', outcome: 'completed', outcomeAt: NOW - 3000 } }, 'state_already_used'],
    ['racing callback', { ledger: { startedAt: NOW - 9000, host: 'app.example', outcome: 'in_progress', outcomeAt: NOW - 10 } }, 'state_in_progress'],
    ['evicted by newer tabs', { pendingForThisClient: 5, ledger: { startedAt: NOW - 9000, host: 'app.example', outcome: 'evicted', outcomeAt: NOW - 10 } }, 'state_evicted'],
    ['expired and dropped', { ledger: { startedAt: NOW - 700_000, host: 'app.example', outcome: 'pending', outcomeAt: NOW - 700_000 } }, 'login_expired'],
    ['an old tab', { pendingForThisClient: 2 }, 'pending_login_other_state'],
    ['only other clients pending', { pendingForOtherClients: 1 }, 'pending_login_other_client'],
    ['empty session', {}, 'no_pending_login'],
  ];
  for (const [name, evidence, code] of cases) {
    it(`${name} → ${code}`, () => {
      const d = diagnoseCallback({ ...base, ...evidence });
      expect(d.code).toBe(code);
      expect(d.cause.length).toBeGreaterThan(20);
      expect(d.fix.length).toBeGreaterThan(10);
    });
  }

  it('states the measured clock difference and suggests clockTolerance', () => {
    const d = diagnoseClockSkew(-125_000, 60);
    expect(d.code).toBe('clock_skew');
    expect(d.cause).toContain('125 s behind');
    expect(d.fix).toContain('clockTolerance (60 s)');
    expect(diagnoseClockSkew(undefined, 60).cause).toContain('no usable Date header');
  });

  it('says how long an expired login took against loginTtl', () => {
    expect(diagnoseExpired(720_000, 600_000).cause).toBe('The login took 12 min, longer than loginTtl (10 min).');
  });
});

describe('LoginLedger', () => {
  it('remembers started logins by state, records outcomes, and stays bounded', () => {
    const ledger = new LoginLedger(3);
    ledger.started('s1', 'localhost:3000', 1);
    ledger.settle('s1', 'completed', 5);
    expect(ledger.lookup('s1')).toEqual({ startedAt: 1, host: 'localhost:3000', outcome: 'completed', outcomeAt: 5 });
    ledger.settle('unknown', 'completed', 6);
    expect(ledger.lookup('unknown')).toBeUndefined();
    for (const s of ['s2', 's3', 's4']) ledger.started(s, 'h', 7);
    expect(ledger.size).toBe(3);
    expect(ledger.lookup('s1')).toBeUndefined();
    expect(ledger.lookup('s4')?.outcome).toBe('pending');
  });
});
