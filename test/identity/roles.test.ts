// Roles from upstream staff data: admin, manager (activities + departments), staff (assigned + activities).
import { describe, expect, it } from 'vitest';
import {
  canPrintSensitive,
  canSeeTeam,
  isSensitiveTemplate,
  matchStaffByEmail,
  staffAccess,
} from '../../src/identity/roles.ts';

const team = (id: number, activityId: number, departmentId: number | null, staffIds: number[] = []) => ({
  id,
  hidden: false,
  staff: staffIds.map((s) => ({ id: s, firstName: 'A', lastName: 'B', sisId: null })),
  activity: { id: activityId, department: departmentId === null ? null : { id: departmentId } },
});

// Netball (activity 1, sport dept 10), football (activity 2, dept 10), chess (activity 3, dept 20), drama (4, none).
const TEAMS = [
  team(101, 1, 10, [7]),
  team(102, 1, 10),
  team(201, 2, 10, [8]),
  team(301, 3, 20, [7]),
  team(302, 3, 20),
  team(401, 4, null),
];

const user = (over: Partial<Parameters<typeof staffAccess>[0]> = {}) => ({
  id: 7,
  isAdmin: false,
  isManager: false,
  frozen: false,
  activityIds: [] as number[],
  departmentIds: [] as number[],
  ...over,
});

const ids = (s: ReadonlySet<number>) => [...s].sort((a, b) => a - b);

describe('staffAccess', () => {
  it('admin: every team of the school', () => {
    const a = staffAccess(user({ id: 99, isAdmin: true }), TEAMS);
    expect(a.role).toBe('admin');
    expect(a.allTeams).toBe(true);
    expect(canSeeTeam(a, 999)).toBe(true); // a team created after the access was computed
  });

  it('coach: the teams listing them as assigned staff today, nothing else', () => {
    const a = staffAccess(user(), TEAMS);
    expect(a.role).toBe('staff');
    expect(ids(a.teamIds)).toEqual([101, 301]);
    expect(ids(a.assignedTeamIds)).toEqual([101, 301]);
    expect(canSeeTeam(a, 102)).toBe(false);
  });

  it('coach with activitiesPermissions: plus every team of those activities', () => {
    const a = staffAccess(user({ activityIds: [2] }), TEAMS);
    expect(ids(a.teamIds)).toEqual([101, 201, 301]);
    expect(ids(a.assignedTeamIds)).toEqual([101, 301]);
  });

  it('a department only widens a manager, not other staff', () => {
    expect(ids(staffAccess(user({ departmentIds: [20] }), TEAMS).teamIds)).toEqual([101, 301]);
    const m = staffAccess(user({ id: 50, isManager: true, activityIds: [4], departmentIds: [10] }), TEAMS);
    expect(m.role).toBe('manager');
    expect(ids(m.teamIds)).toEqual([101, 102, 201, 401]);
  });

  it('a frozen user sees nothing', () => {
    const a = staffAccess(user({ isAdmin: true, frozen: true }), TEAMS);
    expect(a.allTeams).toBe(false);
    expect(a.teamIds.size).toBe(0);
  });
});

describe('canPrintSensitive', () => {
  it('default: admins and the team’s assigned staff only', () => {
    const admin = staffAccess(user({ id: 99, isAdmin: true }), TEAMS);
    const coach = staffAccess(user({ activityIds: [2] }), TEAMS);
    const manager = staffAccess(user({ id: 50, isManager: true, departmentIds: [10] }), TEAMS);
    expect(canPrintSensitive(admin, 102)).toBe(true);
    expect(canPrintSensitive(coach, 101)).toBe(true); // assigned
    expect(canPrintSensitive(coach, 201)).toBe(false); // visible through an activity, not assigned
    expect(canPrintSensitive(coach, 102)).toBe(false); // not visible at all
    expect(canPrintSensitive(manager, 101)).toBe(false);
  });

  it('follows the school’s choice, never beyond the teams a person may see', () => {
    const manager = staffAccess(user({ id: 50, isManager: true, departmentIds: [10] }), TEAMS);
    const coach = staffAccess(user({ activityIds: [2] }), TEAMS);
    expect(canPrintSensitive(manager, 101, ['admin', 'manager'])).toBe(true);
    expect(canPrintSensitive(manager, 301, ['admin', 'manager'])).toBe(false);
    expect(canPrintSensitive(coach, 201, ['staff'])).toBe(true);
    expect(canPrintSensitive(coach, 102, ['staff'])).toBe(false);
    expect(canPrintSensitive(coach, 101, ['admin'])).toBe(false);
  });
});

describe('matchStaffByEmail', () => {
  const users = [
    { id: 1, email: 'Ada.Coach@School.org', frozen: false },
    { id: 2, email: 'gone@school.org', frozen: true },
    { id: 3, email: null, frozen: false },
    { id: 4, email: 'twin@school.org', frozen: false },
    { id: 5, email: 'TWIN@school.org', frozen: false },
    { id: 6, email: 'back@school.org', frozen: true },
    { id: 7, email: 'back@school.org', frozen: false },
  ];
  it('matches case-insensitively and trims', () => {
    expect(matchStaffByEmail(users, ' ada.coach@school.ORG')).toEqual({ kind: 'found', user: users[0] });
  });
  it('reports frozen, unknown and ambiguous addresses', () => {
    expect(matchStaffByEmail(users, 'gone@school.org').kind).toBe('frozen');
    expect(matchStaffByEmail(users, 'nobody@school.org').kind).toBe('unknown');
    expect(matchStaffByEmail(users, '').kind).toBe('unknown');
    expect(matchStaffByEmail(users, 'twin@school.org').kind).toBe('ambiguous');
  });
  it('prefers the live record when an old one of the same address is frozen', () => {
    expect(matchStaffByEmail(users, 'back@school.org')).toEqual({ kind: 'found', user: users[6] });
  });
});

describe('isSensitiveTemplate', () => {
  it('is true for medical or guardian columns', () => {
    expect(isSensitiveTemplate({ columns: [{ field: 'name' }, { field: 'medical' }] })).toBe(true);
    expect(isSensitiveTemplate({ columns: [{ field: 'guardianContact' }] })).toBe(true);
    expect(isSensitiveTemplate({ columns: [{ field: 'name' }, { field: 'jersey' }] })).toBe(false);
  });
});
