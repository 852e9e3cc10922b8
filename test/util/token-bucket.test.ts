import { describe, expect, it } from 'vitest';
import { TokenBucket, TokenBuckets } from '../../src/util/token-bucket.ts';

function clock(start = 1000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('token bucket', () => {
  it('allows a burst of `capacity`, then says how many whole seconds until the next token', () => {
    const c = clock();
    const b = new TokenBucket({ capacity: 3, refillPerSecond: 0.5, now: c.now });
    expect([b.take(), b.take(), b.take()]).toEqual([0, 0, 0]);
    expect(b.take()).toBe(2);
    c.advance(1000);
    expect(b.take()).toBe(1);
    c.advance(1000);
    expect(b.take()).toBe(0);
    expect(b.take()).toBe(2);
  });

  it('refills continuously but never above capacity', () => {
    const c = clock();
    const b = new TokenBucket({ capacity: 2, refillPerSecond: 10, now: c.now });
    b.take();
    b.take();
    expect(b.level()).toBe(0);
    c.advance(50);
    expect(b.level()).toBeCloseTo(0.5);
    c.advance(10_000);
    expect(b.level()).toBe(2);
    expect(b.isFull()).toBe(true);
  });

  it('a spent failure never drives the level below zero, and retryAfter takes nothing', () => {
    const c = clock();
    const b = new TokenBucket({ capacity: 1, refillPerSecond: 1 / 6, now: c.now });
    expect(b.retryAfter()).toBe(0);
    b.spend();
    b.spend();
    expect(b.level()).toBe(0);
    expect(b.retryAfter()).toBe(6);
    expect(b.retryAfter()).toBe(6);
    c.advance(6000);
    expect(b.retryAfter()).toBe(0);
  });
});

describe('keyed token buckets', () => {
  it('gives every key its own bucket: one client throttled leaves another untouched', () => {
    const c = clock();
    const buckets = new TokenBuckets({ capacity: 1, refillPerSecond: 1, now: c.now });
    expect(buckets.take('a')).toBe(0);
    expect(buckets.take('a')).toBe(1);
    expect(buckets.take('b')).toBe(0);
    expect(buckets.retryAfter('never-seen')).toBe(0);
    expect(buckets.size).toBe(2);
  });

  it('forgets full buckets, and only full ones, when it holds maxKeys', () => {
    const c = clock();
    const buckets = new TokenBuckets({ capacity: 2, refillPerSecond: 1, maxKeys: 2, now: c.now });
    buckets.spend('refilled');
    buckets.spend('empty');
    buckets.spend('empty');
    c.advance(1000);
    buckets.spend('new');
    expect(buckets.size).toBe(2);
    // 'empty' (one token back) was kept: one more failure empties it, where a fresh bucket would still hold one.
    buckets.spend('empty');
    expect(buckets.retryAfter('empty')).toBe(1);
    // 'refilled' was forgotten: it starts full again.
    buckets.spend('refilled');
    expect(buckets.retryAfter('refilled')).toBe(0);
  });
});
