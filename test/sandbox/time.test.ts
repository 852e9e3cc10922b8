// The sandbox's timestamp forms and calendar arithmetic (sandbox/time.ts): what the emulated service accepts as an
// instant, the form absences come back in, and "months after" clamped to the month's last day.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMonths, iso, parseInstant, sqlDateTime } from '../../src/sandbox/time.ts';

const at = (s: string) => Date.parse(s);

// Date.parse takes a date-time without a zone as local time: away from UTC, a form not made UTC shows.
const zone = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Australia/Sydney';
});
afterAll(() => {
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

describe('the sandbox’s instants', () => {
  it('accepts ISO 8601, and a bare date or date-time as UTC', () => {
    expect(parseInstant('2026-03-02T10:00:00+11:00')).toBe(at('2026-03-01T23:00:00Z'));
    expect(parseInstant('2026-03-02')).toBe(at('2026-03-02T00:00:00Z'));
    expect(parseInstant(' 2026-03-02 10:30:15 ')).toBe(at('2026-03-02T10:30:15Z'));
    expect(parseInstant('2026-03-02T10:30')).toBe(at('2026-03-02T10:30:00Z'));
    expect(parseInstant('2026-03-02 10:30:15.250')).toBe(at('2026-03-02T10:30:15.250Z'));
  });

  it('refuses what is not a timestamp', () => {
    expect(parseInstant('yesterday')).toBeNull();
    expect(parseInstant('02/03/2026')).toBeNull();
    expect(parseInstant('2026-13-45')).toBeNull();
    expect(parseInstant('')).toBeNull();
  });

  it('writes the wire’s forms', () => {
    expect(iso(at('2026-03-02T10:30:15.250Z'))).toBe('2026-03-02T10:30:15.250Z');
    expect(sqlDateTime(at('2026-03-02T10:30:15.250Z'))).toBe('2026-03-02 10:30:15');
  });

  it('adds months in UTC, clamping the day to the month’s last', () => {
    expect(addMonths(at('2026-01-31T08:00:00Z'), 1)).toBe(at('2026-02-28T08:00:00Z'));
    expect(addMonths(at('2028-01-31T08:00:00Z'), 1)).toBe(at('2028-02-29T08:00:00Z'));
    expect(addMonths(at('2026-08-31T00:00:00Z'), 6)).toBe(at('2027-02-28T00:00:00Z'));
    expect(addMonths(at('2026-03-15T00:00:00Z'), -3)).toBe(at('2025-12-15T00:00:00Z'));
  });
});
