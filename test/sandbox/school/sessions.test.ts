// The generated school's sessions (src/sandbox/school/sessions.ts), on the real generator's 'school' scale: none on
// a day off (and only those dropped), chronological; fixtures whose results agree with their scores, played ones
// confirmed and scored, byes with no opponent or venue; rosters that are the teams' members at the start plus the
// students put on directly; custom fields of the declared keys that agree with the session (meet time half an
// hour before, bus list from the roster, staff on duty from its staff); edits stamped before now.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../../src/sandbox/generate.ts';
import type { SSession } from '../../../src/sandbox/model.ts';
import { dayOff } from '../../../src/sandbox/school-calendar.ts';
import { hourMinute, offsetMinutes } from '../../../src/util/time-zone.ts';
import { TEST_NOW } from '../../support/clock.ts';

const school = generateSchool(3, 'school', TEST_NOW);
const now = Date.parse(TEST_NOW);
const tz = school.timeZone;
const localDate = (ms: number) => new Date(ms + offsetMinutes(ms, tz) * 60_000).toISOString().slice(0, 10);
const fixtures = school.sessions.filter((s) => s.scored);
const played = fixtures.filter((s) => !s.bye && s.end < now);

describe("the generated school's sessions", () => {
  it('holds none on a day off, drops only those, and lists them by start then id', () => {
    expect(school.sessions.filter((s) => dayOff(localDate(s.start)) !== null)).toEqual([]);
    const all = generateSchool(3, 'school', TEST_NOW, { holidays: false }).sessions;
    const kept = new Set(school.sessions.map((s) => s.id));
    const dropped = all.filter((s) => !kept.has(s.id));
    expect(dropped.length).toBeGreaterThan(0);
    expect(dropped.every((s) => dayOff(localDate(s.start)) !== null)).toBe(true);
    const order = school.sessions.every(
      (s, i, l) =>
        i === 0 || l[i - 1]!.start < s.start || (l[i - 1]!.start === s.start && l[i - 1]!.id < s.id),
    );
    expect(order).toBe(true);
  });

  it('gives each played fixture a result its scores agree with, confirmed; one to come has none', () => {
    expect(played.length).toBeGreaterThan(50);
    const agrees: Record<string, (us: number, them: number) => boolean> = {
      W: (us, them) => us > them,
      L: (us, them) => us < them,
      D: (us, them) => us === them,
      F: (us, them) => us === 0 && them > 0,
      OF: (us, them) => us > 0 && them === 0,
    };
    for (const s of played) {
      expect(s.status, `session ${s.id}`).toBe('confirmed');
      expect(s.result, `session ${s.id}`).not.toBeNull();
      if (s.result === 'NR') expect([s.organisationScore, s.opponentScore]).toEqual([null, null]);
      else
        expect(
          agrees[s.result!]!(s.organisationScore!, s.opponentScore!),
          `session ${s.id} ${s.result}`,
        ).toBe(true);
    }
    expect(new Set(played.map((s) => s.result)).size).toBe(6);
    for (const s of fixtures.filter((f) => f.start > now))
      expect([s.result, s.organisationScore, s.opponentScore], `session ${s.id}`).toEqual([null, null, null]);
  });

  it('numbers each team’s rounds; a bye has no opponent, venue or result', () => {
    const byes = fixtures.filter((s) => s.bye);
    expect(byes.length).toBeGreaterThan(0);
    for (const s of byes) {
      expect([s.opponent, s.opponentTeam, s.opponentOrganisation, s.locationId, s.result]).toEqual([
        null,
        null,
        null,
        null,
        null,
      ]);
      expect(s.title).toMatch(/ — Bye$/);
    }
    for (const s of fixtures.filter((f) => !f.bye))
      expect(s.opponent, `session ${s.id}`).toBe(s.opponentTeam);
    const team = fixtures[0]!.teamIds[0]!;
    const rounds = fixtures.filter((s) => s.teamIds[0] === team).sort((a, b) => a.start - b.start);
    // Days off drop some rounds; those left count up.
    const numbers = rounds.map((s) => Number(s.roundName!.replace('Round ', '')));
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  it("rosters the team's members at the session's start, plus the students put on directly", () => {
    const byTeam = Map.groupBy(school.memberships, (m) => m.teamId);
    const current = new Set(school.students.filter((s) => s.current).map((s) => s.id));
    for (const s of school.sessions.filter((_, i) => i % 7 === 0)) {
      const expected = new Set(s.extraStudentIds);
      for (const t of s.teamIds)
        for (const m of byTeam.get(t) ?? [])
          if ((m.start === null || m.start <= s.start) && (m.end === null || m.end > s.start))
            expected.add(m.studentId);
      expect(new Set(s.rosterIds), `session ${s.id}`).toEqual(expected);
      if (s.teamIds.length === 0) expect(s.extraStudentIds.every((id) => current.has(id))).toBe(true);
    }
    const trials = school.sessions.filter((s) => /(Trials|Auditions)$/.test(s.title));
    expect(trials.length).toBeGreaterThan(0);
    expect(trials.every((s) => s.teamIds.length === 0 && s.extraStudentIds.length >= 5)).toBe(true);
  });

  it('fills custom fields of the declared keys only, each agreeing with its session', () => {
    const keys = new Set(school.customFields.map((f) => f.key));
    const check = (s: SSession, data: Record<string, unknown>) => {
      for (const k of Object.keys(data)) expect(keys.has(k), `session ${s.id}: ${k}`).toBe(true);
      if ('meet_time' in data) expect(data.meet_time).toBe(hourMinute(s.start - 30 * 60_000, tz));
      if ('bus_list' in data) {
        const bus = data.bus_list as number[];
        expect(bus.length).toBeLessThanOrEqual(12);
        expect(
          bus.every((id) => s.rosterIds.includes(id)),
          `session ${s.id}`,
        ).toBe(true);
      }
    };
    for (const s of school.sessions) {
      check(s, s.customFieldsData);
      for (const t of s.teamIds) check(s, s.teamCustomFieldsData[t]!);
      if (s.teamIds.length === 0) expect(s.customFieldsData, `session ${s.id}`).toEqual({});
      const duty = s.customFieldsData.staff_on_duty as number[] | undefined;
      if (duty) expect(duty.every((id) => s.staffIds.includes(id))).toBe(true);
    }
    expect(
      school.sessions.some((s) => Object.values(s.teamCustomFieldsData).some((d) => 'bus_list' in d)),
    ).toBe(true);
  });

  it('stamps a past session’s edit after it ended and before now, one to come before now', () => {
    for (const s of school.sessions) {
      expect(s.updatedAt, `session ${s.id}`).toBeLessThan(now);
      if (s.end < now) expect(s.updatedAt, `session ${s.id}`).toBeGreaterThan(s.end);
    }
  });
});
