// The client against the sandbox over HTTP: every endpoint and filter, paging, maxima, stringified arrays,
// errors, writes followed by reads, and the iCalendar variant. Filters are checked against the unfiltered
// listing: the filtered ids must be exactly those of the unfiltered records that satisfy the filter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session } from '../../src/domain/types.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { Page, UpstreamClient } from '../../src/upstream/api.ts';
import { SESSIONS_PAGE_LENGTH } from '../../src/upstream/client.ts';
import {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
  ServerError,
  UnauthorizedError,
  UnprocessableError,
} from '../../src/upstream/errors.ts';
import { all, assertTokenFree, clientOf, collect, ids, NOW } from './sandbox-helpers.ts';

const DAY = 86_400_000;
let sb: Sandbox;
let client: UpstreamClient;
let yearStart: string;
let yearEnd: string;
let sessions: Session[];

beforeAll(async () => {
  sb = await startSandbox({ port: 0, seed: 11, scale: 'small', now: NOW });
  client = clientOf(sb);
  const starts = sb.school.sessions.map((s) => s.start);
  const ends = sb.school.sessions.map((s) => s.end);
  yearStart = new Date(Math.min(...starts) - DAY).toISOString();
  yearEnd = new Date(Math.max(...ends) + DAY).toISOString();
  sessions = await all(
    client.sessions({
      startDateTime: yearStart,
      endDateTime: yearEnd,
      includeTeams: true,
      includeStaff: true,
    }),
  );
});
afterAll(() => sb.close());

/** Filtered ids = the unfiltered records satisfying the predicate, and not none. */
async function checkFilter<T extends { id: number }>(
  universe: readonly T[],
  filtered: AsyncIterable<Page<T>>,
  predicate: (r: T) => boolean,
): Promise<T[]> {
  const got = await all(filtered);
  const expected = universe.filter(predicate);
  expect(expected.length).toBeGreaterThan(0);
  expect(ids(got)).toEqual(ids(expected));
  return got;
}

