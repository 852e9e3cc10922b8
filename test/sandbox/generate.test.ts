import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../src/sandbox/index.ts';

const NOW = '2026-03-02T01:00:00.000Z';
// One school-scale school shared by the checks below (generation is the slow part on a busy machine).
let shared: ReturnType<typeof generateSchool> | undefined;
const schoolScale = () => {
  shared ??= generateSchool(1, 'school', NOW);
  return shared;
};

describe('generateSchool', () => {
  it('is deterministic for (seed, scale, now) and differs across seeds', () => {
    const a = generateSchool(9, 'small', NOW);
    const b = generateSchool(9, 'small', NOW);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
    const c = generateSchool(10, 'small', NOW);
    expect(JSON.stringify(c.students)).not.toBe(JSON.stringify(a.students));
  });

  it('school scale is about 1,200 students, 120 teams and 6,000 sessions', () => {
    const s = schoolScale();
    expect(s.students).toHaveLength(1200);
    expect(s.teams).toHaveLength(120);
    expect(s.sessions.length).toBeGreaterThan(5000);
    expect(s.sessions.length).toBeLessThan(7500);
  });

  it('names come from many scripts, with diacritics and preferred names that differ from legal ones', () => {
    const s = schoolScale();
    const names = s.students.map((p) => `${p.firstName} ${p.lastName} ${p.legalFirstName ?? ''}`).join('\n');
    expect(names).toMatch(/[\u00C0-\u024F]/); // Latin with diacritics
    expect(names).toMatch(/[ạ-ỹđĐ]/); // Vietnamese
    expect(names).toMatch(/[\u4E00-\u9FFF]/); // CJK
    expect(names).toMatch(/[\u0600-\u06FF]/); // Arabic
    expect(names).toMatch(/[\u0400-\u04FF]/); // Cyrillic
    expect(names).toMatch(/[\u0370-\u03FF]/); // Greek
    expect(names).toMatch(/[\u0590-\u05FF]/); // Hebrew
    expect(names).toMatch(/[\u0900-\u097F]/); // Devanagari
    expect(s.students.some((p) => p.legalFirstName !== null && p.legalFirstName !== p.firstName)).toBe(true);
    expect(s.students.some((p) => p.legalFirstName === null)).toBe(true);
  });

  it('has the variety the outputs need', () => {
    const s = schoolScale();
    const now = Date.parse(NOW);
    expect(s.users.some((u) => u.frozen)).toBe(true);
    expect(s.students.some((p) => !p.current)).toBe(true);
    expect(s.teams.some((t) => t.hidden)).toBe(true);
    expect(s.memberships.some((m) => m.captain)).toBe(true);
    expect(s.memberships.some((m) => m.end !== null && m.end < now)).toBe(true);
    expect(s.memberships.some((m) => m.jerseyNumber !== '')).toBe(true);
    const S = s.sessions;
    for (const r of ['W', 'L', 'D', 'F', 'OF', 'NR'])
      expect(
        S.some((x) => x.result === r),
        r,
      ).toBe(true);
    expect(S.some((x) => x.bye)).toBe(true);
    expect(S.some((x) => x.cancelled)).toBe(true);
    expect(S.some((x) => x.status === 'draft')).toBe(true);
    expect(S.some((x) => x.status === 'unconfirmed')).toBe(true);
    expect(S.some((x) => x.teamIds.length === 0)).toBe(true);
    expect(S.some((x) => x.optional)).toBe(true);
    expect(
      S.some((x) => x.notes !== '' && x.studentParentNotes !== '' && x.notes !== x.studentParentNotes),
    ).toBe(true);
    expect(S.some((x) => x.start < now) && S.some((x) => x.start > now)).toBe(true);
    const series = new Map<number, number>();
    for (const x of S) series.set(x.seriesId, (series.get(x.seriesId) ?? 0) + 1);
    expect([...series.values()].some((n) => n > 5)).toBe(true);
    expect(s.absences.some((a) => a.start <= now && a.end > now)).toBe(true);
    expect(s.students.some((p) => p.medicalConditions.length > 0)).toBe(true);
    expect(s.attendanceRecords.length).toBeGreaterThan(1000);
    expect(s.incidents.length).toBeGreaterThan(10);
    expect(s.activitySelections.length).toBeGreaterThan(100);
    expect(new Set(s.activities.map((a) => a.emoji)).size).toBeGreaterThan(10);
  });
});
