// The upstream's clock as its answers tell it (upstream/clock.ts): a `Date` header as a sample, which samples may set
// a cursor, the skew a run's samples allow, how it is said, and how long a measure stands in for answers without one.
import { describe, expect, it } from 'vitest';
import {
  CLOCK_MEMORY_MS,
  ClockMemory,
  clockSample,
  describeSkew,
  MAX_AHEAD_MS,
  SkewMeter,
  skewConsequence,
  trusted,
} from '../../src/upstream/clock.ts';

const T = Date.parse('2026-03-02T10:00:00.000Z');

describe('a response’s Date', () => {
  it('is a sample only when it is a date', () => {
    expect(clockSample('Mon, 02 Mar 2026 10:00:00 GMT', 1, 2)).toEqual({ date: T, sentAt: 1, receivedAt: 2 });
    expect(clockSample(null, 1, 2)).toBeNull();
    expect(clockSample('garbage', 1, 2)).toBeNull();
  });

  it('may set a cursor unless it is more than a day ahead of this server', () => {
    expect(trusted({ date: T + MAX_AHEAD_MS, sentAt: T, receivedAt: T })).toBe(true);
    expect(trusted({ date: T + MAX_AHEAD_MS + 1, sentAt: T, receivedAt: T })).toBe(false);
    expect(trusted({ date: T - 30 * MAX_AHEAD_MS, sentAt: T, receivedAt: T })).toBe(true);
  });
});

describe('the skew a run measures', () => {
  it('is unknown without a sample, and the middle of what the samples allow', () => {
    const m = new SkewMeter();
    expect(m.estimate()).toBeNull();
    // Upstream 5 min ahead; the answer came 100 ms after the request.
    m.add({ date: T + 300_000, sentAt: T, receivedAt: T + 100 });
    // Its second could have begun anywhere in the round trip: (300 000 − 100, 300 000 + 1000).
    expect(m.estimate()).toBe(Math.round((300_000 - 100 + 301_000) / 2));
  });

  it('narrows with each sample, and starts again from the latest when the clock was stepped', () => {
    const m = new SkewMeter();
    m.add({ date: T, sentAt: T - 900, receivedAt: T });
    m.add({ date: T + 10_000, sentAt: T + 10_000, receivedAt: T + 10_050 });
    // Bounds (0, 1900) then (−50, 1000): together (0, 1000).
    expect(m.estimate()).toBe(500);
    m.add({ date: T + 3_600_000, sentAt: T + 20_000, receivedAt: T + 20_000 });
    expect(m.estimate()).toBe(3_580_000 + 500);
  });

  it('is said when notable, in days, hours, minutes and seconds, behind or ahead', () => {
    expect(describeSkew(null)).toBeNull();
    expect(describeSkew(undefined)).toBeNull();
    expect(describeSkew(4_999)).toBeNull();
    expect(describeSkew(-4_999)).toBeNull();
    expect(describeSkew(5_000)).toBe("5 s ahead of this server's");
    expect(describeSkew(-302_000)).toBe("5 min 2 s behind this server's");
    expect(describeSkew(90_061_000)).toBe("1 d 1 h 1 min 1 s ahead of this server's");
    expect(describeSkew(-7_200_000)).toBe("2 h behind this server's");
  });

  it('means a whole read when it is more than a day ahead', () => {
    expect(skewConsequence(MAX_AHEAD_MS + 1)).toContain('read whole');
    expect(skewConsequence(MAX_AHEAD_MS)).toBe("what is new is read by the upstream's clock");
    expect(skewConsequence(-MAX_AHEAD_MS * 10)).toBe("what is new is read by the upstream's clock");
  });
});

describe('the clock’s memory', () => {
  it('gives the upstream’s earliest time for an instant near its last measure, and nothing after an hour', () => {
    const m = new ClockMemory();
    expect(m.upstreamAt(T)).toBeNull();
    m.note({ date: T + 60_000, sentAt: T - 10, receivedAt: T });
    expect(m.upstreamAt(T + 1_000)).toBe(T + 61_000);
    expect(m.upstreamAt(T + CLOCK_MEMORY_MS)).toBe(T + CLOCK_MEMORY_MS + 60_000);
    expect(m.upstreamAt(T + CLOCK_MEMORY_MS + 1)).toBeNull();
    expect(m.upstreamAt(T - CLOCK_MEMORY_MS - 1)).toBeNull();
  });
});
