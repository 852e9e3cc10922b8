import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { all, call, get, type Json } from './helpers.ts';

const NOW = '2026-03-02T01:00:00.000Z';
let sb: Sandbox;
let actor: string;

beforeAll(async () => {
  sb = await startSandbox({ seed: 11, now: NOW });
  actor = sb.school.users.find((u) => !u.frozen)!.email;
});
afterAll(async () => {
  await sb.close();
});

const err = (r: { json: Json }) => (r.json.error as Json).message as string;

describe('sessions writes', () => {
  it('POST creates sessions, a new locationName creates a location, and reads see them', async () => {
    const activity = sb.school.activities[0]!;
    const team = sb.school.teams.find((t) => t.activityId === activity.id)!;
    const before = (await get(sb, '/locations')).pagination.numRecords;
    const r = await call(sb, 'POST', '/sessions', {
      email: actor,
      sendStaffNotifications: false,
      sendStudentsAndGuardiansNotifications: false,
      reasonForChange: 'extra training',
      sessions: [
        {
          title: 'Extra training — Zoë’s idea',
          activityId: activity.id,
          startDateTime: '2026-03-04 05:00:00',
          endDateTime: '2026-03-04 06:30:00',
          teamIds: [team.id],
          staffIds: [sb.school.users[0]!.id],
          notes: 'internal',
          studentParentNotes: 'bring boots',
          locationName: 'Pop-up Field Ω',
        },
        {
          title: 'Trials',
          activityId: activity.id,
          startDateTime: '2026-03-05T05:00:00Z',
          endDateTime: '2026-03-05T06:00:00Z',
          studentIds: [sb.school.students[0]!.id],
          locationName: 'pop-up field ω',
        },
      ],
    });
    expect(r.status).toBe(200);
    const created = r.json.createdSessions as { id: number; locationId?: number }[];
    expect(created).toHaveLength(2);
    expect(created[0]!.locationId).toBeTypeOf('number');
    expect(created[1]!.locationId).toBeUndefined(); // matched the location just created, case-insensitively
    expect((await get(sb, '/locations')).pagination.numRecords).toBe(before + 1);

    const one = await call(sb, 'GET', `/sessions/${created[0]!.id}?includeTeams=true&includeStaff=true`);
    const data = one.json.data as Json;
    expect(data.title).toBe('Extra training — Zoë’s idea');
    expect(data.startDateTime).toBe('2026-03-04T05:00:00.000Z');
    expect((data.locationData as Json).id).toBe(created[0]!.locationId);
    expect((data.teams as Json[]).map((t) => t.id)).toEqual([team.id]);
    expect((data.students as Json[]).length).toBeGreaterThan(0);
    const trial = (await call(sb, 'GET', `/sessions/${created[1]!.id}?includeTeams=true`)).json.data as Json;
    expect((trial.students as Json[]).map((s) => s.id)).toEqual([sb.school.students[0]!.id]);

    const listed = await all(sb, '/sessions', { pageLength: 1000, teamId: team.id });
    expect(listed.map((s) => s.id)).toContain(created[0]!.id);
  });

  it('POST rejects teamIds with studentIds, locationId with locationName, unknown references, and an unknown actor', async () => {
    const a = sb.school.activities[0]!.id;
    const base = {
      title: 'x',
      activityId: a,
      startDateTime: '2026-03-04T05:00:00Z',
      endDateTime: '2026-03-04T06:00:00Z',
    };
    const both = await call(sb, 'POST', '/sessions', {
      email: actor,
      sessions: [{ ...base, teamIds: [sb.school.teams[0]!.id], studentIds: [sb.school.students[0]!.id] }],
    });
    expect(both.status).toBe(400);
    expect(err(both)).toMatch(/teamIds cannot be combined with studentIds/);
    const loc = await call(sb, 'POST', '/sessions', {
      email: actor,
      sessions: [{ ...base, locationId: 401, locationName: 'Somewhere' }],
    });
    expect(loc.status).toBe(400);
    expect(
      (await call(sb, 'POST', '/sessions', { email: actor, sessions: [{ ...base, activityId: 1 }] })).status,
    ).toBe(422);
    expect(
      (await call(sb, 'POST', '/sessions', { email: actor, sessions: [{ ...base, teamIds: [1] }] })).status,
    ).toBe(422);
    expect(
      (await call(sb, 'POST', '/sessions', { email: 'nobody@example.com', sessions: [base] })).status,
    ).toBe(422);
    expect(
      (await call(sb, 'POST', '/sessions', { email: actor, sessions: [{ ...base, title: undefined }] }))
        .status,
    ).toBe(400);
    expect((await call(sb, 'POST', '/sessions', '{not json')).status).toBe(400);
  });

  it('the read-only token cannot write (403) and nothing changes', async () => {
    const count = sb.school.sessions.length;
    const r = await call(
      sb,
      'POST',
      '/sessions',
      {
        email: actor,
        sessions: [{ title: 'x', activityId: 101, startDateTime: NOW, endDateTime: '2026-03-02T02:00:00Z' }],
      },
      sb.readonlyToken,
    );
    expect(r.status).toBe(403);
    expect(sb.school.sessions.length).toBe(count);
  });

  it('PATCH updates, stamps updated time for updatedAfter; 404 for a missing id; DELETE removes from lists', async () => {
    const now = Date.parse(NOW);
    const target = sb.school.sessions.find(
      (s) => s.start > now && s.start < now + 7 * 86400000 && !s.cancelled,
    )!;
    const mark = new Date(Date.parse(sb.now()) - 1).toISOString();
    const before = await all(sb, '/sessions', { pageLength: 1000, updatedAfter: mark });
    expect(before.map((s) => s.id)).not.toContain(target.id);

    const r = await call(sb, 'PATCH', '/sessions', {
      email: actor,
      sessions: [{ id: target.id, cancelled: true, title: 'Moved — see notes', location: null }],
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({});
    const after = await all(sb, '/sessions', { pageLength: 1000, updatedAfter: mark });
    const changed = after.find((s) => s.id === target.id)!;
    expect(changed).toMatchObject({ cancelled: true, title: 'Moved — see notes', locationData: null });
    const notAfter = await all(sb, '/sessions', { pageLength: 1000, updatedBefore: mark });
    expect(notAfter.map((s) => s.id)).not.toContain(target.id);

    const missing = await call(sb, 'PATCH', '/sessions', {
      email: actor,
      sessions: [{ id: 42, title: 'x' }],
    });
    expect(missing.status).toBe(404);
    const mixed = await call(sb, 'PATCH', '/sessions', {
      email: actor,
      sessions: [
        { id: target.id, teamIds: [sb.school.teams[0]!.id], studentIds: [sb.school.students[0]!.id] },
      ],
    });
    expect(mixed.status).toBe(400);

    expect(
      (await call(sb, 'DELETE', '/sessions', { email: actor, sessionIds: [target.id, 42] })).status,
    ).toBe(404);
    expect((await call(sb, 'GET', `/sessions/${target.id}`)).status).toBe(200); // a rejected batch changes nothing
    expect((await call(sb, 'DELETE', '/sessions', { email: actor, sessionIds: [target.id] })).status).toBe(
      200,
    );
    expect((await call(sb, 'GET', `/sessions/${target.id}`)).status).toBe(404);
    const listed = await all(sb, '/sessions', { pageLength: 1000 });
    expect(listed.map((s) => s.id)).not.toContain(target.id);
  });

  it('a write is visible at once to a listing just served (no stale cache)', async () => {
    const params = { pageLength: 1000, includeTeams: true, includeStaff: true };
    const first = await all(sb, '/sessions', params);
    const target = first[3]!;
    const staff = sb.school.users.find((u) => u.id === ((target.assignedStaff as Json[])[0]?.id ?? -1));
    await call(sb, 'PATCH', '/sessions', {
      email: actor,
      sessions: [{ id: target.id, title: 'Renamed: Ünïcode ✓' }],
    });
    const second = await all(sb, '/sessions', params);
    expect(second.find((s) => s.id === target.id)!.title).toBe('Renamed: Ünïcode ✓');
    if (staff) {
      await call(sb, 'PATCH', '/users', { users: [{ id: staff.id, lastName: 'Nguyễn-Smith' }] });
      const third = await all(sb, '/sessions', params);
      const names = (third.find((s) => s.id === target.id)!.assignedStaff as Json[]).map((u) => u.lastName);
      expect(names).toContain('Nguyễn-Smith');
    }
  });
});

describe('users writes', () => {
  it('POST creates; sisId alone also fills secondaryExternalId; e-mail lower-cased', async () => {
    const r = await call(sb, 'POST', '/users', {
      sendInviteEmail: true,
      users: [
        {
          sisId: 'LEG-1',
          firstName: 'Søren',
          lastName: 'Ångström',
          email: 'Soren.Angstrom@Hillcrest.example.edu',
          userType: 'staff',
          departments: [],
          activities: [sb.school.activities[0]!.id],
          payrollId: 'P-9',
          mobileNumber: null,
          payment: 'ts',
        },
      ],
    });
    expect(r.status).toBe(200);
    const u = (r.json.users as Json[])[0]!;
    expect(u).toMatchObject({
      sisId: 'LEG-1',
      secondaryExternalId: 'LEG-1',
      externalId: null,
      email: 'soren.angstrom@hillcrest.example.edu',
      userType: 'staff',
      activated: true,
      payment: 'ts',
    });
    const listed = await all(sb, '/users', { frozen: false });
    expect(listed.find((x) => x.id === u.id)).toMatchObject({ firstName: 'Søren', frozen: false });
    const again = await call(sb, 'POST', '/users', {
      users: [
        { firstName: 'A', lastName: 'B', email: 'soren.angstrom@hillcrest.example.edu', userType: 'staff' },
      ],
    });
    expect(again.status).toBe(409);
  });

  it('sisId with externalId or secondaryExternalId is a 400', async () => {
    const base = { firstName: 'A', lastName: 'B', email: 'ab@hillcrest.example.edu', userType: 'staff' };
    expect(
      (await call(sb, 'POST', '/users', { users: [{ ...base, sisId: 'x', externalId: 'y' }] })).status,
    ).toBe(400);
    expect(
      (await call(sb, 'POST', '/users', { users: [{ ...base, sisId: 'x', secondaryExternalId: 'y' }] }))
        .status,
    ).toBe(400);
    const someone = sb.school.users[1]!.id;
    expect(
      (await call(sb, 'PATCH', '/users', { users: [{ id: someone, sisId: 'x', externalId: 'y' }] })).status,
    ).toBe(400);
  });

  it('POST of a deactivated user reactivates it; PATCH deactivates and reactivates; 404 and 422', async () => {
    const frozen = sb.school.users.find((u) => u.frozen) ?? sb.school.users[sb.school.users.length - 1]!;
    if (!frozen.frozen) {
      const off = await call(sb, 'PATCH', '/users', { users: [{ id: frozen.id, activated: false }] });
      expect(off.status).toBe(200);
      expect((off.json.users as Json[])[0]).toMatchObject({ id: frozen.id, activated: false });
    }
    const frozenList = await all(sb, '/users', { frozen: true });
    expect(frozenList.map((u) => u.id)).toContain(frozen.id);
    const r = await call(sb, 'POST', '/users', {
      users: [
        {
          firstName: frozen.firstName,
          lastName: frozen.lastName,
          email: frozen.email.toUpperCase(),
          userType: 'staff',
        },
      ],
    });
    expect(r.status).toBe(200);
    expect((r.json.users as Json[])[0]).toMatchObject({ id: frozen.id, activated: true });
    expect((await all(sb, '/users', { frozen: true })).map((u) => u.id)).not.toContain(frozen.id);

    expect((await call(sb, 'PATCH', '/users', { users: [{ id: 1, firstName: 'x' }] })).status).toBe(404);
    const synced = sb.school.users.find((u) => u.integrationSynced)!;
    const locked = await call(sb, 'PATCH', '/users', { users: [{ id: synced.id, externalId: 'changed' }] });
    expect(locked.status).toBe(422);
    const renamed = await call(sb, 'PATCH', '/users', { users: [{ id: synced.id, firstName: 'Renée' }] });
    expect(renamed.status).toBe(200);
  });

  it('PATCH answers in the service order, not the request order', async () => {
    const [a, b] = [sb.school.users[2]!, sb.school.users[3]!];
    const r = await call(sb, 'PATCH', '/users', {
      users: [{ id: b.id, mobileNumber: '0400000001' }, { id: a.id }],
    });
    expect((r.json.users as Json[]).map((u) => u.id)).toEqual([a.id, b.id]);
  });
});

describe('pre-explained absences writes', () => {
  it('POST truncates reason at 4096, PATCH changes, updatedAfter sees it, DELETE removes', async () => {
    const student = sb.school.students.find((s) => s.current)!;
    const mark = new Date(Date.parse(sb.now()) - 1).toISOString();
    const r = await call(sb, 'POST', '/pre-explained-absences', {
      preExplainedAbsences: [
        {
          studentId: student.id,
          startDate: '2026-03-10 08:00:00',
          endDate: '2026-03-10T15:00:00.000Z',
          explained: true,
          reason: 'é'.repeat(5000),
        },
      ],
    });
    expect(r.status).toBe(200);
    const created = (r.json.data as Json[])[0]!;
    expect(created).toMatchObject({
      studentId: student.id,
      startDate: '2026-03-10 08:00:00',
      endDate: '2026-03-10T15:00:00.000Z',
      explained: true,
    });
    expect((created.reason as string).length).toBe(4096);
    const id = created.id as number;

    const seen = await all(sb, '/pre-explained-absences', { updatedAfter: mark });
    expect(seen.map((a) => a.id)).toEqual([id]);

    const p = await call(sb, 'PATCH', '/pre-explained-absences', {
      preExplainedAbsences: [{ id, explained: false, reason: 'Dentist' }],
    });
    expect(p.status).toBe(200);
    expect((p.json.data as Json[])[0]).toMatchObject({ id, explained: false, reason: 'Dentist' });
    const unexplained = await all(sb, '/pre-explained-absences', {
      explained: false,
      studentIds: [student.id],
    });
    expect(unexplained.map((a) => a.id)).toContain(id);

    expect(
      (await call(sb, 'PATCH', '/pre-explained-absences', { preExplainedAbsences: [{ id: 1, reason: 'x' }] }))
        .status,
    ).toBe(404);
    expect(
      (
        await call(sb, 'POST', '/pre-explained-absences', {
          preExplainedAbsences: [
            { studentId: 1, startDate: NOW, endDate: NOW, explained: true, reason: 'x' },
          ],
        })
      ).status,
    ).toBe(422);
    expect((await call(sb, 'DELETE', '/pre-explained-absences', { ids: [id] })).status).toBe(200);
    expect((await call(sb, 'DELETE', '/pre-explained-absences', { ids: [id] })).status).toBe(404);
    const gone = await all(sb, '/pre-explained-absences', { studentIds: [student.id] });
    expect(gone.map((a) => a.id)).not.toContain(id);
  });
});
