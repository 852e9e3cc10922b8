import { describe, expect, it } from 'vitest';
import { backoffDelay, jitteredBackoffDelay, parseRetryAfter } from '../../src/util/backoff.ts';

describe('backoff', () => {
  it('doubles from the base up to the cap', () => {
    const b = { baseMs: 1000, capMs: 5000 };
    expect([0, 1, 2, 3, 10].map((r) => backoffDelay(b, r))).toEqual([1000, 2000, 4000, 5000, 5000]);
  });

  it('with jitter, waits between half and all of the plain delay', () => {
    const b = { baseMs: 100, capMs: 10_000 };
    expect(jitteredBackoffDelay(b, 3, () => 0)).toBe(400);
    expect(jitteredBackoffDelay(b, 3, () => 0.999_999)).toBeCloseTo(800, 2);
    for (let i = 0; i < 100; i++) {
      const d = jitteredBackoffDelay(b, 2);
      expect(d).toBeGreaterThanOrEqual(200);
      expect(d).toBeLessThanOrEqual(400);
    }
  });

  it('reads Retry-After as seconds or an HTTP date, and nothing else', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