describe('sessions', () => {
  const year = () => ({
    startDateTime: yearStart,
    endDateTime: yearEnd,
    includeTeams: true,
    includeStaff: true,
  });

  it('reads the whole year, in order, matching the school', () => {
    expect(ids(sessions)).toEqual(ids(sb.school.sessions));
    const starts = sessions.map((s) => s.start);
    expect(starts).toEqual([...starts].sort());
    expect(sessions.some((s) => s.teams.length > 0 && s.students.length > 0)).toBe(true);
    expect(sessions.some((s) => s.staff.length > 0)).toBe(true);
    expect(sessions.some((s) => s.result !== null && s.organisationScore !== null)).toBe(true);
    for (const s of sessions) expect(s.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("pages to the last page at a given page length, at the client's sessions page length by default", async () => {
    const { records, pages } = await collect(client.sessions({ ...year(), pageLength: 50 }));
    expect(pages.map((p) => p.currentPage)).toEqual(pages.map((_, i) => i + 1));
    expect(pages.length).toBe(Math.ceil(sessions.length / 50));
    expect(pages.every((p) => p.lastPage === pages.length && p.numRecords === sessions.length)).toBe(true);
    expect(pages.every((p) => p.pageLength === 50)).toBe(true);
    expect(ids(records)).toEqual(ids(sessions));
    const [only] = (await collect(client.sessions(year()))).pages;
    expect(only?.pageLength).toBe(SESSIONS_PAGE_LENGTH);
  });

  it('defaults to 4 weeks either side of now, 6 months ahead with teamId', async () => {
    const now = Date.parse(sb.now());
    const inWindow = (s: Session, from: number, to: number) =>
      Date.parse(s.end) > from && Date.parse(s.start) < to;
    const near = await all(client.sessions());
    expect(near.length).toBeGreaterThan(0);
    // The sandbox clock runs on in real time: allow a minute of drift.
    expect(near.every((s) => inWindow(s, now - 28 * DAY - 60_000, now + 28 * DAY + 60_000))).toBe(true);
    const teamId = sessions.find((s) => s.teams.length > 0)!.teams[0]!.id;
    const team = await all(client.sessions({ teamId }));
    const expected = sessions.filter(
      (s) => s.teams.some((t) => t.id === teamId) && inWindow(s, now - 28 * DAY, now + 182 * DAY),
    );
    expect(Math.abs(team.length - expected.length)).toBeLessThanOrEqual(1);
    expect(team.some((s) => Date.parse(s.start) > now + 60 * DAY)).toBe(true);
  });

  it('filters: activityIds, departmentIds, locationIds (stringified arrays)', async () => {
    const acts = [...new Set(sessions.map((s) => s.activity.id))].slice(0, 2);
    await checkFilter(sessions, client.sessions({ ...year(), activityIds: acts }), (s) =>
      acts.includes(s.activity.id),
    );
    const dep = sessions[0]!.activity.department!.id;
    await checkFilter(
      sessions,
      client.sessions({ ...year(), departmentIds: [dep] }),
      (s) => s.activity.department?.id === dep,
    );
    const locs = [...new Set(sessions.flatMap((s) => (s.location?.id ? [s.location.id] : [])))].slice(0, 3);
    await checkFilter(sessions, client.sessions({ ...year(), locationIds: locs }), (s) =>
      locs.includes(s.location?.id ?? -1),
    );
  });

  it('filters: cancelled, bye, scored, includeStatuses, excludeSessionsWithTeams, teamId, sisIds', async () => {
    await checkFilter(sessions, client.sessions({ ...year(), cancelled: true }), (s) => s.cancelled);
    await checkFilter(sessions, client.sessions({ ...year(), cancelled: false }), (s) => !s.cancelled);
    const bye = sessions.some((s) => s.bye);
    await checkFilter(sessions, client.sessions({ ...year(), bye }), (s) => s.bye === bye);
    await checkFilter(sessions, client.sessions({ ...year(), scored: true }), (s) => s.scored);
    await checkFilter(sessions, client.sessions({ ...year(), scored: false }), (s) => !s.scored);
    await checkFilter(
      sessions,
      client.sessions({ ...year(), includeStatuses: ['draft', 'unconfirmed'] }),
      (s) => s.status === 'draft' || s.status === 'unconfirmed',
    );
    await checkFilter(
      sessions,
      client.sessions({ ...year(), excludeSessionsWithTeams: true }),
      (s) => s.teams.length === 0,
    );
    const teamId = sessions.find((s) => s.teams.length > 0)!.teams[0]!.id;
    await checkFilter(sessions, client.sessions({ ...year(), teamId }), (s) =>
      s.teams.some((t) => t.id === teamId),
    );
    // A listed student's SIS id, from the school itself: sessions keep only who is listed, not their SIS ids.
    const listed = sessions.find((s) => s.students.length > 0)!.students[0]!.id;
    const sis = sb.school.students.find((p) => p.id === listed)!.sisId;
    await checkFilter(sessions, client.sessions({ ...year(), sisIds: [sis] }), (s) =>
      s.students.some((p) => p.id === listed),
    );
    // includeSisIds is accepted alongside sisIds.
    await all(client.sessions({ ...year(), sisIds: [sis], includeSisIds: true }));
  });

  it('filters: updatedAfter / updatedBefore', async () => {
    const updated = new Map(sb.school.sessions.map((s) => [s.id, s.updatedAt]));
    const times = [...updated.values()].sort((a, b) => a - b);
    const mid = times[Math.floor(times.length / 2)]!;
    const iso = new Date(mid).toISOString();
    await checkFilter(
      sessions,
      client.sessions({ ...year(), updatedAfter: iso }),
      (s) => updated.get(s.id)! > mid,
    );
    await checkFilter(
      sessions,
      client.sessions({ ...year(), updatedBefore: iso }),
      (s) => updated.get(s.id)! < mid,
    );
  });

  it('includeRoundName, includeCustomFieldsMetadata shape the records', async () => {
    const plain = await all(client.sessions({ startDateTime: yearStart, endDateTime: yearEnd }));
    expect(plain.every((s) => s.roundName === null && s.teams.length === 0 && s.staff.length === 0)).toBe(
      true,
    );
    const rounds = await all(
      client.sessions({ startDateTime: yearStart, endDateTime: yearEnd, includeRoundName: true }),
    );
    expect(rounds.some((s) => s.scored && s.roundName !== null)).toBe(true);

    const { pages } = await collect(client.sessions({ ...year(), includeCustomFieldsMetadata: true }));
    const meta = pages[0]!.customFieldsMetadata!;
    expect(meta.length).toBe(sb.school.customFields.length);
    expect(new Set(meta.map((m) => m.dataType))).toEqual(
      new Set(['short-text', 'time', 'single-select', 'staff', 'student']),
    );
    const byKey = new Map(meta.map((m) => [m.key, m]));
    let idLists = 0;
    for (const s of pages.flatMap((p) => p.records)) {
      for (const t of s.teams) {
        for (const [key, value] of Object.entries(t.customFieldsData)) {
          const type = byKey.get(key)?.dataType;
          expect(type).toBeDefined();
          if (type === 'staff' || type === 'student') {
            expect(value).toEqual(expect.arrayContaining([]));
            expect((value as number[]).every(Number.isInteger)).toBe(true);
            idLists++;
          } else expect(typeof value).toBe('string');
        }
      }
    }
    expect(idLists).toBeGreaterThan(0);
  });

  it('a single session, with session-level custom fields and metadata; 404 for a missing one', async () => {
    const withFields =
      sb.school.sessions.find((s) => Object.keys(s.customFieldsData).length > 0) ?? sb.school.sessions[0]!;
    const { session, customFieldsMetadata } = await client.session(withFields.id, {
      includeTeams: true,
      includeStaff: true,
      includeCustomFieldsMetadata: true,
    });
    expect(session.id).toBe(withFields.id);
    expect(session.start).toBe(new Date(withFields.start).toISOString());
    expect(Object.keys(session.customFieldsData).sort()).toEqual(
      Object.keys(withFields.customFieldsData).sort(),
    );
    expect(customFieldsMetadata?.length).toBe(sb.school.customFields.length);
    const bare = await client.session(withFields.id);
    expect(bare.customFieldsMetadata).toBeUndefined();
    const err = await client.session(987_654_321).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).endpoint).toBe('GET /sessions/987654321');
  });

  it('the iCalendar variant returns calendar text, filters applied', async () => {
    const ics = await client.sessionsIcs();
    expect(ics.startsWith('BEGIN:VCALENDAR')).toBe(true);
    const events = (text: string) => text.split('BEGIN:VEVENT').length - 1;
    expect(events(ics)).toBeGreaterThan(0);
    expect(events(ics)).toBeLessThanOrEqual(200);
    const act = sessions[0]!.activity.id;
    const one = await client.sessionsIcs({ activityIds: [act] });
    expect(events(one)).toBeGreaterThan(0);
    expect(events(one)).toBeLessThan(events(ics));
    expect(client.stats()['GET /sessions?format=ics']?.requests).toBeGreaterThanOrEqual(2);
  });
});

describe('teams', () => {
  const inc = { includeStaff: true, includeStudents: true, includePositions: true };

  it('lists visible and hidden teams, pages at 50 by default, follows the server when asked for more', async () => {
    const visible = await all(client.teams(inc));
    const hidden = await all(client.teams({ ...inc, hidden: true }));
    expect(ids([...visible, ...hidden])).toEqual(ids(sb.school.teams));
    expect(hidden.every((t) => t.hidden) && visible.every((t) => !t.hidden)).toBe(true);
    expect(visible.some((t) => t.students.length > 0 && t.staff.length > 0 && t.positions.length > 0)).toBe(
      true,
    );
    const { pages } = await collect(client.teams({ pageLength: 2 }));
    expect(pages.length).toBe(Math.ceil(visible.length / 2));
    expect(ids(pages.flatMap((p) => p.records))).toEqual(ids(visible));
    const [first] = (await collect(client.teams())).pages;
    expect(first?.pageLength).toBe(50);
  });

  it('filters: activityId, departmentIds, categoryId, sisIds, userIds, updatedAfter', async () => {
    const teams = [...(await all(client.teams(inc))), ...(await all(client.teams({ ...inc, hidden: true })))];
    const visible = teams.filter((t) => !t.hidden);
    const t0 = visible.find((t) => t.category !== null && t.staff.length > 0 && t.students.length > 0)!;
    await checkFilter(
      visible,
      client.teams({ ...inc, activityId: t0.activity.id }),
      (t) => t.activity.id === t0.activity.id,
    );
    const dep = t0.activity.department!.id;
    await checkFilter(
      visible,
      client.teams({ ...inc, departmentIds: [dep] }),
      (t) => t.activity.department?.id === dep,
    );
    await checkFilter(
      visible,
      client.teams({ ...inc, categoryId: t0.category!.id }),
      (t) => t.category?.id === t0.category!.id,
    );
    const sis = t0.students[0]!.smsId!;
    await checkFilter(visible, client.teams({ ...inc, sisIds: [sis] }), (t) =>
      t.students.some((m) => m.smsId === sis),
    );
    const user = t0.staff[0]!.id;
    await checkFilter(visible, client.teams({ ...inc, userIds: [user] }), (t) =>
      t.staff.some((s) => s.id === user),
    );
    const updated = new Map(sb.school.teams.map((t) => [t.id, t.updatedAt]));
    const mid = [...updated.values()].sort((a, b) => a - b)[Math.floor(updated.size / 2)]!;
    await checkFilter(
      visible,
      client.teams({ ...inc, updatedBefore: new Date(mid + 1).toISOString() }),
      (t) => updated.get(t.id)! < mid + 1,
    );
    // showAsOfDate before the school year: only the memberships without a start date (older records) show.
    const early = await all(client.teams({ ...inc, showAsOfDate: '2020-01-01T00:00:00Z' }));
    const undated = new Set(
      sb.school.memberships.filter((m) => m.start === null).map((m) => `${m.teamId}/${m.studentId}`),
    );
    const earlyMembers = early.flatMap((t) => t.students.map((m) => `${t.id}/${m.studentId}`));
    expect(earlyMembers.every((k) => undated.has(k))).toBe(true);
    expect(earlyMembers.length).toBeLessThan(visible.reduce((n, t) => n + t.students.length, 0));
  });

  it('a single team carries the roster, medical conditions and guardians; 404 for a missing one', async () => {
    const model = sb.school.teams.find((t) => !t.hidden)!;
    const team = await client.team(model.id);
    expect(team).toMatchObject({ id: model.id, name: model.name, sisId: model.sisId });
    expect(team.students.length).toBeGreaterThan(0);
    expect(team.students.every((m) => m.guardians.length > 0)).toBe(true);
    const students = new Map(sb.school.students.map((s) => [s.id, s]));
    for (const m of team.students) {
      const conditions = students.get(m.studentId)!.medicalConditions;
      expect(m.medicalConditions).toHaveLength(conditions.length);
    }
    expect(team.students.some((m) => m.captain)).toBe(true);
    await expect(client.team(987_654_321)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('people and memberships', () => {
  it('students: current and not, sisIds', async () => {
    const current = await all(client.students());
    const former = await all(client.students({ current: false }));
    expect(ids(current)).toEqual(ids(sb.school.students.filter((s) => s.current)));
    expect(ids(former)).toEqual(ids(sb.school.students.filter((s) => !s.current)));
    expect(current.every((s) => s.current) && former.every((s) => !s.current)).toBe(true);
    const sis = [current[0]!.sisId!, current[3]!.sisId!];
    await checkFilter(current, client.students({ sisIds: sis }), (s) => sis.includes(s.sisId!));
  });

  it('student-teams: all, activityId, studentIds, range', async () => {
    const memberships = await all(client.studentTeams());
    expect(ids(memberships)).toEqual(ids(sb.school.memberships));
    expect(memberships.some((m) => m.end !== null) && memberships.some((m) => m.end === null)).toBe(true);
    const teamActivity = new Map(sb.school.teams.map((t) => [t.id, t.activityId]));
    const act = teamActivity.get(memberships[0]!.teamId)!;
    await checkFilter(
      memberships,
      client.studentTeams({ activityId: act }),
      (m) => teamActivity.get(m.teamId) === act,
    );
    const studs = [memberships[0]!.studentId, memberships[5]!.studentId];
    await checkFilter(memberships, client.studentTeams({ studentIds: studs }), (m) =>
      studs.includes(m.studentId),
    );
    const from = Date.parse(NOW);
    const to = from + DAY;
    await checkFilter(
      memberships,
      client.studentTeams({
        startDateTime: new Date(from).toISOString(),
        endDateTime: new Date(to).toISOString(),
      }),
      (m) => (m.start === null || Date.parse(m.start) < to) && (m.end === null || Date.parse(m.end) > from),
    );
  });

  it('users: all, activityIds, departmentIds, permissionTypes, frozen', async () => {
    const users = await all(client.users());
    expect(ids(users)).toEqual(ids(sb.school.users));
    expect(users.some((u) => u.frozen) && users.some((u) => !u.frozen)).toBe(true);
    await checkFilter(users, client.users({ frozen: true }), (u) => u.frozen);
    await checkFilter(users, client.users({ frozen: false }), (u) => !u.frozen);
    await checkFilter(users, client.users({ permissionTypes: [2] }), (u) => u.isAdmin);
    await checkFilter(users, client.users({ permissionTypes: [0, 1] }), (u) => !u.isAdmin);
    const act = users.find((u) => u.activityIds.length > 0)!.activityIds[0]!;
    await checkFilter(users, client.users({ activityIds: [act] }), (u) => u.activityIds.includes(act));
    const activityDept = new Map(sb.school.activities.map((a) => [a.id, a.departmentId]));
    const dep = activityDept.get(act)!;
    await checkFilter(
      users,
      client.users({ departmentIds: [dep] }),
      (u) => u.departmentIds.includes(dep) || u.activityIds.some((a) => activityDept.get(a) === dep),
    );
  });
});

describe('records and reference lists', () => {
  it('attendance records: period, activity, department, students, absent, explained, updated', async () => {
    const range = { timePeriod: 'custom' as const, startDateTime: yearStart, endDateTime: yearEnd };
    const records = await all(client.attendanceRecords(range));
    expect(ids(records)).toEqual(ids(sb.school.attendanceRecords));
    const sessionActivity = new Map(sessions.map((s) => [s.id, s.activity]));
    const act = sessionActivity.get(records[0]!.sessionId)!;
    await checkFilter(
      records,
      client.attendanceRecords({ ...range, activityIds: [act.id] }),
      (r) => sessionActivity.get(r.sessionId)?.id === act.id,
    );
    await checkFilter(
      records,
      client.attendanceRecords({ ...range, departmentIds: [act.department!.id] }),
      (r) => sessionActivity.get(r.sessionId)?.department?.id === act.department!.id,
    );
    await checkFilter(records, client.attendanceRecords({ ...range, absent: true }), (r) => r.absent);
    await checkFilter(records, client.attendanceRecords({ ...range, absent: false }), (r) => !r.absent);
    await checkFilter(
      records,
      client.attendanceRecords({ ...range, explained: true }),
      (r) => r.absent && r.explained,
    );
    const students = new Map(sb.school.students.map((s) => [s.id, s.sisId]));
    const sis = students.get(records[0]!.studentId)!;
    await checkFilter(
      records,
      client.attendanceRecords({ ...range, studentSisIds: [sis] }),
      (r) => students.get(r.studentId) === sis,
    );
    const updated = new Map(sb.school.attendanceRecords.map((r) => [r.id, r.updatedAt]));
    const mid = [...updated.values()].sort((a, b) => a - b)[Math.floor(updated.size / 2)]!;
    await checkFilter(
      records,
      client.attendanceRecords({ ...range, updatedAfter: new Date(mid).toISOString() }),
      (r) => updated.get(r.id)! > mid,
    );
    // A named period: only sessions in the last 90 days.
    const now = Date.parse(sb.now());
    const recent = await all(client.attendanceRecords({ timePeriod: 'last-90-days', pageLength: 40 }));
    const starts = new Map(sessions.map((s) => [s.id, Date.parse(s.end)]));
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.every((r) => starts.get(r.sessionId)! > now - 91 * DAY)).toBe(true);
  });

  it('incidents: activity, department, range, concussion status, archived, updated', async () => {
    const incidents = await all(client.incidents());
    expect(ids(incidents)).toEqual(ids(sb.school.incidents));
    const i0 = incidents[0]!;
    await checkFilter(
      incidents,
      client.incidents({ activityIds: [i0.activityId] }),
      (i) => i.activityId === i0.activityId,
    );
    const dept = new Map(sb.school.activities.map((a) => [a.id, a.departmentId]));
    const d = dept.get(i0.activityId)!;
    await checkFilter(
      incidents,
      client.incidents({ departmentIds: [d] }),
      (i) => dept.get(i.activityId) === d,
    );
    await checkFilter(
      incidents,
      client.incidents({ concussionStatus: i0.concussionStatus }),
      (i) => i.concussionStatus === i0.concussionStatus,
    );
    await checkFilter(
      incidents,
      client.incidents({ archived: i0.archived }),
      (i) => i.archived === i0.archived,
    );
    const t = Date.parse(i0.dateTime);
    await checkFilter(
      incidents,
      client.incidents({
        startDateTime: new Date(t - DAY).toISOString(),
        endDateTime: new Date(t + DAY).toISOString(),
      }),
      (i) => Math.abs(Date.parse(i.dateTime) - t) <= DAY,
    );
    const updated = new Map(sb.school.incidents.map((x) => [x.id, x.updatedAt]));
    const u0 = updated.get(i0.id)!;
    await checkFilter(
      incidents,
      client.incidents({ updatedBefore: new Date(u0 + 1).toISOString() }),
      (i) => updated.get(i.id)! <= u0,
    );
  });

  it('locations (active and archived), departments, year groups, activities', async () => {
    const active = await all(client.locations());
    const archived = await all(client.locations({ archived: true }));
    const own = sb.school.locations.filter((l) => !l.association);
    expect(ids([...active, ...archived])).toEqual(ids(own));
    expect(active.every((l) => !l.archived) && archived.every((l) => l.archived)).toBe(true);
    expect(ids(await all(client.departments()))).toEqual(ids(sb.school.departments));
    expect(ids(await all(client.yearGroups()))).toEqual(ids(sb.school.yearGroups));
    const activities = await all(client.activities());
    expect(ids(activities)).toEqual(ids(sb.school.activities));
    expect(activities.every((a) => a.emoji && a.hexColor?.startsWith('#'))).toBe(true);
    const dep = activities[0]!.department!.id;
    await checkFilter(
      activities,
      client.activities({ departmentIds: [dep] }),
      (a) => a.department?.id === dep,
    );
    const { pages } = await collect(client.departments({ pageLength: 2 }));
    expect(pages.length).toBe(Math.ceil(sb.school.departments.length / 2));
  });

  it('activity selections: every filter', async () => {
    const sel = await all(client.activitySelections());
    const model = new Map(sb.school.activitySelections.map((x) => [x.id, x]));
    expect(ids(sel)).toEqual(ids(sb.school.activitySelections.filter((x) => !x.deleted)));
    const s0 = sel[0]!;
    await checkFilter(
      sel,
      client.activitySelections({ activityIds: [s0.activityId] }),
      (x) => x.activityId === s0.activityId,
    );
    const dept = new Map(sb.school.activities.map((a) => [a.id, a.departmentId]));
    const d = dept.get(s0.activityId)!;
    await checkFilter(
      sel,
      client.activitySelections({ departmentIds: [d] }),
      (x) => dept.get(x.activityId) === d,
    );
    const yg = new Map(sb.school.students.map((s) => [s.id, s.yearGroupId]));
    const y = yg.get(s0.studentId)!;
    await checkFilter(
      sel,
      client.activitySelections({ yearGroupIds: [y] }),
      (x) => yg.get(x.studentId) === y,
    );
    await checkFilter(
      sel,
      client.activitySelections({ seasonIds: [s0.seasonId] }),
      (x) => x.seasonId === s0.seasonId,
    );
    const option = sb.school.activitySelections.find((x) => !x.deleted && x.seasonActivityOptionId !== null)!
      .seasonActivityOptionId!;
    await checkFilter(
      sel,
      client.activitySelections({ seasonActivityOptionIds: [option] }),
      (x) => model.get(x.id)!.seasonActivityOptionId === option,
    );
    await checkFilter(
      sel,
      client.activitySelections({ invoiceStatus: ['paid', 'processing'] }),
      (x) => x.invoiceStatus === 'paid' || x.invoiceStatus === 'processing',
    );
    const day = s0.selectedTimestamp.slice(0, 10);
    await checkFilter(
      sel,
      client.activitySelections({ selectionDateStart: `${day}T00:00:00Z`, selectionDateEnd: day }),
      (x) => x.selectedTimestamp.slice(0, 10) === day,
    );
    const deleted = await all(client.activitySelections({ isDeleted: true }));
    expect(ids(deleted)).toEqual(ids(sb.school.activitySelections.filter((x) => x.deleted)));
  });

  it('pre-explained absences: students, explained, range, updated', async () => {
    const abs = await all(client.preExplainedAbsences());
    expect(ids(abs)).toEqual(ids(sb.school.absences));
    const a0 = abs[0]!;
    await checkFilter(
      abs,
      client.preExplainedAbsences({ studentIds: [a0.studentId] }),
      (a) => a.studentId === a0.studentId,
    );
    await checkFilter(
      abs,
      client.preExplainedAbsences({ explained: a0.explained }),
      (a) => a.explained === a0.explained,
    );
    await checkFilter(
      abs,
      client.preExplainedAbsences({ startDateTime: a0.start, endDateTime: a0.end }),
      (a) => a.start < a0.end && a.end > a0.start,
    );
    const updated = new Map(sb.school.absences.map((x) => [x.id, x.updatedAt]));
    await checkFilter(
      abs,
      client.preExplainedAbsences({ updatedBefore: new Date(updated.get(a0.id)! + 1).toISOString() }),
      (a) => updated.get(a.id)! <= updated.get(a0.id)!,
    );
  });
});

describe('errors', () => {
  it('401 for a wrong token, typed and token-free', async () => {
    const wrong = 'wrong-token-5d1f0c';
    const err = await all(clientOf({ url: sb.url, token: wrong }).departments()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(assertTokenFree(err, wrong).endpoint).toBe('GET /departments');
  });

  it('403 when the read-only token writes; reads work', async () => {
    const ro = clientOf({ url: sb.url, token: sb.readonlyToken });
    expect((await all(ro.departments())).length).toBeGreaterThan(0);
    const err = await ro.deleteAbsences([sb.school.absences[0]!.id]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    assertTokenFree(err, sb.readonlyToken);
  });

  it('400 for startDateTime without endDateTime, and for sisId with externalId', async () => {
    const err = await all(client.sessions({ startDateTime: yearStart })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).reason).toMatch(/endDateTime/);
    assertTokenFree(err, sb.token);
    const users = await client
      .createUsers({
        users: [
          {
            firstName: 'A',
            lastName: 'B',
            email: 'ab@x.example',
            userType: 'staff',
            sisId: 'S1',
            externalId: 'E1',
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(users).toBeInstanceOf(BadRequestError);
  });

  it('409 for an active user created again; 422 for external ids of an integration-synced user', async () => {
    const active = sb.school.users.find((u) => !u.frozen)!;
    const conflict = await client
      .createUsers({ users: [{ firstName: 'X', lastName: 'Y', email: active.email, userType: 'staff' }] })
      .catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(ConflictError);
    assertTokenFree(conflict, sb.token);
    const synced = sb.school.users.find((u) => u.integrationSynced);
    expect(synced).toBeDefined();
    const unprocessable = await client
      .updateUsers({ users: [{ id: synced!.id, externalId: 'CHANGED-1' }] })
      .catch((e: unknown) => e);
    expect(unprocessable).toBeInstanceOf(UnprocessableError);
    assertTokenFree(unprocessable, sb.token);
  });

  it('429 past the rate limit, 5xx from the error rate, when retries run out', async () => {
    const limited = await startSandbox({
      port: 0,
      seed: 11,
      scale: 'small',
      now: NOW,
      rateLimit: 1,
      burst: 1,
    });
    const failing = await startSandbox({ port: 0, seed: 11, scale: 'small', now: NOW, errorRate: 1 });
    try {
      const noRetry = { backoff: { maxRetries: 0 } };
      const c = clientOf(limited, noRetry);
      await all(c.departments());
      const err = await all(c.departments()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RateLimitedError);
      expect((err as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(1000);
      assertTokenFree(err, limited.token);
      const waits: number[] = [];
      const f = clientOf(failing, { backoff: { maxRetries: 3 }, sleep: async (ms) => void waits.push(ms) });
      const fault = await all(f.yearGroups()).catch((e: unknown) => e);
      expect(fault).toBeInstanceOf(ServerError);
      assertTokenFree(fault, failing.token);
      expect(waits).toEqual([1000, 2000, 4000]);
      expect(failing.stats().total).toBe(4);
    } finally {
      await limited.close();
      await failing.close();
    }
  });
});

describe('writes followed by reads', () => {
  const actor = () => sb.school.users.find((u) => !u.frozen && u.isAdmin)!.email;

  it('sessions: create (with a new location by name), update, delete', async () => {
    const team = sb.school.teams.find((t) => !t.hidden)!;
    const staff = sb.school.users
      .filter((u) => !u.frozen)
      .slice(0, 2)
      .map((u) => u.id);
    const before = sb.now();
    const created = await client.createSessions({
      email: actor(),
      sendStaffNotifications: false,
      sendStudentsAndGuardiansNotifications: false,
      reasonForChange: 'contract test',
      sessions: [
        {
          title: 'Contract practice',
          activityId: team.activityId,
          startDateTime: '2026-03-10T06:00:00.000Z',
          endDateTime: '2026-03-10T07:30:00+00:00',
          teamIds: [team.id],
          staffIds: staff,
          notes: 'internal',
          studentParentNotes: 'bring boots',
          locationName: 'Contract Test Oval',
        },
      ],
    });
    expect(created).toHaveLength(1);
    const { id, locationId } = created[0]!;
    expect(locationId).toBeGreaterThan(0);

    const { session } = await client.session(id, { includeTeams: true, includeStaff: true });
    expect(session).toMatchObject({
      id,
      title: 'Contract practice',
      start: '2026-03-10T06:00:00.000Z',
      end: '2026-03-10T07:30:00.000Z',
      notes: 'internal',
      studentParentNotes: 'bring boots',
      location: { id: locationId, name: 'Contract Test Oval' },
    });
    expect(session.teams.map((t) => t.id)).toEqual([team.id]);
    expect(session.staff.map((s) => s.id).sort()).toEqual([...staff].sort());
    const changed = await all(
      client.sessions({ startDateTime: yearStart, endDateTime: yearEnd, updatedAfter: before }),
    );
    expect(changed.map((s) => s.id)).toContain(id);
    expect((await all(client.locations())).map((l) => l.id)).toContain(locationId);

    await client.updateSessions({
      email: actor(),
      sessions: [
        {
          id,
          cancelled: true,
          title: 'Contract practice (moved)',
          location: null,
          startDateTime: '2026-03-10T07:00:00Z',
          endDateTime: '2026-03-10T08:00:00Z',
        },
      ],
    });
    const after = (await client.session(id)).session;
    expect(after).toMatchObject({
      cancelled: true,
      title: 'Contract practice (moved)',
      location: null,
      start: '2026-03-10T07:00:00.000Z',
    });

    const both = await client
      .updateSessions({
        email: actor(),
        sessions: [{ id, teamIds: [team.id], studentIds: [sb.school.students[0]!.id] }],
      })
      .catch((e: unknown) => e);
    expect(both).toBeInstanceOf(BadRequestError);

    await client.deleteSessions({ email: actor(), sessionIds: [id] });
    await expect(client.session(id)).rejects.toBeInstanceOf(NotFoundError);
    const listed = await all(client.sessions({ startDateTime: yearStart, endDateTime: yearEnd }));
    expect(listed.map((s) => s.id)).not.toContain(id);
  });

  it('users: create, deactivate, reactivate by submitting again', async () => {
    const activity = sb.school.activities[0]!.id;
    const [created] = await client.createUsers({
      users: [
        {
          firstName: 'Zoë',
          lastName: 'Ngô',
          email: 'Zoe.Ngo@School.example',
          userType: 'staff',
          departments: [],
          activities: [activity],
          externalId: 'EXT-Z',
        },
      ],
      sendInviteEmail: false,
    });
    expect(created).toMatchObject({
      firstName: 'Zoë',
      lastName: 'Ngô',
      email: 'zoe.ngo@school.example',
      externalId: 'EXT-Z',
      activated: true,
    });
    const id = created!.id;
    const listed = (await all(client.users({ activityIds: [activity] }))).find((u) => u.id === id);
    expect(listed).toMatchObject({ frozen: false, externalId: 'EXT-Z', activityIds: [activity] });

    const [deactivated] = await client.updateUsers({ users: [{ id, activated: false }] });
    expect(deactivated?.activated).toBe(false);
    expect((await all(client.users({ frozen: true }))).map((u) => u.id)).toContain(id);

    const [again] = await client.createUsers({
      users: [{ firstName: 'Zoë', lastName: 'Ngô', email: 'zoe.ngo@school.example', userType: 'staff' }],
    });
    expect(again).toMatchObject({ id, activated: true });
    expect((await all(client.users({ frozen: false }))).map((u) => u.id)).toContain(id);
  });

  it('pre-explained absences: create (reason truncated at 4096), update, delete', async () => {
    const student = sb.school.students.find((s) => s.current)!.id;
    const [created] = await client.createAbsences([
      {
        studentId: student,
        startDate: '2026-03-20T08:00:00Z',
        endDate: '2026-03-20T15:30:00.250Z',
        explained: true,
        reason: 'x'.repeat(5000),
      },
    ]);
    expect(created).toMatchObject({ studentId: student, start: '2026-03-20T08:00:00.000Z', explained: true });
    expect(created!.end).toMatch(/^2026-03-20T15:30:00\.(000|250)Z$/);
    expect(created!.reason).toHaveLength(4096);
    const id = created!.id;
    const read = (await all(client.preExplainedAbsences({ studentIds: [student] }))).find((a) => a.id === id);
    expect(read).toEqual(created);

    const [updated] = await client.updateAbsences([
      {
        id,
        studentId: student,
        startDate: '2026-03-21 08:00:00',
        endDate: '2026-03-21T12:00:00Z',
        explained: false,
        reason: 'Changed',
      },
    ]);
    expect(updated).toMatchObject({
      id,
      start: '2026-03-21T08:00:00.000Z',
      end: '2026-03-21T12:00:00.000Z',
      explained: false,
      reason: 'Changed',
    });
    await client.deleteAbsences([id]);
    expect(
      (await all(client.preExplainedAbsences({ studentIds: [student] }))).map((a) => a.id),
    ).not.toContain(id);
  });
});

describe('request counts', () => {
  it('the client counts exactly what the server saw, per endpoint', async () => {
    const fresh = clientOf(sb);
    sb.resetStats();
    await all(fresh.sessions({ startDateTime: yearStart, endDateTime: yearEnd, pageLength: 60 }));
    await all(fresh.teams({ pageLength: 2 }));
    await fresh.session(sessions[0]!.id);
    await fresh.session(1).catch(() => undefined);
    const server = sb.stats();
    const mine = fresh.stats();
    expect(fresh.totals().requests).toBe(server.total);
    for (const route of ['GET /sessions', 'GET /teams', 'GET /sessions/{id}']) {
      expect(mine[route]?.requests).toBe(server.routes[route]?.total);
    }
    expect(mine['GET /sessions/{id}']).toEqual({ requests: 2, retries: 0, throttled: 0, errors: 1 });
  });
});
