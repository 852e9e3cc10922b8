// The sandbox's query-string conventions (src/sandbox/query.ts), as the spec states them for the upstream: arrays
// as stringified JSON, booleans true/false, timestamps ISO 8601, a range given by both ends or neither, and paging
// by `page` (first is 1) and `pageLength` capped at the endpoint's maximum while the request is echoed. Anything
// malformed is a 400 naming the parameter (what the client's tolerance is tested against).
import { describe, expect, it } from 'vitest';
import { HttpError, keepUpdated, paging, Query } from '../../src/sandbox/query.ts';

const q = (s: string) => new Query(new URLSearchParams(s));

/** The 400 a parse throws (its message), or a failure when it throws none. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    expect((err as HttpError).status).toBe(400);
    return (err as HttpError).message;
  }
  throw new Error('expected a 400');
}

describe('Query', () => {
  it('treats an empty value as absent', () => {
    expect(q('teamId=').has('teamId')).toBe(false);
    expect(q('teamId=').int('teamId')).toBeUndefined();
    expect(q('cancelled=').bool('cancelled')).toBeUndefined();
    expect(q('activityIds=').numArray('activityIds')).toBeUndefined();
  });

  it('reads booleans as true/false (or 1/0), nothing else', () => {
    expect(q('a=true&b=1&c=false&d=0').bool('a')).toBe(true);
    expect([q('b=1').bool('b'), q('c=false').bool('c'), q('d=0').bool('d')]).toEqual([true, false, false]);
    expect(refusal(() => q('cancelled=yes').bool('cancelled'))).toBe(
      'cancelled must be true or false, got "yes"',
    );
    expect(() => q('cancelled=TRUE').bool('cancelled')).toThrow(HttpError);
  });

  it('reads integers, with a lower bound, refusing fractions and words', () => {
    expect(q('teamId=-3').int('teamId')).toBe(-3);
    expect(q('page=1').int('page', 1)).toBe(1);
    expect(refusal(() => q('page=0').int('page', 1))).toBe('page must be at least 1, got 0');
    expect(refusal(() => q('teamId=1.5').int('teamId'))).toBe('teamId must be an integer, got "1.5"');
    expect(() => q('teamId=12abc').int('teamId')).toThrow(HttpError);
  });

  it('reads arrays only as stringified JSON arrays; numbers may come as digit strings', () => {
    expect(q(`activityIds=${encodeURIComponent('[1,"2",3]')}`).numArray('activityIds')).toEqual([1, 2, 3]);
    expect(q(`sisIds=${encodeURIComponent('["S1",7]')}`).strArray('sisIds')).toEqual(['S1', '7']);
    expect(refusal(() => q('activityIds=1,2').numArray('activityIds'))).toMatch(
      /^activityIds must be a stringified JSON array \(e\.g\. \[1,2\]\), got "1,2"$/,
    );
    expect(() => q('activityIds=5').numArray('activityIds')).toThrow(/stringified JSON array/);
    expect(refusal(() => q(`activityIds=${encodeURIComponent('[1.5]')}`).numArray('activityIds'))).toBe(
      'activityIds must be an array of numbers, found 1.5',
    );
    expect(() => q(`sisIds=${encodeURIComponent('[null]')}`).strArray('sisIds')).toThrow(/array of strings/);
  });

  it('reads enumerations and arrays of them only from the allowed values', () => {
    const statuses = ['confirmed', 'unconfirmed', 'draft'] as const;
    expect(q(`s=${encodeURIComponent('["draft","confirmed"]')}`).enumArray('s', statuses)).toEqual([
      'draft',
      'confirmed',
    ]);
    expect(refusal(() => q(`s=${encodeURIComponent('["cancelled"]')}`).enumArray('s', statuses))).toBe(
      's items must be among confirmed, unconfirmed, draft, found "cancelled"',
    );
    expect(q('timePeriod=today').oneOf('timePeriod', ['today', 'custom'])).toBe('today');
    expect(() => q('timePeriod=Today').oneOf('timePeriod', ['today', 'custom'])).toThrow(/must be one of/);
  });

  it('takes a range with both ends or neither, the end not before the start', () => {
    const from = '2026-03-01T00:00:00Z';
    const to = '2026-03-08T00:00:00.000Z';
    expect(q('').range('startDateTime', 'endDateTime')).toBeUndefined();
    expect(q(`startDateTime=${from}&endDateTime=${to}`).range('startDateTime', 'endDateTime')).toEqual({
      start: Date.parse(from),
      end: Date.parse(to),
    });
    expect(q(`startDateTime=${from}&endDateTime=${from}`).range('startDateTime', 'endDateTime')).toEqual({
      start: Date.parse(from),
      end: Date.parse(from),
    });
    expect(refusal(() => q(`startDateTime=${from}`).range('startDateTime', 'endDateTime'))).toBe(
      'startDateTime requires endDateTime',
    );
    expect(refusal(() => q(`endDateTime=${to}`).range('startDateTime', 'endDateTime'))).toBe(
      'endDateTime requires startDateTime',
    );
    expect(
      refusal(() => q(`startDateTime=${to}&endDateTime=${from}`).range('startDateTime', 'endDateTime')),
    ).toBe('endDateTime must not be before startDateTime');
    expect(refusal(() => q('updatedAfter=last tuesday').updated())).toMatch(
      /^updatedAfter must be an ISO 8601 timestamp/,
    );
  });
});

describe('keepUpdated', () => {
  it('keeps records updated strictly after updatedAfter and strictly before updatedBefore, either or both', () => {
    const at = 1_000;
    expect(keepUpdated(at, {})).toBe(true);
    expect(keepUpdated(at, { after: 999 })).toBe(true);
    expect(keepUpdated(at, { after: 1_000 })).toBe(false);
    expect(keepUpdated(at, { before: 1_001 })).toBe(true);
    expect(keepUpdated(at, { before: 1_000 })).toBe(false);
    expect(keepUpdated(at, { after: 999, before: 1_001 })).toBe(true);
    expect(keepUpdated(at, { after: 1_000, before: 2_000 })).toBe(false);
  });
});

describe('paging', () => {
  it('defaults to page 1 and the endpoint length; caps what is served, echoes what was asked', () => {
    expect(paging(q(''), 15, 50)).toEqual({ page: 1, requested: 15, effective: 15 });
    expect(paging(q('page=3&pageLength=80'), 15, 50)).toEqual({ page: 3, requested: 80, effective: 50 });
    expect(paging(q('pageLength=50'), 15, 50)).toEqual({ page: 1, requested: 50, effective: 50 });
  });

  it('refuses a page or page length below 1', () => {
    expect(refusal(() => paging(q('page=0'), 100, 200))).toBe('page must be at least 1, got 0');
    expect(refusal(() => paging(q('pageLength=0'), 100, 200))).toBe('pageLength must be at least 1, got 0');
    expect(() => paging(q('pageLength=-1'), 100, 200)).toThrow(HttpError);
  });
});
