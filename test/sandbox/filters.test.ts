import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { all, call, get, type Json } from './helpers.ts';

const NOW = '2026-03-02T01:00:00.000Z';
const now = Date.parse(NOW);
const DAY = 86_400_000;
const YEAR = { startDateTime: '2025-01-01T00:00:00Z', endDateTime: '2027-06-01T00:00:00Z' };
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ seed: 5, now: NOW });
});
afterAll(async () => {
  await sb.close();
});

const ids = (xs: Json[]) => xs.map((x) => x.id);

describe('GET /sessions filters', () => {
  it('teamId extends the default range to six months ahead', async () => {
    const team = sb.school.teams.find((t) =>
      sb.school.sessions.some((s) => s.teamIds.includes(t.id) && s.start > now + 60 * DAY),
    )!;
    const got = await all(sb, '/sessions', { teamId: team.id, pageLength: 1000 });
    const sixMonths = Date.UTC(2026, 8, 2, 1);
    const expected = sb.school.sessions.filter(
      (s) => s.teamIds.includes(team.id) && s.start < sixMonths && s.end > now - 28 * DAY,
    );
    expect(ids(got)).toEqual(expected.map((s) => s.id));
    expect(got.some((s) => Date.parse(s.startDateTime as string) > now + 28 * DAY)).toBe(true);
  });

  it('an explicit range returns the sessions intersecting it', async () => {
    const got = await all(sb, '/sessions', { ...YEAR, pageLength: 1000 });
    expect(got.length).toBe(sb.school.sessions.length);
  });

  it('activityIds, departmentIds, locationIds, cancelled, bye, scored, includeStatuses, excludeSessionsWithTeams', async () => {
    const S = sb.school.sessions;
    const check = async (params: Record<string, unknown>, pred: (s: (typeof S)[number]) => boolean) => {
      const got = await all(sb, '/sessions', { ...YEAR, ...params, pageLength: 1000 });
      const want = S.filter(pred).map((s) => s.id);
      expect(want.length, JSON.stringify(params)).toBeGreaterThan(0);
      expect(ids(got), JSON.stringify(params)).toEqual(want);
    };
    const act = sb.school.activities[1]!;
    await check({ activityIds: [act.id] }, (s) => s.activityId === act.id);
    await check(
      { departmentIds: [act.departmentId] },
      (s) => sb.school.activities.find((a) => a.id === s.activityId)!.departmentId === act.departmentId,
    );
    await check({ locationIds: [401, 402] }, (s) => s.locationId === 401 || s.locationId === 402);
    await check({ cancelled: true }, (s) => s.cancelled);
    await check({ cancelled: false }, (s) => !s.cancelled);
    await check({ bye: true }, (s) => s.bye);
    await check({ scored: true }, (s) => s.scored);
    await check({ scored: false }, (s) => !s.scored);
    await check({ includeStatuses: ['draft', 'unconfirmed'] }, (s) => s.status !== 'confirmed');
    await check({ excludeSessionsWithTeams: true }, (s) => s.teamIds.length === 0);
  });

  it('sisIds keeps sessions with those students; includeSisIds lists the matches', async () => {
    const student = sb.school.students.find((p) =>
      sb.school.memberships.some((m) => m.studentId === p.id && m.end === null),
    )!;
    const got = await all(sb, '/sessions', {
      ...YEAR,
      sisIds: [student.sisId],
      includeSisIds: true,
      pageLength: 1000,
    });
    const want = sb.school.sessions.filter((s) => s.rosterIds.includes(student.id));
    expect(ids(got)).toEqual(want.map((s) => s.id));
    for (const s of got) expect(s.sisIds).toEqual([student.sisId]);
  });

  it('includeTeams / includeStaff / includeRoundName / includeCustomFieldsMetadata shape the records', async () => {
    const bare = await get(sb, '/sessions', { pageLength: 5 });
    for (const s of bare.data) {
      expect(s).not.toHaveProperty('teams');
      expect(s).not.toHaveProperty('students');
      expect(s).not.toHaveProperty('assignedStaff');
      expect(s).toHaveProperty('feedback', []);
      expect((s.activity as Json).colour).toBeTypeOf('number');
    }
    expect(bare.customFieldsMetadata).toBeUndefined();
    const full = await get(sb, '/sessions', {
      ...YEAR,
      scored: true,
      bye: false,
      pageLength: 50,
      includeTeams: true,
      includeStaff: true,
      includeRoundName: true,
      includeCustomFieldsMetadata: true,
    });
    const s = full.data[0]!;
    expect(s.teams).toEqual([
      expect.objectContaining({
        id: expect.any(Number),
        name: expect.any(String),
        customFieldsData: expect.any(Object),
      }),
    ]);
    expect((s.students as Json[]).length).toBeGreaterThan(0);
    const staff = s.assignedStaff as Json[];
    expect(staff.length).toBeGreaterThan(0);
    for (const k of ['id', 'firstName', 'lastName', 'sisId', 'externalId', 'secondaryExternalId']) {
      expect(staff[0]).toHaveProperty(k);
    }
    expect(s.roundName).toMatch(/^Round \d+$/);
    const meta = full.customFieldsMetadata as Record<string, Json>;
    expect(new Set(Object.values(meta).map((m) => m.dataType))).toEqual(
      new Set(['short-text', 'time', 'single-select', 'staff', 'student']),
    );
    expect(Object.values(meta).some((m) => !(m.showToUserTypes as string[]).includes('guardian'))).toBe(true);
    expect(Object.values(meta).some((m) => (m.showToUserTypes as string[]).includes('guardian'))).toBe(true);
  });

  it('fixtures carry opponents, results and scores; home and away by location owner', async () => {
    const fixtures = await all(sb, '/sessions', { ...YEAR, scored: true, bye: false, pageLength: 1000 });
    const results = new Set(fixtures.map((f) => f.result).filter((r) => r !== null));
    expect(results.size).toBeGreaterThanOrEqual(3);
    const won = fixtures.find((f) => f.result === 'W')!;
    expect(won.organisationScore).toBeTypeOf('string');
    expect(won.opponentScore).toBeTypeOf('number');
    expect(won.opponent).toBeTypeOf('string');
    const owners = new Set(
      fixtures.map((f) => ((f.locationData as Json | null)?.owner as Json | undefined)?.id),
    );
    expect(owners.size).toBeGreaterThan(1);
  });
});

