// The generated school's people (src/sandbox/school/people.ts), on the real generator's 'school' scale: staff with
// distinct ASCII e-mails, the admins first (every department theirs) then the managers, the first three never
// deactivated, HR-synced and legacy SIS ids never together; students with distinct SIS ids and few namesakes (by
// preferred or legal first name with the surname), one to three guardians and ids that never repeat.
import { describe, expect, it } from 'vitest';
import { generateSchool } from '../../../src/sandbox/generate.ts';
import { TEST_NOW } from '../../support/clock.ts';

const school = generateSchool(3, 'school', TEST_NOW);
const distinct = <T>(xs: T[]) => new Set(xs).size === xs.length;

describe("the generated school's staff", () => {
  const users = school.users;

  it('have distinct ASCII e-mails of the school, and the admins then the managers first', () => {
    expect(users).toHaveLength(120);
    expect(distinct(users.map((u) => u.email))).toBe(true);
    for (const u of users) expect(u.email, `user ${u.id}`).toMatch(/^[a-z0-9.]+@hillcrest\.example\.edu$/);
    expect(users.filter((u) => u.isAdmin).map((u) => u.id)).toEqual([201, 202]);
    expect(users.filter((u) => u.isManager).map((u) => u.id)).toEqual([203, 204, 205, 206, 207, 208]);
    const all = school.departments.map((d) => d.id).sort();
    for (const u of users.filter((x) => x.isAdmin)) expect([...u.departmentIds].sort()).toEqual(all);
  });

  it('keep the first three active, and a legacy SIS id never beside an HR external id', () => {
    expect(users.slice(0, 3).every((u) => !u.frozen)).toBe(true);
    expect(users.some((u) => u.frozen)).toBe(true);
    for (const u of users) {
      if (u.sisId !== null) {
        expect(u.externalId, `user ${u.id}`).toBeNull();
        expect(u.secondaryExternalId, `user ${u.id}`).toBe(u.sisId);
      }
      if (u.integrationSynced) expect(u.externalId, `user ${u.id}`).toMatch(/^HR-\d+$/);
    }
  });
});

describe("the generated school's students", () => {
  const students = school.students;

  it('have distinct SIS ids and e-mails made from them', () => {
    expect(distinct(students.map((s) => s.sisId))).toBe(true);
    for (const s of students) expect(s.email).toBe(`${s.sisId.toLowerCase()}@students.hillcrest.example.edu`);
    expect(students.some((s) => !s.current)).toBe(true);
    expect(students.some((s) => s.legalFirstName === null)).toBe(true);
  });

  it('have a few namesakes per thousand at most, by preferred or legal first name with the surname', () => {
    const keys = students.flatMap((s) => {
      const own = [`${s.firstName}|${s.lastName}`];
      if (s.legalFirstName !== null && s.legalFirstName !== s.firstName)
        own.push(`${s.legalFirstName}|${s.lastName}`);
      return own.map((k) => k.toLowerCase());
    });
    // A few per thousand keep their namesake's name (name-pools.ts distinctName), as in a real school.
    expect(keys.length - new Set(keys).size).toBeLessThanOrEqual(students.length / 200);
  });

  it('have one to three guardians, and guardian and condition ids that never repeat', () => {
    const guardians = students.flatMap((s) => s.guardians);
    for (const s of students) expect(s.guardians.length, `student ${s.id}`).toBeGreaterThanOrEqual(1);
    for (const s of students) expect(s.guardians.length, `student ${s.id}`).toBeLessThanOrEqual(3);
    expect(distinct(guardians.map((g) => g.id))).toBe(true);
    expect(distinct(guardians.map((g) => g.email))).toBe(true);
    const conditions = students.flatMap((s) => s.medicalConditions);
    expect(conditions.length).toBeGreaterThan(0);
    expect(distinct(conditions.map((c) => c.id))).toBe(true);
    // A guardian who shares the child's surname keeps it through a rename.
    expect(students.filter((s) => s.guardians.some((g) => g.lastName === s.lastName)).length).toBeGreaterThan(
      students.length / 2,
    );
  });
});
