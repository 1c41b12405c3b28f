import { describe, expect, it } from 'vitest';
import { UsedJtis } from '../../../src/provider/fapi/used-jtis.js';
import { manualClock } from '../../helpers/provider-fixtures.js';

describe('the store of used jti values', () => {
  it('remembers a jti until its expiry, never less, then forgets it and gives the place back', () => {
    const clock = manualClock(1_700_000_000_250);
    const jtis = new UsedJtis(clock.now, 10, 10);
    expect(jtis.tryAdd('a', 'c1', clock.now() + 1_500)).toBe('added');
    clock.advance(1.499);
    expect(jtis.has('a')).toBe(true);
    expect(jtis.heldBy('c1')).toBe(1);
    clock.advance(1.001); // past the expiry and into the next whole second
    expect(jtis.has('a')).toBe(false);
    expect(jtis.heldBy('c1')).toBe(0);
    expect(jtis.size).toBe(0);
  });

  it('a long-lived jti does not keep the shorter-lived ones sent after it counted', () => {
    const clock = manualClock();
    const jtis = new UsedJtis(clock.now, 100, 2);
    expect(jtis.tryAdd('assertion', 'c1', clock.now() + 360_000)).toBe('added');
    expect(jtis.tryAdd('proof-1', 'c1', clock.now() + 120_000)).toBe('added');
    expect(jtis.tryAdd('proof-2', 'c1', clock.now() + 120_000)).toBe('share_used_up');
    expect(jtis.tryAdd('other', 'c2', clock.now() + 120_000)).toBe('added'); // another client's share is its own
    clock.advance(121);
    expect(jtis.tryAdd('proof-2', 'c1', clock.now() + 120_000)).toBe('added');
    expect(jtis.has('assertion')).toBe(true);
    expect(jtis.has('proof-1')).toBe(false);
  });

  it('refuses a new jti when full of live ones instead of forgetting one, and a refusal takes no place', () => {
    const clock = manualClock();
    const jtis = new UsedJtis(clock.now, 2, 5);
    expect(jtis.tryAdd('a', 'c1', clock.now() + 60_000)).toBe('added');
    expect(jtis.tryAdd('b', 'c2', clock.now() + 90_000)).toBe('added');
    for (let i = 0; i < 3; i += 1) expect(jtis.tryAdd(`x${i}`, 'c1', clock.now() + 60_000)).toBe('full');
    expect([jtis.has('a'), jtis.has('b'), jtis.heldBy('c1')]).toEqual([true, true, 1]);
    clock.advance(61);
    expect(jtis.tryAdd('c', 'c1', clock.now() + 60_000)).toBe('added');
    expect(jtis.has('b')).toBe(true);
  });

  it('keeps a jti written after the clock stepped back until its own expiry, and survives a long jump', () => {
    const clock = manualClock();
    const jtis = new UsedJtis(clock.now, 10, 10);
    expect(jtis.tryAdd('a', 'c1', clock.now() + 10_000)).toBe('added');
    clock.advance(5);
    expect(jtis.has('a')).toBe(true); // swept up to now
    clock.advance(-4); // stepped back: an expiry in a second already swept is filed later, never dropped early
    expect(jtis.tryAdd('b', 'c1', clock.now() + 2_000)).toBe('added');
    clock.advance(2.5);
    expect(jtis.has('b')).toBe(true);
    clock.advance(3.5); // back past the seconds swept before the step: b is forgotten, a is not
    expect([jtis.has('a'), jtis.has('b'), jtis.heldBy('c1')]).toEqual([true, false, 1]);
    clock.advance(7 * 24 * 3600); // a week: every filed second is walked once, not every second passed
    expect([jtis.has('a'), jtis.has('b'), jtis.size]).toEqual([false, false, 0]);
    jtis.tryAdd('c', 'c1', clock.now() + 1_000);
    jtis.clear();
    expect([jtis.has('c'), jtis.heldBy('c1')]).toEqual([false, 0]);
  });
});
