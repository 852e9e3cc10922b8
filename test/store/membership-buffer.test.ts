import { describe, expect, it } from 'vitest';
import { MembershipBuffer, type Pair } from '../../src/store/membership-buffer.ts';

describe('MembershipBuffer', () => {
  it('hands every pair back once, in (member, owner) order, and is empty afterwards', () => {
    const buffer = new MembershipBuffer();
    const pairs: Pair[] = [];
    // More than one block, ids in no order, extremes of the encoding included.
    for (let i = 0; i < 150_000; i++) pairs.push([(i * 7919) % 100_003, (i * 104_729) % 2_000]);
    pairs.push([2 ** 32 - 1, 2 ** 21 - 1], [0, 0], [2 ** 32 - 1, 0], [0, 2 ** 21 - 1]);
    for (const [owner, member] of pairs) buffer.add(owner, member);
    expect(buffer.size).toBe(pairs.length);

    const want = [...pairs].sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    expect([...buffer.drainEach()]).toEqual(want);
    expect(buffer.size).toBe(0);
    expect([...buffer.drainEach()]).toEqual([]);
  });

  it('holds only pairs it can encode exactly', () => {
    expect(MembershipBuffer.fits(2 ** 32 - 1, 2 ** 21 - 1)).toBe(true);
    expect(MembershipBuffer.fits(2 ** 32, 1)).toBe(false);
    expect(MembershipBuffer.fits(1, 2 ** 21)).toBe(false);
    expect(MembershipBuffer.fits(-1, 1)).toBe(false);
    expect(MembershipBuffer.fits(1.5, 1)).toBe(false);
  });
});
