import { describe, expect, it } from 'vitest';
import { deletionGuard } from '../../src/sync/deletion-guard.ts';

const base = { resource: 'sessions', maxShrinkFraction: 0.3 };

describe('deletion guard', () => {
  it('allows ordinary deletions', () => {
    expect(deletionGuard({ ...base, storedCount: 100, listedCount: 98, missingCount: 2 })).toEqual({
      allowed: true,
    });
    expect(deletionGuard({ ...base, storedCount: 10, listedCount: 7, missingCount: 3 })).toEqual({
      allowed: true,
    });
  });
  it('refuses an empty listing against a non-empty store', () => {
    const v = deletionGuard({ ...base, storedCount: 5, listedCount: 0, missingCount: 5 });
    expect(v).toMatchObject({ allowed: false, reason: expect.stringMatching(/empty.*holds 5/) });
  });
  it('refuses a shrink beyond the fraction', () => {
    const v = deletionGuard({ ...base, storedCount: 100, listedCount: 60, missingCount: 40 });
    expect(v).toMatchObject({
      allowed: false,
      reason: expect.stringContaining('40 of 100 stored (40 %, more than the 30 % allowed)'),
    });
  });
  it('has nothing to guard when nothing is missing', () => {
    expect(deletionGuard({ ...base, storedCount: 0, listedCount: 0, missingCount: 0 })).toEqual({
      allowed: true,
    });
  });
});
