/**
 * docs/sessions.md shows each after-sign-in feature in a snippet and names every option default
 * and log event the code has (its snippets are type-checked with every other page's by
 * test/readme.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { LOG_EVENTS } from '../src/log.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSION_AGE_MS } from '../src/flow/session-policy.js';
import { docSnippets, readDoc } from './helpers/doc-snippets.js';

const guide = readDoc('docs/sessions.md');
const snippets = docSnippets('ts').filter((s) => s.file === 'docs/sessions.md');

describe('docs/sessions.md', () => {
  it('shows each feature in a snippet', () => {
    const all = snippets.map((s) => s.code).join('\n');
    for (const name of [
      'requireSignIn',
      'requireRecentSignIn',
      'createSessionPolicy',
      'maxSessionAge',
      'idleTimeout',
      'signOutEverywhere',
      'createRedisSignOutStore',
      'ndIdSignInGuard',
      'ndIdFastify',
      'logoutRedirect',
      'createBackchannelLogout',
      'backchannelLogout.fetch(',
    ]) {
      expect(all, name).toContain(name);
    }
    expect(all).toContain('auth.requireSignIn(');
    expect(all).toContain('auth.requireRecentSignIn(');
  });

  it('names the defaults the code has, and every after-sign-in log event', () => {
    expect(DEFAULT_MAX_SESSION_AGE_MS).toBe(12 * 60 * 60 * 1000);
    expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(30 * 60 * 1000);
    expect(guide).toContain('12 hours (`43_200_000`)');
    expect(guide).toContain('30 minutes (`1_800_000`)');
    for (const event of [
      LOG_EVENTS.sessionEnded,
      LOG_EVENTS.signedOut,
      LOG_EVENTS.signedOutEverywhere,
      LOG_EVENTS.stepUpStarted,
      LOG_EVENTS.stepUpRefused,
      LOG_EVENTS.backchannelLogout,
      LOG_EVENTS.backchannelLogoutRefused,
    ]) {
      expect(guide).toContain(`\`${event}\``);
    }
  });
});
