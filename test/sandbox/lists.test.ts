// The sandbox's list endpoints (src/sandbox/lists.ts) against the spec (../shared/spec/extracurricular-data-
// service-api.md): each endpoint's default and maximum page length from its limits table, the session range rules
// (sessions intersecting the range; 4 weeks either side of now by default, 6 months ahead with teamId; the
// calendar format's fixed window and metadata default) and the attendance time periods. Over a real generated
// school; the HTTP side of the same lists is in reads.test.ts and filters.test.ts.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../src/sandbox/generate.ts';
import { attendancePeriod, LIST_ENDPOINTS, querySessions } from '../../src/sandbox/lists.ts';
import { Query } from '../../src/sandbox/query.ts';
import { SandboxState } from '../../src/sandbox/state.ts';
import { addMonths, DAY } from '../../src/sandbox/time.ts';
import { TEST_NOW } from '../support/clock.ts';

const NOW = Date.parse(TEST_NOW);
const st = new SandboxState(generateSchool(11, 'small', NOW), NOW);
const q = (params: Record<string, string | number> = {}) =>
  new Query(new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])));
const iso = (ms: number) => new Date(ms).toISOString();

describe('LIST_ENDPOINTS', () => {
  it("has the spec's default and maximum page length for each of the 13 lists", () => {
    const limits = Object.fromEntries(LIST_ENDPOINTS.map((e) => [e.path, [e.defaultLength, e.maxLength]]));
    expect(limits).toEqual({
      '/sessions': [100, 1000],
      '/teams': [15, 50],
      '/students': [100, 200],
      '/student-teams': [100, 300],
      '/attendance-records': [30, 300],
      '/users': [100, 200],
      '/incidents': [100, 200],
      '/locations': [100, 200],
      '/departments': [100, 200],
      '/year-groups': [100, 200],
      '/activities': [100, 200],
      '/activity-selections': [100, 200],
      '/pre-explained-absences': [100, 200],
    });
  });
});

describe('querySessions', () => {
  const starts = (records: { start: number }[]) => records.map((s) => s.start);

  it('defaults to 4 weeks either side of now, in chronological order', () => {
    const { records } = querySessions(st, q());
    expect(records.length).toBeGreaterThan(10);
    for (const s of records) {
      expect(s.end).toBeGreaterThan(NOW - 28 * DAY - 5_000);
      expect(s.start).toBeLessThan(NOW + 28 * DAY + 5_000);
    }
    expect(starts(records)).toEqual([...starts(records)].sort((a, b) => a - b));
    const all = st.school.sessions.filter((s) => s.end > NOW - 27 * DAY && s.start < NOW + 27 * DAY);
    expect(records.length).toBeGreaterThanOrEqual(all.length);
  });

  it('with teamId, extends the default range to 6 months after now, and keeps only that team', () => {
    const team = st.school.sessions.find((s) => s.teamIds.length && s.start > NOW + 40 * DAY)?.teamIds[0];
    expect(team, 'a team with a session more than 4 weeks ahead').toBeDefined();
    const { records } = querySessions(st, q({ teamId: team! }));
    expect(records.every((s) => s.teamIds.includes(team!))).toBe(true);
    expect(Math.max(...starts(records))).toBeGreaterThan(NOW + 28 * DAY);
    expect(Math.max(...starts(records))).toBeLessThan(addMonths(NOW, 6) + 5_000);
  });

  it('returns the sessions intersecting a range: one ending at its start or starting at its end is outside', () => {
    const s = st.school.sessions[Math.floor(st.school.sessions.length / 2)]!;
    const ids = (start: number, end: number) =>
      querySessions(st, q({ startDateTime: iso(start), endDateTime: iso(end) })).records.map((r) => r.id);
    expect(ids(s.start, s.end)).toContain(s.id);
    expect(ids(s.end - 1, s.end + DAY)).toContain(s.id);
    expect(ids(s.end, s.end + DAY)).not.toContain(s.id);
    expect(ids(s.start - DAY, s.start)).not.toContain(s.id);
    expect(ids(s.start - DAY, s.start + 1)).toContain(s.id);
  });

  it("takes the calendar format's fixed window over the one asked for, and its metadata by default", () => {
    const fixed = { start: NOW - DAY, end: NOW + DAY };
    const asked = q({ startDateTime: iso(NOW - 60 * DAY), endDateTime: iso(NOW + 60 * DAY) });
    const ics = querySessions(st, asked, fixed);
    expect(ics.records.every((s) => s.end > fixed.start && s.start < fixed.end)).toBe(true);
    expect(ics.includeCustomFieldsMetadata).toBe(true);
    expect(querySessions(st, q()).includeCustomFieldsMetadata).toBe(false);
    expect(
      querySessions(st, q({ includeCustomFieldsMetadata: 'false' }), fixed).includeCustomFieldsMetadata,
    ).toBe(false);
  });

  it('excludeSessionsWithTeams keeps only sessions with no team; includeStatuses refuses an unknown status', () => {
    const { records } = querySessions(st, q({ excludeSessionsWithTeams: 'true' }));
    expect(records.every((s) => s.teamIds.length === 0)).toBe(true);
    expect(() => querySessions(st, q({ includeStatuses: '["cancelled"]' }))).toThrow(/includeStatuses items/);
  });
});

describe('attendancePeriod', () => {
  // 2026-08-31T15:00Z: a month end, so "6 months ago" must clamp to the last day of February.
  const now = Date.UTC(2026, 7, 31, 15);
  const day = Date.UTC(2026, 7, 31);

  it("gives each time period's window", () => {
    expect(attendancePeriod('today', undefined, now)).toEqual({ start: day, end: day + DAY });
    expect(attendancePeriod('yesterday', undefined, now)).toEqual({ start: day - DAY, end: day });
    expect(attendancePeriod('last-week', undefined, now)).toEqual({ start: now - 7 * DAY, end: now });
    expect(attendancePeriod('last-90-days', undefined, now)).toEqual({ start: now - 90 * DAY, end: now });
    expect(attendancePeriod('last-6-months', undefined, now)).toEqual({
      start: Date.UTC(2026, 1, 28, 15),
      end: now,
    });
    expect(attendancePeriod('this-year', undefined, now)).toEqual({
      start: Date.UTC(2026, 0, 1),
      end: Date.UTC(2027, 0, 1),
    });
    expect(attendancePeriod('last-year', undefined, now)).toEqual({
      start: Date.UTC(2025, 0, 1),
      end: Date.UTC(2026, 0, 1),
    });
  });

  it('custom takes the range given; without one (or without a period) the default is the last 30 days', () => {
    const range = { start: Date.UTC(2026, 0, 5), end: Date.UTC(2026, 0, 9) };
    expect(attendancePeriod('custom', range, now)).toEqual(range);
    expect(attendancePeriod('custom', undefined, now)).toEqual({ start: now - 30 * DAY, end: now });
    expect(attendancePeriod(undefined, undefined, now)).toEqual({ start: now - 30 * DAY, end: now });
    // A named period wins over a range sent beside it.
    expect(attendancePeriod('today', range, now)).toEqual({ start: day, end: day + DAY });
  });
});
