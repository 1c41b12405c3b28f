/**
 * Every ```ts snippet of docs/sessions.md is type-checked against the built package, exactly as
 * a user would import it (`passport-nd-id`), and the guide names every option default and log
 * event the code has.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LOG_EVENTS } from '../src/log.js';
import { DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_SESSION_AGE_MS } from '../src/flow/session-policy.js';
import { extractSnippets, typeCheckSnippets, writeSnippets } from './helpers/snippets.js';

const root = join(__dirname, '..');
const guide = readFileSync(join(root, 'docs', 'sessions.md'), 'utf8');
const workDir = join(root, '.tmp', `docs-sessions-${process.pid}`);

const snippets = extractSnippets(guide);

beforeAll(() => {
  const problem = inject('buildProblem');
  if (problem) throw new Error(problem);
  writeSnippets(workDir, 'sessions', snippets, ['ES2023', 'DOM']);
});

afterAll(() => {
  rmSync(workDir, { recursive: true, force: true });
});

describe('docs/sessions.md', () => {
  it('shows each feature in a snippet', () => {
    const all = snippets.map((s) => s.code).join('\n');
    for (const name of ['requireSignIn', 'requireRecentSignIn', 'createSessionPolicy', 'maxSessionAge', 'idleTimeout', 'signOutEverywhere', 'createRedisSignOutStore', 'ndIdSignInGuard', 'logoutRedirect']) {
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
    for (const event of [LOG_EVENTS.sessionEnded, LOG_EVENTS.signedOut, LOG_EVENTS.signedOutEverywhere, LOG_EVENTS.stepUpStarted, LOG_EVENTS.stepUpRefused]) {
      expect(guide).toContain(`\`${event}\``);
    }
  });

  it('every TypeScript snippet type-checks against the published package', async () => {
    const result = await typeCheckSnippets(root, workDir);
    expect(result.replace(/sessions-line-(\d+)\.mts/g, 'docs/sessions.md snippet at line $1')).toBe('');
  }, 120_000);
});
