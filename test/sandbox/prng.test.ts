// The sandbox's seeded PRNG (sandbox/prng.ts): the same seed gives the same school on every machine, so its
// sequences are pinned here, and each helper keeps to its range.
import { describe, expect, it } from 'vitest';
import { hash32, Rng } from '../../src/sandbox/prng.ts';

describe('the seeded generator', () => {
  it('repeats its sequence for a seed, and another seed gives another', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const seq = Array.from({ length: 5 }, () => a.nextU32());
    expect(Array.from({ length: 5 }, () => b.nextU32())).toEqual(seq);
    expect(new Rng(43).nextU32()).not.toBe(seq[0]);
    for (const x of seq) expect(Number.isInteger(x) && x >= 0 && x < 2 ** 32).toBe(true);
  });

  it('keeps each helper to its range', () => {
    const r = new Rng(7);
    const ints = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const f = r.next();
      expect(f >= 0 && f < 1).toBe(true);
      ints.add(r.int(3, 6));
    }
    expect([...ints].sort()).toEqual([3, 4, 5, 6]);
    expect(() => r.pick([])).toThrow('pick from an empty list');
    const picked = new Set(Array.from({ length: 200 }, () => r.pick(['a', 'b', 'c'])));
    expect(picked).toEqual(new Set(['a', 'b', 'c']));
    expect(Array.from({ length: 50 }, () => r.chance(0)).some(Boolean)).toBe(false);
    expect(Array.from({ length: 50 }, () => r.chance(1)).every(Boolean)).toBe(true);
  });

  it('picks by weight, never an item of weight 0', () => {
    const r = new Rng(9);
    const counts = { a: 0, b: 0, never: 0 };
    for (let i = 0; i < 4000; i++)
      counts[
        r.weighted([
          ['a', 3],
          ['b', 1],
          ['never', 0],
        ] as const)
      ]++;
    expect(counts.never).toBe(0);
    expect(counts.a / counts.b).toBeGreaterThan(2.4);
    expect(counts.a / counts.b).toBeLessThan(3.6);
  });

  it('samples distinct items, all of them when asked for more', () => {
    const r = new Rng(11);
    const s = r.sample([1, 2, 3, 4, 5, 6], 4);
    expect(new Set(s).size).toBe(4);
    expect(r.sample([1, 2, 3], 10).sort()).toEqual([1, 2, 3]);
  });

  it('forks a child whose sequence does not depend on the parent’s later use', () => {
    const p1 = new Rng(5);
    const p2 = new Rng(5);
    const c1 = p1.fork(1);
    const c2 = p2.fork(1);
    p1.nextU32();
    expect(c1.nextU32()).toBe(c2.nextU32());
    expect(new Rng(5).fork(2).nextU32()).not.toBe(new Rng(5).fork(1).nextU32());
  });
});

describe('the stable hash', () => {
  it('is FNV-1a', () => {
    expect(hash32('')).toBe(0x811c9dc5);
    expect(hash32('a')).toBe(0xe40c292c);
    expect(hash32('foobar')).toBe(0xbf9cf968);
  });
});
