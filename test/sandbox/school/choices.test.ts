// What the generated school's families chose and told it (sandbox/school/choices.ts), on the real generator's
// 'school' scale: absences only of current students, a few covering now (team sheets' `absentToday`), each told
// before it starts and before now; selections of current students only, each option's activity the one it names.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../../src/sandbox/generate.ts';
import { TEST_NOW } from '../../support/clock.ts';

const school = generateSchool(3, 'school', TEST_NOW);
const now = Date.parse(TEST_NOW);
const current = new Set(school.students.filter((s) => s.current).map((s) => s.id));

describe("the generated school's families' choices", () => {
  it('has absences of current students only, a few covering now, each told before it starts and before now', () => {
    expect(school.absences.length).toBeGreaterThan(10);
    for (const a of school.absences) {
      expect(current.has(a.studentId), `absence ${a.id}`).toBe(true);
      expect(a.end, `absence ${a.id}`).toBeGreaterThan(a.start);
      expect(a.updatedAt, `absence ${a.id}`).toBeLessThan(Math.min(now, a.start));
    }
    const coveringNow = school.absences.filter((a) => a.start <= now && a.end > now);
    expect(coveringNow.length).toBeGreaterThan(0);
    expect(coveringNow.length).toBeLessThan(school.absences.length / 2);
  });

  it("has selections of current students only, made before now, each option's activity the one it names", () => {
    expect(school.activitySelections.length).toBeGreaterThan(10);
    const seasons = new Map(school.seasons.map((s) => [s.id, s]));
    for (const sel of school.activitySelections) {
      expect(current.has(sel.studentId), `selection ${sel.id}`).toBe(true);
      expect(sel.selectedTimestamp, `selection ${sel.id}`).toBeLessThan(now);
      if (sel.seasonActivityOptionId === null) continue;
      const option = seasons.get(sel.seasonId)!.options.find((o) => o.id === sel.seasonActivityOptionId)!;
      const activity = school.activities.find((a) => a.id === sel.activityId)!;
      expect(option.label.startsWith(activity.name), `selection ${sel.id}`).toBe(true);
    }
  });
});