describe('other lists', () => {
  it('teams: hidden default false, activityId, categoryId, sisIds, userIds, includes, showAsOfDate', async () => {
    const visible = await all(sb, '/teams');
    expect(visible.every((t) => t.hidden === false)).toBe(true);
    const hidden = await all(sb, '/teams', { hidden: true });
    expect(hidden.length).toBeGreaterThan(0);
    expect(visible[0]).not.toHaveProperty('students');
    const t = sb.school.teams.find((x) => !x.hidden)!;
    expect(ids(await all(sb, '/teams', { activityId: t.activityId }))).toContain(t.id);
    if (t.categoryId !== null)
      expect(ids(await all(sb, '/teams', { categoryId: t.categoryId }))).toContain(t.id);
    const staff = t.staff.find((s) => s.end === null)!;
    expect(ids(await all(sb, '/teams', { userIds: [staff.userId] }))).toContain(t.id);
    const member = sb.school.memberships.find(
      (m) => m.teamId === t.id && m.end === null && m.start !== null && m.start < now - DAY,
    )!;
    const sis = sb.school.students.find((p) => p.id === member.studentId)!.sisId;
    expect(ids(await all(sb, '/teams', { sisIds: [sis] }))).toContain(t.id);
    const withAll = await all(sb, '/teams', {
      includeStudents: true,
      includeStaff: true,
      includePositions: true,
    });
    const w = withAll.find((x) => x.id === t.id)!;
    expect(w.students).toEqual(
      expect.arrayContaining([expect.objectContaining({ studentId: member.studentId })]),
    );
    expect(w.assignedStaff).toEqual(expect.arrayContaining([expect.objectContaining({ id: staff.userId })]));
    expect(Array.isArray(w.positions)).toBe(true);
    // Before the season everyone joined later: an early showAsOfDate shows fewer students.
    const early = await all(sb, '/teams', { includeStudents: true, showAsOfDate: '2025-01-01T00:00:00Z' });
    const e = early.find((x) => x.id === t.id)!;
    expect((e.students as Json[]).length).toBeLessThan((w.students as Json[]).length);
  });

  it('single team carries the roster detail: guardians, medical conditions, sortOrder, absentToday', async () => {
    const t = sb.school.teams[0]!;
    const r = await call(sb, 'GET', `/teams/${t.id}`);
    expect(r.status).toBe(200);
    const data = r.json.data as Json;
    expect(data.studentSortType).toBeTypeOf('string');
    expect((data.activity as Json).accessRights).toEqual({
      moveStudentsWithoutApproval: expect.any(Boolean),
    });
    const student = (data.students as Json[])[0]!;
    for (const k of [
      'id',
      'email',
      'guardians',
      'medicalConditions',
      'sortOrder',
      'absentToday',
      'absentReason',
    ]) {
      expect(student).toHaveProperty(k);
    }
    expect((await call(sb, 'GET', '/teams/1')).status).toBe(404);
    expect((await call(sb, 'GET', '/teams/abc')).status).toBe(404);
  });

  it('students: current default true, false lists former students, sisIds', async () => {
    const former = await all(sb, '/students', { current: false });
    expect(ids(former)).toEqual(sb.school.students.filter((s) => !s.current).map((s) => s.id));
    const s = sb.school.students[3]!;
    const one = await all(sb, '/students', { sisIds: [s.sisId], current: s.current });
    expect(one).toEqual([expect.objectContaining({ id: s.id, sisId: s.sisId, yearGroupId: s.yearGroupId })]);
  });

  it('student-teams: activityId, studentIds, range; ended memberships carry endDateTime', async () => {
    const everything = await all(sb, '/student-teams');
    expect(everything.length).toBe(sb.school.memberships.length);
    expect(everything.some((m) => m.endDateTime !== null)).toBe(true);
    expect(everything.some((m) => m.startDateTime === null)).toBe(true);
    const m = sb.school.memberships[0]!;
    const mine = await all(sb, '/student-teams', { studentIds: [m.studentId] });
    expect(mine.every((x) => (x.student as Json).id === m.studentId)).toBe(true);
    const team = sb.school.teams.find((t) => t.id === m.teamId)!;
    const act = await all(sb, '/student-teams', { activityId: team.activityId });
    expect(act.every((x) => ((x.team as Json).activity as Json).id === team.activityId)).toBe(true);
    expect((await call(sb, 'GET', '/student-teams?startDateTime=2026-01-01T00:00:00Z')).status).toBe(400);
    const future = await all(sb, '/student-teams', {
      startDateTime: '2030-01-01T00:00:00Z',
      endDateTime: '2030-02-01T00:00:00Z',
    });
    expect(future.every((x) => x.endDateTime === null)).toBe(true);
  });

  it('attendance records: timePeriod, absent, explained, studentSisIds', async () => {
    const last90 = await all(sb, '/attendance-records', { timePeriod: 'last-90-days', pageLength: 300 });
    expect(last90.length).toBe(sb.school.attendanceRecords.length);
    const week = await all(sb, '/attendance-records', { timePeriod: 'last-week', pageLength: 300 });
    expect(week.length).toBeLessThan(last90.length);
    expect(week.every((r) => Date.parse((r.session as Json).startDateTime as string) > now - 8 * DAY)).toBe(
      true,
    );
    const absent = await all(sb, '/attendance-records', {
      timePeriod: 'last-90-days',
      absent: true,
      pageLength: 300,
    });
    expect(absent.length).toBeGreaterThan(0);
    expect(absent.every((r) => r.absent === true)).toBe(true);
    const unexplained = await all(sb, '/attendance-records', {
      timePeriod: 'last-90-days',
      explained: false,
      pageLength: 300,
    });
    expect(unexplained.every((r) => r.absent === true && r.explained === false)).toBe(true);
    const sis = ((last90[0]!.student as Json).smsId as string) ?? '';
    const one = await all(sb, '/attendance-records', {
      timePeriod: 'last-90-days',
      studentSisIds: [sis],
      pageLength: 300,
    });
    expect(one.every((r) => (r.student as Json).smsId === sis)).toBe(true);
    expect((await call(sb, 'GET', '/attendance-records?timePeriod=fortnight')).status).toBe(400);
  });

  it('users: frozen, permissionTypes, activityIds', async () => {
    const admins = await all(sb, '/users', { permissionTypes: [2] });
    expect(admins.length).toBeGreaterThan(0);
    expect(admins.every((u) => u.isAdmin === true)).toBe(true);
    const frozen = await all(sb, '/users', { frozen: true });
    expect(frozen.every((u) => u.frozen === true)).toBe(true);
    const act = sb.school.activities[0]!.id;
    const coaches = await all(sb, '/users', { activityIds: [act] });
    expect(coaches.every((u) => (u.activitiesPermissions as Json[]).some((p) => p.activityId === act))).toBe(
      true,
    );
    expect((await call(sb, 'GET', '/users?permissionTypes=[5]')).status).toBe(400);
  });

  it('incidents, locations, departments, year groups, activities, activity selections', async () => {
    const inc = await get(sb, '/incidents');
    expect(inc.pagination).toHaveProperty('next', null);
    expect(inc.data.length).toBe(sb.school.incidents.length);
    const conc = await all(sb, '/incidents', { concussionStatus: 'none' });
    expect(conc.every((i) => i.concussionStatus === 'none')).toBe(true);
    const locs = await all(sb, '/locations');
    expect(locs.every((l) => l.archived === false)).toBe(true);
    expect(locs.some((l) => (l.name as string).includes('Playing Fields'))).toBe(false); // association venues are not listed
    expect((await all(sb, '/locations', { archived: true })).length).toBeGreaterThan(0);
    expect((await all(sb, '/departments')).length).toBe(6);
    const years = await all(sb, '/year-groups');
    expect(years.some((y) => y.archived === true)).toBe(true);
    const acts = await get(sb, '/activities');
    expect(acts.data[0]).toMatchObject({
      emoji: expect.any(String),
      hexColor: expect.stringMatching(/^#[0-9A-F]{6}$/i),
    });
    const dept = sb.school.activities[0]!.departmentId;
    expect(
      (await all(sb, '/activities', { departmentIds: [dept] })).every(
        (a) => (a.department as Json).id === dept,
      ),
    ).toBe(true);
    const sels = await all(sb, '/activity-selections');
    expect(sels.length).toBe(sb.school.activitySelections.filter((x) => !x.deleted).length);
    const paid = await all(sb, '/activity-selections', { invoiceStatus: ['paid'] });
    expect(paid.every((x) => (x.invoice as Json).status === 'paid')).toBe(true);
    expect((paid[0]!.invoice as Json).reference).toMatch(/^CB-/);
  });
});
