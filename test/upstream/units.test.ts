import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../src/upstream/http.ts';
import { isCanonicalInstant, toInstant, toWireDateTime } from '../../src/upstream/instant.ts';
import { encodeQuery } from '../../src/upstream/query.ts';
import { backoffDelay, parseRetryAfter } from '../../src/util/retry.ts';

describe('toInstant', () => {
  it.each([
    ['2026-03-14T09:00:00.000Z', '2026-03-14T09:00:00.000Z'],
    ['2026-03-14T09:00:00Z', '2026-03-14T09:00:00.000Z'],
    ['2026-03-14 09:00:00', '2026-03-14T09:00:00.000Z'],
    ['2026-03-14 09:00:00.5', '2026-03-14T09:00:00.500Z'],
    ['2026-03-14T09:00:00.123456Z', '2026-03-14T09:00:00.123Z'],
    ['2026-03-14T09:00', '2026-03-14T09:00:00.000Z'],
    ['2026-03-14', '2026-03-14T00:00:00.000Z'],
    ['2026-03-14T19:00:00+10:00', '2026-03-14T09:00:00.000Z'],
    ['2026-03-14T04:30:00-0430', '2026-03-14T09:00:00.000Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('%s → %s', (input, out) => {
    expect(toInstant(input)).toBe(out);
  });

  it.each([
    '',
    'tomorrow',
    '2026-02-30 00:00:00',
    '2025-02-29',
    '2026-13-01',
    '2026-03-14T24:00:00Z',
    '14/03/2026',
  ])('rejects %j', (input) => {
    expect(toInstant(input)).toBeNull();
  });

  it('isCanonicalInstant agrees with toInstant(x) === x', () => {
    const samples = [
      '2026-03-14T09:00:00.000Z',
      '2024-02-29T23:59:59.999Z',
      '2025-02-29T00:00:00.000Z',
      '2026-04-31T00:00:00.000Z',
      '2026-03-14T24:00:00.000Z',
      '2026-03-14T09:60:00.000Z',
      '2026-00-14T09:00:00.000Z',
      '2026-03-00T09:00:00.000Z',
      '2026-03-14T09:00:00Z',
      '2026-03-14 09:00:00.000Z',
      '2026-03-14T09:00:00.000+',
      '2100-02-29T00:00:00.000Z',
      '2000-02-29T00:00:00.000Z',
      '2026-0a-14T09:00:00.000Z',
    ];
    // And a spread of real instants, one every 97 hours across a few years.
    for (let t = Date.UTC(2023, 0, 1); t < Date.UTC(2029, 0, 1); t += 97 * 3_600_000 + 7) {
      samples.push(new Date(t).toISOString());
    }
    for (const s of samples) expect(isCanonicalInstant(s), s).toBe(toInstant(s) === s);
    expect(isCanonicalInstant(123)).toBe(false);
  });

  it('reads epoch milliseconds', () => {
    expect(toInstant(Date.UTC(2026, 2, 14, 9))).toBe('2026-03-14T09:00:00.000Z');
  });

  it('writes the session wire form', () => {
    expect(toWireDateTime('2026-03-14T19:00:00+10:00', 'x')).toBe('2026-03-14 09:00:00');
    expect(() => toWireDateTime('soon', 'sessions[0].startDateTime')).toThrow('sessions[0].startDateTime');
  });
});

describe('query encoding', () => {
  it('stringifies arrays as JSON, drops absent values', () => {
    expect(
      encodeQuery({
        activityIds: [1, 2],
        sisIds: ['a b', 'ü'],
        cancelled: false,
        teamId: 4,
        x: undefined,
        y: null,
      }),
    ).toBe(
      `?activityIds=${encodeURIComponent('[1,2]')}&sisIds=${encodeURIComponent('["a b","ü"]').replace(/%20/g, '+')}&cancelled=false&teamId=4`,
    );
    expect(new URLSearchParams(encodeQuery({ sisIds: ['a b', 'ü'] })).get('sisIds')).toBe('["a b","ü"]');
    expect(encodeQuery({})).toBe('');
  });
});

describe('backoff schedule', () => {
  it('1, 2, 4, 8 … capped', () => {
    const p = { ...DEFAULT_BACKOFF, capMs: 10_000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffDelay(p, n))).toEqual([
      1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it('Retry-After as seconds or HTTP date', () => {
    const now = Date.parse('2026-03-01T00:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Sun, 01 Mar 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfter('Sun, 01 Mar 2025 00:00:10 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
