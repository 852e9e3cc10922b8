// The membership rows (src/store/memberships.ts: session → teams, staff, students; team → students), reached through
// store.records on SQLite and PostgreSQL: they follow the record that owns them through every rewrite (deleted by
// key in batches, SQLite's 100 pairs a statement), a member listed twice is one row, a school's rows are its own,
// and rows a transaction writes go in at its commit or not at all, a rewrite in the same transaction included.
import { expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { describeOnEachStore, newSchool, T0, T1 } from './each-store.ts';
import { session, sessionStaff, sessionStudent, sessionTeam } from './fixtures.ts';

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
const withStudents = (id: number, students: number[], over: Parameters<typeof session>[1] = {}) =>
  session(id, { students: students.map(sessionStudent), ...over });

const ofStudent = async (store: Store, school: string, studentId: number) =>
  (await store.records.listSessions(school, { studentId })).map((s) => s.id);

describeOnEachStore('membership rows (store.records)', (store) => {
  it('follow their session through rewrites: 250 students replaced by others, staff and team changed', async () => {
    const s = newSchool();
    await store().records.upsert(
      s,
      'sessions',
      [withStudents(1, range(1, 250), { staff: [sessionStaff(40)], teams: [sessionTeam(10)] })],
      T0,
    );
    expect(await ofStudent(store(), s, 1)).toEqual([1]);
    expect(await ofStudent(store(), s, 250)).toEqual([1]);
    await store().records.upsert(
      s,
      'sessions',
      [withStudents(1, [250, 300], { staff: [sessionStaff(41)], teams: [sessionTeam(11)] })],
      T1,
    );
    for (const gone of [1, 101, 201, 249])
      expect(await ofStudent(store(), s, gone), `student ${gone}`).toEqual([]);
    expect(await ofStudent(store(), s, 250)).toEqual([1]);
    expect(await ofStudent(store(), s, 300)).toEqual([1]);
    expect((await store().records.listSessions(s, { staffId: 40 })).length).toBe(0);
    expect((await store().records.listSessions(s, { staffId: 41 })).map((x) => x.id)).toEqual([1]);
    expect((await store().records.listSessions(s, { teamIds: [10] })).length).toBe(0);
    expect((await store().records.listSessions(s, { teamIds: [11] })).map((x) => x.id)).toEqual([1]);
  });

  it('write a member listed twice once, and keep each school’s rows its own', async () => {
    const [a, b] = [newSchool(), newSchool()];
    await store().records.upsert(a, 'sessions', [withStudents(5, [7, 7, 8])], T0);
    await store().records.upsert(b, 'sessions', [withStudents(5, [7, 8])], T0);
    await store().records.upsert(a, 'sessions', [withStudents(5, [9])], T1);
    expect(await ofStudent(store(), a, 7)).toEqual([]);
    expect(await ofStudent(store(), b, 7)).toEqual([5]);
    expect(await ofStudent(store(), b, 8)).toEqual([5]);
  });

  it('go in when a transaction commits, the last rewrite in it winning; none when it rolls back', async () => {
    const s = newSchool();
    await store().transaction(async (tx) => {
      await tx.records.upsert(s, 'sessions', [withStudents(2, [1, 2]), withStudents(3, [1])], T0);
      await tx.records.upsert(s, 'sessions', [withStudents(2, [3])], T1);
    });
    expect(await ofStudent(store(), s, 1)).toEqual([3]);
    expect(await ofStudent(store(), s, 2)).toEqual([]);
    expect(await ofStudent(store(), s, 3)).toEqual([2]);

    await expect(
      store().transaction(async (tx) => {
        await tx.records.upsert(s, 'sessions', [withStudents(4, [1])], T1);
        throw new Error('the pull failed');
      }),
    ).rejects.toThrow('the pull failed');
    expect(await ofStudent(store(), s, 1)).toEqual([3]);
  });
});
