import { describe, expect, it } from 'vitest';
import {
  diagnoseCallback,
  diagnoseClockSkew,
  diagnoseExpired,
  type CallbackEvidence,
} from '../../src/flow/diagnose.js';
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
    [
      'SameSite=Strict cookie never comes back',
      { sessionCookiePresent: false, cookie: { sameSite: 'strict' } },
      'cookie_samesite_strict',
    ],
    [
      'secure cookie on plain http',
      { sessionCookiePresent: false, secure: false, cookie: { secure: true } },
      'cookie_secure_over_http',
    ],
    [
      'TLS proxy without trust proxy',
      { sessionCookiePresent: false, secure: false, forwardedProto: 'https', cookie: { secure: true } },
      'cookie_secure_behind_proxy',
    ],
    [
      'login started on another host',
      {
        sessionCookiePresent: false,
        host: '127.0.0.1:3000',
        ledger: { startedAt: NOW - 5000, host: 'localhost:3000', outcome: 'pending', outcomeAt: NOW - 5000 },
      },
      'host_mismatch',
    ],
    ['no cookie, nothing else known', { sessionCookiePresent: false, cookieHeaderPresent: false }, 'cookie_not_sent'],
    ['store lost the session', { sessionNotInStore: true }, 'session_not_in_store'],
    [
      'replayed callback',
      { ledger: { startedAt: NOW - 9000, host: 'app.example', outcome: 'completed', outcomeAt: NOW - 3000 } },
      'state_already_used',
    ],
    [
      'racing callback',
      { ledger: { startedAt: NOW - 9000, host: 'app.example', outcome: 'in_progress', outcomeAt: NOW - 10 } },
      'state_in_progress',
    ],
    [
      'evicted by newer tabs',
      {
        pendingForThisClient: 5,
        ledger: { startedAt: NOW - 9000, host: 'app.example', outcome: 'evicted', outcomeAt: NOW - 10 },
      },
      'state_evicted',
    ],
    [
      'expired and dropped',
      { ledger: { startedAt: NOW - 700_000, host: 'app.example', outcome: 'pending', outcomeAt: NOW - 700_000 } },
      'login_expired',
    ],
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
  it('keeps no more of the Host header than a bounded, well-formed host (a 15 KB Host is not retained)', () => {
    const ledger = new LoginLedger(3);
    ledger.started('big', `${'x'.repeat(15 * 1024)}.example`, 1);
    ledger.started('odd', 'app.example!<b>', 1);
    ledger.started('ok', 'App.Example:8443', 1);
    expect(ledger.lookup('big')?.host).toBe('');
    expect(ledger.lookup('odd')?.host).toBe('');
    expect(ledger.lookup('ok')?.host).toBe('App.Example:8443');
  });

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

describe('the default log output', () => {
  it('prints a server-side cause once per minute, and with DEBUG on prints it through debug only (not twice)', async () => {
    const { createLog } = await import('../../src/log.js');
    const createDebug = (await import('debug')).default;
    const lines: string[] = [];
    let now = 0;
    const log = createLog(undefined, 'test-ns', { sink: (l) => lines.push(l), now: () => now });
    log.write('error', { event: 'login_error', code: 'provider_unreachable' }, 'down');
    log.write('error', { event: 'login_error', code: 'provider_unreachable' }, 'down');
    now += 61_000;
    log.write('error', { event: 'login_error', code: 'provider_unreachable' }, 'down');
    expect(lines).toHaveLength(2);
    const debugged: string[] = [];
    const previous = createDebug.log;
    createDebug.log = (...args: unknown[]) => void debugged.push(args.map(String).join(' '));
    createDebug.enable('passport-nd-id*');
    try {
      const verbose = createLog(undefined, 'test-ns2', { sink: (l) => lines.push(l), now: () => now });
      verbose.write('error', { event: 'login_error', code: 'jwks_invalid' }, 'bad keys');
      expect(lines).toHaveLength(2);
      expect(debugged.join('\n')).toContain('jwks_invalid');
    } finally {
      createDebug.disable();
      createDebug.log = previous;
    }
  });
});

describe('the in-memory replay store', () => {
  it('never refuses a new login when full: it forgets the oldest key', async () => {
    const { createMemoryReplayStore } = await import('../../src/flow/replay-store.js');
    const store = createMemoryReplayStore({ maxKeys: 3, clock: () => 0 });
    expect(await store.consume('oldest', 1000)).toBe(true);
    expect(await store.consume('a', 1000)).toBe(true);
    expect(await store.consume('b', 1000)).toBe(true);
    expect(await store.consume('c', 1000)).toBe(true);
    expect(await store.consume('b', 1000)).toBe(false);
    expect(await store.consume('c', 1000)).toBe(false);
    // Forgotten: its replay is left to the service's single-use code.
    expect(await store.consume('oldest', 1000)).toBe(true);
  });
});

describe("the provider's per-address quota key", () => {
  it('is the address for IPv4 and the /64 network for IPv6', async () => {
    const { quotaKeyOf } = await import('../../src/provider/user-agent.js');
    expect(quotaKeyOf('203.0.113.7')).toBe('203.0.113.7');
    expect(quotaKeyOf('2001:db8:0:1:aaaa::1')).toBe(quotaKeyOf('2001:0db8:0000:0001:ffff:1:2:3'));
    expect(quotaKeyOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(quotaKeyOf('2001:db8:0:2::1')).not.toBe(quotaKeyOf('2001:db8:0:1::1'));
    expect(quotaKeyOf('::1')).toBe('0:0:0:0::/64');
  });
});
