// The generated school's teams and memberships (src/sandbox/school/teams.ts), on the real generator's 'school'
// scale: each team's members come from its category's year groups, a single-sex team lists no one recorded as
// (or named as) the other sex, memberships end after they start and a former student's is never open, captains and
// jersey numbers make sense per team, names repeat only with a letter, and every coach can see the activity.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../../src/sandbox/generate.ts';
import { givenNameGender } from '../../../src/sandbox/name-pools.ts';
import { CATEGORIES } from '../../../src/sandbox/school/basis.ts';
import { TEST_NOW } from '../../support/clock.ts';

const school = generateSchool(3, 'school', TEST_NOW);
const now = Date.parse(TEST_NOW);
const students = new Map(school.students.map((s) => [s.id, s]));
const membersOf = (teamId: number) => school.memberships.filter((m) => m.teamId === teamId);
const sports = new Set(school.teams.filter((t) => t.subcategory !== null).map((t) => t.id));

describe("the generated school's teams", () => {
  it('has the scale’s number of teams, distinct names, the last one hidden', () => {
    expect(school.teams).toHaveLength(120);
    expect(new Set(school.teams.map((t) => t.name)).size).toBe(school.teams.length);
    expect(new Set(school.teams.map((t) => t.sisId)).size).toBe(school.teams.length);
    expect(school.teams.at(-1)!.hidden).toBe(true);
  });

  it("draws each team's members from its category's year groups", () => {
    const yearIndex = new Map(school.yearGroups.map((y, i) => [y.id, i]));
    for (const t of school.teams) {
      const [, from, to] = CATEGORIES.find(([name]) => t.name.startsWith(`${name} `))!;
      for (const m of membersOf(t.id)) {
        const y = yearIndex.get(students.get(m.studentId)!.yearGroupId)!;
        expect(y, `${t.name}: student ${m.studentId}`).toBeGreaterThanOrEqual(from);
        expect(y, `${t.name}: student ${m.studentId}`).toBeLessThanOrEqual(to);
      }
    }
  });

  it('lists on a Boys or Girls team no one recorded as, or named as, the other sex', () => {
    let checked = 0;
    for (const t of school.teams) {
      const sub = t.subcategory?.name;
      if (sub !== 'Boys' && sub !== 'Girls') continue;
      const other = sub === 'Boys' ? ['Female', 'female'] : ['Male', 'male'];
      for (const m of membersOf(t.id)) {
        const s = students.get(m.studentId)!;
        expect(other, `${t.name}: ${s.firstName}`).not.toContain(s.gender);
        expect(other, `${t.name}: ${s.firstName}`).not.toContain(givenNameGender(s.firstName));
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });

  it("ends a membership after it starts; only a current student's stays open; some start recently, some have no start", () => {
    for (const m of school.memberships) {
      if (m.start !== null && m.end !== null) expect(m.end, `membership ${m.id}`).toBeGreaterThan(m.start);
      const s = students.get(m.studentId)!;
      if (!s.current) expect(m.end, `membership ${m.id}`).not.toBeNull();
    }
    expect(school.memberships.some((m) => m.start === null)).toBe(true);
    expect(school.memberships.some((m) => m.start !== null && m.start > now - 30 * 86_400_000)).toBe(true);
    expect(new Set(school.memberships.map((m) => m.id)).size).toBe(school.memberships.length);
  });

  it('gives captains only among active members of sports teams, jersey numbers unique per sports team', () => {
    for (const t of school.teams) {
      const members = membersOf(t.id);
      for (const m of members.filter((x) => x.captain)) {
        expect(sports.has(t.id), `${t.name}`).toBe(true);
        expect(m.end, `${t.name}: captain ${m.studentId}`).toBeNull();
      }
      const jerseys = members.map((m) => m.jerseyNumber);
      if (sports.has(t.id)) expect(new Set(jerseys).size, t.name).toBe(jerseys.length);
      else
        expect(
          jerseys.every((j) => j === ''),
          t.name,
        ).toBe(true);
      const positions = new Set(t.positions.map((p) => p.id));
      for (const m of members)
        if (m.positionId !== null) expect(positions.has(m.positionId), t.name).toBe(true);
    }
  });

  it("gives every coach the team's activity, and a managing coach its department", () => {
    const users = new Map(school.users.map((u) => [u.id, u]));
    const activities = new Map(school.activities.map((a) => [a.id, a]));
    for (const t of school.teams) {
      expect(t.staff.filter((s) => s.end === null).length, t.name).toBeGreaterThanOrEqual(1);
      for (const s of t.staff) {
        const u = users.get(s.userId)!;
        expect(u.activityIds, `${t.name}: ${u.id}`).toContain(t.activityId);
        if (u.isManager) expect(u.departmentIds).toContain(activities.get(t.activityId)!.departmentId);
      }
    }
  });
});
