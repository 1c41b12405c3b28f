import { describe, expect, it } from 'vitest';
import { pooledRandomBytes, pooledRandomToken, RANDOM_POOL_SIZE } from '../../src/provider/random-pool.js';

describe('pooled randomness', () => {
  it('never hands out the same bytes twice, across several blocks', () => {
    const seen = new Set<string>();
    const draws = (3 * RANDOM_POOL_SIZE) / 16;
    for (let i = 0; i < draws; i++) seen.add(pooledRandomBytes(16).toString('hex'));
    expect(seen.size).toBe(draws);
  });

  it('leaves bytes already handed out unchanged when a new block is drawn', () => {
    const kept = pooledRandomBytes(32);
    const copy = Buffer.from(kept);
    for (let i = 0; i < (2 * RANDOM_POOL_SIZE) / 64; i++) pooledRandomBytes(64);
    expect(kept.equals(copy)).toBe(true);
  });

  it('gives exactly the size asked for, also beyond a quarter block, and tokens in base64url', () => {
    expect(pooledRandomBytes(144)).toHaveLength(144);
    expect(pooledRandomBytes(RANDOM_POOL_SIZE + 1)).toHaveLength(RANDOM_POOL_SIZE + 1);
    expect(pooledRandomToken(32)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
