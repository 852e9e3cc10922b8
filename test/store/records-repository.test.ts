// The store's records (store/records-repository.ts) on SQLite and PostgreSQL: a school's subjects' version moves
// with writes to whom its calendars are of (teams, students, staff, activities), once a transaction, and not with
// sessions or absences, which move only the data version (the data version's own tests are in store/contract.ts).
import { expect, it } from 'vitest';
import { countStatements } from '../support/statements.ts';
import { describeOnEachStore, newSchool, T0, T1, T2 } from './each-store.ts';
import { absence, activity, session, student, team } from './fixtures.ts';

describeOnEachStore('SqlRecords (store.records)', (store) => {
  const versions = async (s: string) => ({
    data: await store().records.dataVersion(s),
    subjects: await store().records.subjectsVersion(s),
  });

  it("moves the subjects' version with students and activities (kinds whom calendars are of), not sessions or absences", async () => {
    const s = newSchool();
    expect(await versions(s)).toEqual({ data: 0, subjects: 0 });
    await store().records.upsert(s, 'sessions', [session(1)], T0);
    await store().records.upsert(s, 'absences', [absence(1, 7, T0, T1)], T0);
    await store().records.markDeleted(s, 'sessions', [1], T1);
    const notSubjects = await versions(s);
    expect(notSubjects.data).toBeGreaterThan(0);
    expect(notSubjects.subjects).toBe(0);

    await store().records.upsert(s, 'students', [student(7)], T0);
    const students = await versions(s);
    expect(students.subjects).toBe(1);
    expect(students.data).toBeGreaterThan(notSubjects.data);
    await store().records.upsert(s, 'activities', [activity(1, 'Football')], T0);
    expect((await versions(s)).subjects).toBe(2);
    await store().records.markDeleted(s, 'activities', [1], T1);
    expect((await versions(s)).subjects).toBe(3);
    // Unchanged, nothing moves.
    const before = await versions(s);
    await store().records.upsert(s, 'students', [student(7)], T2);
    expect(await versions(s)).toEqual(before);
    expect(await versions(newSchool())).toEqual({ data: 0, subjects: 0 });
  });

  it('moves it once for a transaction that wrote subjects among other kinds, and not for one without', async () => {
    const s = newSchool();
    await store().transaction(async (tx) => {
      await tx.records.upsert(s, 'teams', [team(1, [])], T0);
      await tx.records.upsert(s, 'sessions', [session(1)], T0);
      await tx.records.upsert(s, 'students', [student(7)], T0);
    });
    expect(await versions(s)).toEqual({ data: 1, subjects: 1 });
    await store().transaction(async (tx) => {
      await tx.records.upsert(s, 'sessions', [session(2)], T1);
      await tx.records.markDeleted(s, 'sessions', [1], T1);
    });
    expect(await versions(s)).toEqual({ data: 2, subjects: 1 });
  });

  it('sends a school it last wrote unchanged no more (every pull writes its school), and writes a change', async () => {
    const s = newSchool();
    const school = { id: s, name: 'Hillcrest', timeZone: 'Europe/London' };
    const sent = async (fn: () => Promise<unknown>) => {
      const counter = countStatements();
      let n = Number.NaN;
      try {
        await fn();
      } finally {
        n = counter.stop().total;
      }
      return n;
    };
    const named = async () => (await store().records.listSchools()).find((x) => x.id === s);
    expect(await sent(() => store().records.upsertSchool(school))).toBe(1);
    expect(await sent(() => store().records.upsertSchool(school))).toBe(0);
    expect(await sent(() => store().records.upsertSchool({ ...school, timeZone: 'UTC' }))).toBe(1);
    expect(await named()).toEqual({ ...school, timeZone: 'UTC' });
    // Written in a transaction that rolled back: not there, so written again.
    const renamed = { ...school, name: 'Renamed', timeZone: 'UTC' };
    await expect(
      store().transaction(async (tx) => {
        await tx.records.upsertSchool(renamed);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await named()).toEqual({ ...school, timeZone: 'UTC' });
    expect(await sent(() => store().records.upsertSchool(renamed))).toBe(1);
    expect(await named()).toEqual(renamed);
  });

  it("reads a pull's state in one call: every cursor of the school and the missing ids of the kinds asked", async () => {
    const [s, other] = [newSchool(), newSchool()];
    const r = store().records;
    expect(await r.pullState(s, ['sessions'])).toEqual({
      cursors: new Map(),
      missing: new Map([['sessions', new Map()]]),
    });
    await r.setCursors(
      s,
      new Map([
        ['updatedAfter:sessions', T0],
        ['rosters:sensitive', 'off'],
      ]),
    );
    await r.setCursor(other, 'updatedAfter:sessions', T2);
    await r.setMissing(s, 'sessions', [3, 1], T1);
    await r.setMissing(s, 'absences', [9], T2);
    await r.setMissing(other, 'sessions', [5], T2);
    const state = await r.pullState(s, ['sessions', 'teams']);
    expect(state.cursors).toEqual(await r.cursors(s));
    expect(state.cursors.get('rosters:sensitive')).toBe('off');
    expect(state.missing).toEqual(await r.listMissingOf(s, ['sessions', 'teams']));
    expect(state.missing.get('sessions')).toEqual(
      new Map([
        [1, T1],
        [3, T1],
      ]),
    );
    expect((await r.pullState(s, [])).missing.size).toBe(0);
  });
});
