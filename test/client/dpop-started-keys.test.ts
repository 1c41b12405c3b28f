/**
 * A login's DPoP key object, kept by the instance that started the login so that its callback
 * need not import the key again, lives no longer than the login: once the default login lifetime
 * has passed, the callback imports the key from the session (as another instance would), and the
 * next login start drops every such expired copy.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dropStartedKeys, generateDpopKey, restoreDpopKey, STARTED_KEY_LIFETIME_MS } from '../../src/client/dpop.js';

afterEach(() => {
  vi.useRealTimers();
});

describe("a login's DPoP key copy on the instance that started it", () => {
  it('is handed back to a callback within the login lifetime (no second import)', () => {
    const { key, stored } = generateDpopKey();
    expect(restoreDpopKey(stored)).toBe(key);
  });

  it('is not used after the login lifetime: the callback imports the key from the session', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { key, stored } = generateDpopKey();
    vi.setSystemTime(Date.now() + STARTED_KEY_LIFETIME_MS + 1000);
    const restored = restoreDpopKey(stored);
    expect(restored).not.toBe(key);
    expect(restored.jkt).toBe(key.jkt);
  });

  it('is dropped at the next login start once the lifetime has passed (logins finished elsewhere leave nothing)', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    dropStartedKeys(Date.now() + 2 * STARTED_KEY_LIFETIME_MS);
    // 50 logins started here whose callbacks go to another instance.
    for (let i = 0; i < 50; i += 1) generateDpopKey();
    expect(dropStartedKeys()).toBe(50);
    vi.setSystemTime(Date.now() + STARTED_KEY_LIFETIME_MS + 1000);
    generateDpopKey();
    expect(dropStartedKeys()).toBe(1);
  });
});
