// The store contract, written once and run against every implementation (sqlite.test.ts, postgres.test.ts).
// Repositories with a file of their own (<name>-repository.test.ts, beside this one) run it for both dialects
// through each-store.ts.
// Tests share one database per file and isolate themselves by school id, which is also how real tenants are
// isolated; tests about migration use a database of their own.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareRecord } from '../../src/store/kinds.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import type { Store } from '../../src/store/types.ts';
import { countStatements } from '../support/statements.ts';
import {
  absence,
  activity,
  customField,
  session,
  sessionStaff,
  sessionStudent,
  sessionTeam,
  student,
  studentTeam,
  team,
} from './fixtures.ts';

export interface TestDb {
  /** Opens a store (its own connections) on this database. */
  open(opts?: { migrate?: boolean }): Promise<Store>;
  drop(): Promise<void>;
  /**
   * Resolves once a second writer of this database waits on a lock (PostgreSQL). Absent where one connection runs
   * every transaction in turn (SQLite's driver): a second writer there can only run after the first commits.
   */
  writerWaiting?(): Promise<void>;
}

const T0 = '2026-11-01T08:00:00.000Z';
const T1 = '2026-11-02T08:00:00.000Z';
const T2 = '2026-11-03T08:00:00.000Z';

const school = () => `school-${randomUUID().slice(0, 8)}`;
const ids = (records: { id: number }[]) => records.map((r) => r.id);

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

export function describeStoreContract(name: string, createDb: () => Promise<TestDb>): void {
  describe(`store contract: ${name}`, () => {
    let db: TestDb;
    let store: Store;

    beforeAll(async () => {
      db = await createDb();
      store = await db.open();
    });
    afterAll(async () => {
      await store?.close();
      await db?.drop();
    });

    it('migrate is idempotent and ping answers', async () => {
      expect(await store.migrate()).toEqual([]);
      await store.ping();
    });

    it('applies migrations once when several stores start at once', async () => {
      const fresh = await createDb();
      const stores = await Promise.all([1, 2, 3].map(() => fresh.open({ migrate: false })));
      try {
        const applied = await Promise.all(stores.map((s) => s.migrate()));
        expect(applied.flat()).toEqual(MIGRATIONS.map((m) => m.name));
        await stores[0]!.records.upsertSchool({ id: 'a', name: 'A', timeZone: 'UTC' });
        expect(await stores[2]!.records.listSchools()).toHaveLength(1);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
        await fresh.drop();
      }
    });

    it('upserts and lists schools', async () => {
      const id = school();
      await store.records.upsertSchool({ id, name: 'First name', timeZone: 'Europe/London' });
      await store.records.upsertSchool({ id, name: 'Trường Quốc tế', timeZone: 'Asia/Ho_Chi_Minh' });
      const found = (await store.records.listSchools()).filter((s) => s.id === id);
      expect(found).toEqual([{ id, name: 'Trường Quốc tế', timeZone: 'Asia/Ho_Chi_Minh' }]);
    });

    it('lists the live subjects of calendars, names and known ids only (the admins’ search)', async () => {
      const s = school();
      await store.records.upsertSchool({ id: s, name: 'S', timeZone: 'Europe/London' });
      await store.records.upsert(
        s,
        'students',
        [
          student(1, { firstName: 'Саша', lastName: 'Шевченко', legalFirstName: 'Александр', sisId: 'S1' }),
          student(2, { firstName: 'Zoë', lastName: 'Wąsowski', legalFirstName: 'Zoë' }),
          student(3, { current: false }),
        ],
        T0,
      );
      await store.records.upsert(s, 'teams', [team(10, [1, 2], { name: '13A 女子' })], T0);
      await store.records.upsert(
        s,
        'activities',
        [activity(20, 'Netball'), { ...activity(21, 'Old'), archived: true }],
        T0,
      );
      const subjects = await store.records.listCalendarSubjects(s);
      expect(subjects.sort((a, b) => a.id - b.id)).toEqual([
        {
          scope: 'student',
          id: 1,
          name: 'Саша Шевченко',
          otherNames: ['Александр Шевченко'],
          knownIds: ['S1'],
        },
        { scope: 'student', id: 2, name: 'Zoë Wąsowski', otherNames: [], knownIds: [] },
        { scope: 'team', id: 10, name: '13A 女子', otherNames: [], knownIds: [] },
        { scope: 'activity', id: 20, name: 'Netball', otherNames: [], knownIds: [] },
      ]);
    });

    it('lists a district of subjects a chunk a statement, every one once', async () => {
      const s = school();
      await store.records.upsertSchool({ id: s, name: 'S', timeZone: 'Europe/London' });
      const count = 4_500; // more than two chunks on either store (readChunk: SQLite 500, PostgreSQL 2,000)
      const students = Array.from({ length: count }, (_, i) =>
        student(i + 1, { firstName: `F${i + 1}`, lastName: 'L', legalFirstName: `F${i + 1}` }),
      );
      await store.records.upsert(s, 'students', students, T0);
      // One statement for a district's students held serve's request thread 0.3-0.5 s; between statements the
      // loop turns (store/sqlite-dialect.ts), so the read is cut into chunks.
      const counting = countStatements();
      const subjects = await store.records.listCalendarSubjects(s);
      // Statements naming firstName: the staff's one and the students' chunks (a shape is cut before its table).
      const reads = counting
        .stop()
        .shapes.filter(([shape]) => shape.includes('firstName'))
        .reduce((n, [, c]) => n + c, 0);
      const ids = subjects.map((x) => x.id);
      expect(new Set(ids).size).toBe(count);
      expect(Math.min(...ids)).toBe(1);
      expect(Math.max(...ids)).toBe(count);
      expect(reads).toBeGreaterThanOrEqual(1 + Math.ceil(count / 2_000));
    });

    describe('snapshot writes', () => {
      it('counts added, unchanged, changed and restored, and versions only on content change', async () => {
        const s = school();
        const first = [session(1), session(2), session(3)];
        expect(await store.records.upsert(s, 'sessions', first, T0)).toEqual({
          added: 3,
          changed: 0,
          unchanged: 0,
          restored: 0,
        });
        expect(await store.records.upsert(s, 'sessions', first, T1)).toEqual({
          added: 0,
          changed: 0,
          unchanged: 3,
          restored: 0,
        });
        const unchanged = await store.records.get(s, 'sessions', 2);
        expect(unchanged?.meta).toEqual({ createdAt: T0, updatedAt: T0, version: 0, deletedAt: null });

        // Same content with keys in another order is the same record.
        const reordered = Object.fromEntries(Object.entries(session(1)).reverse()) as ReturnType<
          typeof session
        >;
        const stats = await store.records.upsert(
          s,
          'sessions',
          [reordered, session(2, { title: 'Renamed' }), session(3, { cancelled: true })],
          T1,
        );
        expect(stats).toEqual({ added: 0, changed: 2, unchanged: 1, restored: 0 });
        const renamed = await store.records.get(s, 'sessions', 2);
        expect(renamed?.title).toBe('Renamed');
        expect(renamed?.meta).toEqual({ createdAt: T0, updatedAt: T1, version: 1, deletedAt: null });
        expect((await store.records.get(s, 'sessions', 1))?.meta.version).toBe(0);

        expect(await store.records.markDeleted(s, 'sessions', [3], T2)).toBe(1);
        expect(await store.records.get(s, 'sessions', 3)).toBeNull();
        const gone = await store.records.get(s, 'sessions', 3, { includeDeleted: true });
        expect(gone?.meta.deletedAt).toBe(T2);

        // Back unchanged: restored, same version. Back changed: restored, next version.
        expect(await store.records.upsert(s, 'sessions', [session(3, { cancelled: true })], T2)).toEqual({
          added: 0,
          changed: 0,
          unchanged: 0,
          restored: 1,
        });
        const back = await store.records.get(s, 'sessions', 3);
        expect(back?.meta).toMatchObject({ version: 1, deletedAt: null, createdAt: T0 });
        await store.records.markDeleted(s, 'sessions', [3], T2);
        await store.records.upsert(s, 'sessions', [session(3, { title: 'Again' })], T2);
        expect((await store.records.get(s, 'sessions', 3))?.meta).toMatchObject({
          version: 2,
          deletedAt: null,
        });
      });

      it('writes a repeated id once, last occurrence winning', async () => {
        const s = school();
        const stats = await store.records.upsert(
          s,
          'sessions',
          [session(1), session(1, { title: 'Later' })],
          T0,
        );
        expect(stats.added).toBe(1);
        expect((await store.records.get(s, 'sessions', 1))?.title).toBe('Later');
      });

      it('writes every row of batches of any size, memberships included (full statements, then the rest)', async () => {
        const s = school();
        // 1,237 sessions: two full statements of 500 and 237 left (128 + 64 + 32 + 8 + 4 + 1 on SQLite); each
        // with 3 students, 3,711 membership rows.
        const many = Array.from({ length: 1_237 }, (_, i) =>
          session(i + 1, {
            students: [sessionStudent(1), sessionStudent(2 + (i % 5)), sessionStudent(100 + i)],
          }),
        );
        expect((await store.records.upsert(s, 'sessions', many, T0)).added).toBe(1_237);
        expect((await store.records.liveIds(s, 'sessions')).length).toBe(1_237);
        expect((await store.records.listSessions(s, { studentId: 1 })).length).toBe(1_237);
        expect(ids(await store.records.listSessions(s, { studentId: 1_336 }))).toEqual([1_237]);
        expect((await store.records.listSessions(s, { studentId: 4 })).length).toBe(247);
      });

      it('reads every live record of a kind across its read chunks (2,000 rows a statement), in id order', async () => {
        // The pull's reads of a kind's live ids and hashes go by id in chunks, so a district's sessions never
        // hold the loop in one statement. 4,321 sessions: two full chunks and a part; every 7th deleted; the
        // ids inserted in no order; two in three in the window asked for (more than a chunk of them).
        const s = school();
        const idsInserted = Array.from({ length: 4_321 }, (_, i) => ((i * 2_731) % 4_321) + 1);
        const inWindow = (id: number) => id % 3 !== 0;
        const many = idsInserted.map((id) =>
          session(
            id,
            inWindow(id) ? {} : { start: '2027-03-01T15:00:00.000Z', end: '2027-03-01T16:00:00.000Z' },
          ),
        );
        await store.records.upsert(s, 'sessions', many, T0);
        const gone = idsInserted.filter((id) => id % 7 === 0);
        expect(await store.records.markDeleted(s, 'sessions', gone, T1)).toBe(gone.length);
        const live = Array.from({ length: 4_321 }, (_, i) => i + 1).filter((id) => id % 7 !== 0);

        expect(await store.records.liveIds(s, 'sessions')).toEqual(live);
        const window = { from: '2026-11-30T00:00:00.000Z', to: '2026-12-31T00:00:00.000Z' };
        const liveInWindow = live.filter(inWindow);
        expect(liveInWindow.length).toBeGreaterThan(2_000);
        expect(await store.records.liveIds(s, 'sessions', window)).toEqual(liveInWindow);
        const hashes = await store.records.liveHashes(s, 'sessions');
        expect([...hashes.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(live);
        expect(hashes.get(1)).toBe(prepareRecord('sessions', many.find((x) => x.id === 1)!).hash);

        // Text keys (custom fields) across chunks too, in the store's text order: '10' before '9'.
        const keys = Array.from({ length: 2_345 }, (_, i) => String(2_345 - i));
        await store.records.upsert(
          s,
          'customFields',
          keys.map((k) => customField(k, `Field ${k}`)),
          T0,
        );
        const sorted = [...keys].sort();
        expect(await store.records.liveIds(s, 'customFields')).toEqual(sorted);
        expect([...(await store.records.liveHashes(s, 'customFields')).keys()].sort()).toEqual(sorted);
      });

      it('keeps every character of text as written, in new and in rewritten records', async () => {
        // PostgreSQL writes new records by COPY, whose text format gives backslash, tab, newline, carriage
        // return and \\N meanings of their own; rewritten ones by INSERT. Both must store exactly what came.
        const s = school();
        const awkward = 'a\\b\tc\nd\re \\N \\\\N "q" \\t 🏑 مرحبا\u0007 end\\';
        const key = 'kit\\\t\\N';
        await store.records.upsert(s, 'sessions', [session(1, { title: awkward, notes: '\\N' })], T0);
        await store.records.upsert(s, 'customFields', [customField(key, awkward)], T0);
        expect(await store.records.get(s, 'sessions', 1)).toMatchObject({ title: awkward, notes: '\\N' });
        expect((await store.records.get(s, 'customFields', key))?.label).toBe(awkward);
        expect(await store.records.liveIds(s, 'customFields')).toEqual([key]);

        await store.records.upsert(s, 'sessions', [session(1, { title: `${awkward}!`, notes: '\\N' })], T1);
        expect((await store.records.get(s, 'sessions', 1))?.title).toBe(`${awkward}!`);
      });

      it('keeps every kind, keyed by id (custom fields by key), hidden once deleted', async () => {
        const s = school();
        await store.records.upsert(s, 'teams', [team(10, [1, 2])], T0);
        await store.records.upsert(s, 'students', [student(1), student(2, { yearGroupId: 7 })], T0);
        await store.records.upsert(s, 'activities', [activity(1, 'Football'), activity(2, 'Chess')], T0);
        await store.records.upsert(s, 'studentTeams', [studentTeam(100, 1, 10)], T0);
        await store.records.upsert(
          s,
          'customFields',
          [customField('kit', 'Kit'), customField('bus', 'Bus time')],
          T0,
        );
        await store.records.upsert(s, 'yearGroups', [{ id: 7, name: 'Year 7', archived: false }], T0);
        await store.records.upsert(s, 'departments', [{ id: 3, name: 'Sport' }], T0);
        await store.records.upsert(
          s,
          'locations',
          [{ id: 4, name: 'Field', address: null, latitude: 51.5, longitude: -0.12, archived: false }],
          T0,
        );
        await store.records.upsert(
          s,
          'staff',
          [
            {
              id: 40,
              firstName: 'Ana',
              lastName: 'Coach',
              email: 'ana@example.org',
              mobileNumber: null,
              isAdmin: false,
              isManager: true,
              frozen: false,
              sisId: null,
              externalId: null,
              secondaryExternalId: null,
              activityIds: [1],
              departmentIds: [3],
            },
          ],
          T0,
        );

        expect((await store.records.get(s, 'teams', 10))?.students.map((m) => m.studentId)).toEqual([1, 2]);
        expect((await store.records.get(s, 'students', '2'))?.yearGroupId).toBe(7);
        expect((await store.records.list(s, 'activities')).map((a) => a.name)).toEqual(['Football', 'Chess']);
        expect((await store.records.get(s, 'customFields', 'bus'))?.label).toBe('Bus time');
        expect(await store.records.liveIds(s, 'customFields')).toEqual(['bus', 'kit']);
        expect((await store.records.get(s, 'locations', 4))?.latitude).toBe(51.5);
        expect((await store.records.get(s, 'staff', 40))?.activityIds).toEqual([1]);
        expect((await store.records.get(s, 'studentTeams', 100))?.end).toBeNull();
        expect(await store.records.get(s, 'departments', 3)).toMatchObject({
          name: 'Sport',
          meta: { version: 0 },
        });
        expect(await store.records.get(s, 'yearGroups', 'not-a-number')).toBeNull();
        expect(await store.records.get(school(), 'teams', 10)).toBeNull();

        await store.records.markDeleted(s, 'activities', [2], T1);
        expect(await store.records.liveIds(s, 'activities')).toEqual([1]);
        expect((await store.records.list(s, 'activities')).map((a) => a.id)).toEqual([1]);
        const all = await store.records.list(s, 'activities', { includeDeleted: true });
        expect(all.map((a) => [a.id, a.meta.deletedAt])).toEqual([
          [1, null],
          [2, T1],
        ]);
      });

      it('marks deleted once and filters live ids by window', async () => {
        const s = school();
        await store.records.upsert(
          s,
          'sessions',
          [
            session(1, { start: '2026-12-01T10:00:00.000Z', end: '2026-12-01T11:00:00.000Z' }),
            session(2, { start: '2026-12-05T10:00:00.000Z', end: '2026-12-05T11:00:00.000Z' }),
            session(3, { start: '2027-02-01T10:00:00.000Z', end: '2027-02-01T11:00:00.000Z' }),
          ],
          T0,
        );
        const window = { from: '2026-12-01T10:30:00.000Z', to: '2027-01-01T00:00:00.000Z' };
        expect(await store.records.liveIds(s, 'sessions', window)).toEqual([1, 2]);
        expect(await store.records.markDeleted(s, 'sessions', [2, 2, 99], T1)).toBe(1);
        expect(await store.records.markDeleted(s, 'sessions', [2], T2)).toBe(0);
        expect((await store.records.get(s, 'sessions', 2, { includeDeleted: true }))?.meta.deletedAt).toBe(
          T1,
        );
        expect(await store.records.liveIds(s, 'sessions', window)).toEqual([1]);
        expect(await store.records.liveIds(s, 'sessions')).toEqual([1, 3]);
        expect(await store.records.markDeleted(s, 'sessions', [], T2)).toBe(0);

        await store.records.upsert(
          s,
          'absences',
          [
            absence(1, 5, '2026-12-01T00:00:00.000Z', '2026-12-02T00:00:00.000Z'),
            absence(2, 5, '2027-03-01T00:00:00.000Z', '2027-03-02T00:00:00.000Z'),
          ],
          T0,
        );
        expect(await store.records.liveIds(s, 'absences', window)).toEqual([1]);
      });

      it('bumps the data version on add, change, delete and restore only, per school', async () => {
        const s = school();
        const other = school();
        expect(await store.records.dataVersion(s)).toBe(0);
        await store.records.upsert(s, 'teams', [team(1, [])], T0);
        const v1 = await store.records.dataVersion(s);
        expect(v1).toBeGreaterThan(0);
        await store.records.upsert(s, 'teams', [team(1, [])], T1);
        await store.records.upsert(s, 'teams', [], T1);
        await store.records.markDeleted(s, 'teams', [42], T1);
        expect(await store.records.dataVersion(s)).toBe(v1);
        await store.records.upsert(s, 'teams', [team(1, [7])], T1);
        const v2 = await store.records.dataVersion(s);
        expect(v2).toBeGreaterThan(v1);
        await store.records.markDeleted(s, 'teams', [1], T2);
        const v3 = await store.records.dataVersion(s);
        expect(v3).toBeGreaterThan(v2);
        await store.records.upsert(s, 'teams', [team(1, [7])], T2);
        expect(await store.records.dataVersion(s)).toBeGreaterThan(v3);
        expect(await store.records.dataVersion(other)).toBe(0);
      });

      it('round-trips unicode names and free text', async () => {
        const s = school();
        const names = [
          { firstName: 'Nguyễn Thị', lastName: 'Hồng Ánh' },
          { firstName: '王', lastName: '小明' },
          { firstName: 'محمد', lastName: 'العبدالله' },
          { firstName: 'Zoë 👩🏽‍🎓', lastName: 'O\'Brien\n"quoted"\\' },
        ];
        await store.records.upsert(
          s,
          'students',
          names.map((n, i) => student(i + 1, n)),
          T0,
        );
        await store.records.upsert(
          s,
          'sessions',
          [session(1, { title: 'Bóng đá — 足球 — كرة القدم', notes: '€ ✓' })],
          T0,
        );
        expect(
          (await store.records.list(s, 'students')).map((r) => ({
            firstName: r.firstName,
            lastName: r.lastName,
          })),
        ).toEqual(names);
        expect(await store.records.get(s, 'sessions', 1)).toMatchObject({
          title: 'Bóng đá — 足球 — كرة القدم',
          notes: '€ ✓',
        });
        expect(
          await store.records.upsert(
            s,
            'students',
            names.map((n, i) => student(i + 1, n)),
            T1,
          ),
        ).toMatchObject({
          unchanged: 4,
        });
      });

      it('rejects an invalid instant with a clear error', async () => {
        await expect(
          store.records.upsert(school(), 'sessions', [session(1, { start: 'soon' })], T0),
        ).rejects.toThrow(/invalid instant/);
      });
    });

    describe('snapshot queries', () => {
      const s = school();
      beforeAll(async () => {
        // Teams 10 (students 1, 2) and 11 (student 3); team 12 deleted later (student 1).
        await store.records.upsert(s, 'teams', [team(10, [1, 2]), team(11, [3]), team(12, [1])], T0);
        await store.records.upsert(
          s,
          'sessions',
          [
            session(1, {
              start: '2026-12-01T10:00:00.000Z',
              end: '2026-12-01T11:00:00.000Z',
              teams: [sessionTeam(10)],
              staff: [sessionStaff(40)],
            }),
            session(2, {
              start: '2026-12-02T10:00:00.000Z',
              end: '2026-12-02T11:00:00.000Z',
              teams: [sessionTeam(11)],
              staff: [sessionStaff(40), sessionStaff(41)],
              activity: { id: 2, name: 'Chess', department: null, hexColor: null },
            }),
            // Student 3 listed directly, no team of theirs.
            session(3, {
              start: '2026-12-03T10:00:00.000Z',
              end: '2026-12-03T11:00:00.000Z',
              students: [sessionStudent(3)],
            }),
            session(4, {
              start: '2026-12-04T10:00:00.000Z',
              end: '2026-12-04T11:00:00.000Z',
              teams: [sessionTeam(10), sessionTeam(11), sessionTeam(10)],
            }),
            session(5, {
              start: '2026-12-05T10:00:00.000Z',
              end: '2026-12-05T11:00:00.000Z',
              teams: [sessionTeam(12)],
            }),
          ],
          T0,
        );
        await store.records.markDeleted(s, 'teams', [12], T1);
      });

      it('filters by team, staff and activity, in start order', async () => {
        expect(ids(await store.records.listSessions(s, {}))).toEqual([1, 2, 3, 4, 5]);
        expect(ids(await store.records.listSessions(s, { teamIds: [10] }))).toEqual([1, 4]);
        expect(ids(await store.records.listSessions(s, { teamIds: [10, 11] }))).toEqual([1, 2, 4]);
        expect(ids(await store.records.listSessions(s, { teamIds: [] }))).toEqual([]);
        expect(ids(await store.records.listSessions(s, { staffId: 40 }))).toEqual([1, 2]);
        expect(ids(await store.records.listSessions(s, { staffId: 41 }))).toEqual([2]);
        expect(ids(await store.records.listSessions(s, { activityIds: [2] }))).toEqual([2]);
        expect(ids(await store.records.listSessions(s, { activityIds: [1], teamIds: [11] }))).toEqual([4]);
        expect(ids(await store.records.listSessions(school(), { teamIds: [10] }))).toEqual([]);
      });

      it('filters by window: sessions intersecting [from, to)', async () => {
        const q = { from: '2026-12-02T10:30:00.000Z', to: '2026-12-04T10:00:00.000Z' };
        expect(ids(await store.records.listSessions(s, q))).toEqual([2, 3]);
        expect(ids(await store.records.listSessions(s, { from: '2026-12-04T11:00:00.000Z' }))).toEqual([5]);
        expect(ids(await store.records.listSessions(s, { to: '2026-12-01T10:00:00.001Z' }))).toEqual([1]);
        // Accepts an instant without milliseconds or in another offset.
        expect(ids(await store.records.listSessions(s, { from: '2026-12-05T11:30:00+01:00' }))).toEqual([5]);
      });

      it("finds a student's sessions: current live teams plus sessions listing them", async () => {
        expect(ids(await store.records.listSessions(s, { studentId: 1 }))).toEqual([1, 4]);
        expect(ids(await store.records.listSessions(s, { studentId: 3 }))).toEqual([2, 3, 4]);
        expect(ids(await store.records.listSessions(s, { studentId: 3, staffId: 40 }))).toEqual([2]);
        expect(ids(await store.records.listSessions(s, { studentId: 99 }))).toEqual([]);
      });

      it('follows team membership changes and deleted sessions', async () => {
        const t = school();
        await store.records.upsert(t, 'teams', [team(10, [1, 2])], T0);
        await store.records.upsert(t, 'sessions', [session(1, { teams: [sessionTeam(10)] }), session(2)], T0);
        expect(ids(await store.records.listSessions(t, { studentId: 2 }))).toEqual([1]);
        // Student 2 leaves the team.
        await store.records.upsert(t, 'teams', [team(10, [1])], T1);
        expect(ids(await store.records.listSessions(t, { studentId: 2 }))).toEqual([]);
        expect(ids(await store.records.listSessions(t, { studentId: 1 }))).toEqual([1]);
        // The session moves to no team, then is deleted.
        await store.records.upsert(t, 'sessions', [session(1)], T1);
        expect(ids(await store.records.listSessions(t, { teamIds: [10] }))).toEqual([]);
        await store.records.upsert(t, 'sessions', [session(1, { teams: [sessionTeam(10)] })], T1);
        await store.records.markDeleted(t, 'sessions', [1], T2);
        expect(ids(await store.records.listSessions(t, { teamIds: [10] }))).toEqual([]);
        const withDeleted = await store.records.listSessions(t, { teamIds: [10], includeDeleted: true });
        expect(withDeleted.map((r) => [r.id, r.meta.deletedAt])).toEqual([[1, T2]]);
      });

      it("replaces exactly a rewritten record's memberships, in bulk and on restore, leaving the rest", async () => {
        const t = school();
        // 1,200 sessions of 10 students each (12,000 rows of session_students); then 700 of them rewritten in one
        // call with other students, staff and teams, the rest untouched.
        const before = (i: number) =>
          session(i, {
            students: Array.from({ length: 10 }, (_, k) => sessionStudent(1 + ((i + k) % 50))),
            staff: [sessionStaff(500 + (i % 3))],
            teams: [sessionTeam(900 + (i % 4))],
          });
        const after = (i: number) =>
          session(i, {
            title: 'Rewritten',
            students: [sessionStudent(1_000 + i), sessionStudent(1 + (i % 50))],
            staff: [sessionStaff(600)],
            teams: [],
          });
        const all = Array.from({ length: 1_200 }, (_, i) => i + 1);
        await store.records.upsert(t, 'sessions', all.map(before), T0);
        const moved = all.filter((i) => i % 12 < 7);
        expect((await store.records.upsert(t, 'sessions', moved.map(after), T1)).changed).toBe(moved.length);
        const expected = (i: number) => (moved.includes(i) ? after(i) : before(i));
        // Every membership as each session now lists it, and nothing else.
        for (const studentId of [1, 7, 50, 1_001, 1_012, 1_200]) {
          const want = all.filter((i) => expected(i).students.some((x) => x.id === studentId));
          expect(ids(await store.records.listSessions(t, { studentId })), `student ${studentId}`).toEqual(
            want,
          );
        }
        for (const staffId of [500, 502, 600]) {
          const want = all.filter((i) => expected(i).staff.some((x) => x.id === staffId));
          expect(ids(await store.records.listSessions(t, { staffId })), `staff ${staffId}`).toEqual(want);
        }
        const teamWant = all.filter((i) => expected(i).teams.some((x) => x.id === 901));
        expect(ids(await store.records.listSessions(t, { teamIds: [901] }))).toEqual(teamWant);
        // Deleted, then restored with other members: only the restored record's own rows count.
        await store.records.markDeleted(t, 'sessions', [2], T2);
        await store.records.upsert(t, 'sessions', [session(2, { students: [sessionStudent(4_000)] })], T2);
        expect(ids(await store.records.listSessions(t, { studentId: 4_000 }))).toEqual([2]);
        expect(ids(await store.records.listSessions(t, { studentId: 1_002 }))).toEqual([]);
        expect(ids(await store.records.listSessions(t, { staffId: 600 }))).not.toContain(2);
      });

      it('writes a resource in chunks inside one transaction with every membership exact, seen inside it', async () => {
        // Membership rows wait for the end of the transaction (membership-buffer.ts); a chunk that rewrites a
        // record of an earlier chunk, a read inside the transaction and ids too large to wait must all see the
        // rows as if written at once, and a rollback must leave none.
        const t = school();
        const big = 2 ** 33;
        const first = [1, 2, 3].map((i) =>
          session(i, { students: [sessionStudent(10 + i), sessionStudent(7)] }),
        );
        await store.transaction(async (tx) => {
          await tx.records.upsert(t, 'sessions', first, T0);
          await tx.records.upsert(
            t,
            'sessions',
            [
              session(2, { title: 'Moved', students: [sessionStudent(20)] }),
              session(4, { students: [sessionStudent(7), sessionStudent(2 ** 22)] }),
              session(big, { students: [sessionStudent(7)], staff: [sessionStaff(3)] }),
            ],
            T0,
          );
          expect(ids(await tx.records.listSessions(t, { studentId: 7 }))).toEqual([1, 3, 4, big]);
          await tx.records.upsert(t, 'sessions', [session(6, { students: [sessionStudent(7)] })], T0);
          expect(ids(await tx.records.listSessions(t, { studentId: 7 }))).toEqual([1, 3, 4, 6, big]);
        });
        expect(ids(await store.records.listSessions(t, { studentId: 7 }))).toEqual([1, 3, 4, 6, big]);
        expect(ids(await store.records.listSessions(t, { studentId: 12 }))).toEqual([]);
        expect(ids(await store.records.listSessions(t, { studentId: 20 }))).toEqual([2]);
        expect(ids(await store.records.listSessions(t, { studentId: 2 ** 22 }))).toEqual([4]);
        expect(ids(await store.records.listSessions(t, { staffId: 3 }))).toEqual([big]);

        const failed = store.transaction(async (tx) => {
          await tx.records.upsert(t, 'sessions', [session(5, { students: [sessionStudent(7)] })], T1);
          throw new Error('stop');
        });
        await expect(failed).rejects.toThrow('stop');
        expect(ids(await store.records.listSessions(t, { studentId: 7 }))).toEqual([1, 3, 4, 6, big]);
      });

      it('lists absences by student and window', async () => {
        const a = school();
        await store.records.upsert(
          a,
          'absences',
          [
            absence(1, 5, '2026-12-01T00:00:00.000Z', '2026-12-02T00:00:00.000Z'),
            absence(2, 6, '2026-12-01T12:00:00.000Z', '2026-12-01T13:00:00.000Z'),
            absence(3, 5, '2026-12-10T00:00:00.000Z', '2026-12-11T00:00:00.000Z'),
          ],
          T0,
        );
        expect(ids(await store.records.listAbsences(a, {}))).toEqual([1, 2, 3]);
        expect(ids(await store.records.listAbsences(a, { studentIds: [5] }))).toEqual([1, 3]);
        expect(ids(await store.records.listAbsences(a, { studentIds: [] }))).toEqual([]);
        expect(
          ids(
            await store.records.listAbsences(a, {
              from: '2026-12-01T13:00:00.000Z',
              to: '2026-12-10T00:00:00.000Z',
            }),
          ),
        ).toEqual([1]);
        expect(
          ids(await store.records.listAbsences(a, { studentIds: [6], from: '2026-12-01T12:59:00.000Z' })),
        ).toEqual([2]);
        await store.records.markDeleted(a, 'absences', [1], T1);
        expect(ids(await store.records.listAbsences(a, { studentIds: [5] }))).toEqual([3]);
      });
    });

    describe('transactions', () => {
      it('keeps nothing when the function throws', async () => {
        const s = school();
        await store.records.upsert(s, 'teams', [team(1, [1])], T0);
        const before = await store.records.dataVersion(s);
        await expect(
          store.transaction(async (tx) => {
            await tx.records.upsert(s, 'teams', [team(1, [1, 2]), team(2, [])], T1);
            await tx.records.markDeleted(s, 'teams', [1], T1);
            await tx.records.setCursor(s, 'teams', T1);
            // Calls on the outer store join the open transaction too.
            await store.records.upsert(s, 'students', [student(1)], T1);
            expect(await tx.records.liveIds(s, 'teams')).toEqual([2]);
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await store.records.liveIds(s, 'teams')).toEqual([1]);
        expect((await store.records.get(s, 'teams', 1))?.students).toHaveLength(1);
        expect(await store.records.list(s, 'students')).toEqual([]);
        expect(await store.records.getCursor(s, 'teams')).toBeNull();
        expect(await store.records.dataVersion(s)).toBe(before);
        expect(ids(await store.records.listSessions(s, { studentId: 2 }))).toEqual([]);
      });

      it('spans every repository: all of it is kept, or none', async () => {
        // Each repository is its own object over the one database: a transaction opened on the store must take
        // in what every one of them writes, through `tx` or through the store itself.
        const s = school();
        const write = async (tx: Store, n: number) => {
          await tx.records.upsert(s, 'teams', [team(n, [])], T1);
          await tx.runs.startRun({ schoolId: s, kind: 'full', at: T1 });
          await store.runs.requestFullPull(s, T1, 'test');
          await tx.feeds.saveFeedEventVersions(
            s,
            'team',
            n,
            new Map([[n, { hash: 'h', sequence: 0, lastModified: T1 }]]),
          );
          await tx.links.saveFeedToken({
            schoolId: s,
            scope: 'team',
            scopeId: n,
            tokenHash: `${s}-span-${n}`,
            version: 1,
            createdAt: T1,
            revokedAt: null,
          });
          await store.push.savePushCalendar({
            schoolId: s,
            target: 'google',
            calendarKey: `team:${n}`,
            remoteCalendarId: 'r',
            pausedUntil: null,
            lastReconciledAt: null,
          });
          await tx.access.appendAudit({
            at: T1,
            action: 'feed-rotate',
            actor: 'admin token',
            schoolId: s,
            teamId: n,
            sessionId: null,
            template: null,
            clientAddress: null,
            staffSession: null,
            detail: null,
          });
        };
        const kept = async (n: number) => [
          (await store.records.liveIds(s, 'teams')).includes(n),
          (await store.runs.listRuns(s)).length > 0,
          (await store.runs.fullPullRequest(s)) !== null,
          (await store.feeds.getFeedEventVersions(s, 'team', n)).size > 0,
          (await store.links.findFeedTokenByHash(`${s}-span-${n}`)) !== null,
          (await store.push.listPushCalendars(s, 'google')).some((c) => c.calendarKey === `team:${n}`),
          (await store.access.listAudit({ schoolId: s })).some((a) => a.teamId === n),
        ];
        await expect(
          store.transaction(async (tx) => {
            await write(tx, 1);
            throw new Error('boom');
          }),
        ).rejects.toThrow('boom');
        expect(await kept(1)).toEqual([false, false, false, false, false, false, false]);
        await store.transaction((tx) => write(tx, 2));
        expect(await kept(2)).toEqual([true, true, true, true, true, true, true]);
      });

      it("keeps the writes left for its commit (cursors, the run's progress, the data version) with it, or none", async () => {
        const s = school();
        const runId = await store.runs.startRun({ schoolId: s, kind: 'full', at: T0 });
        await store.records.setCursor(s, 'sessions', T0);
        const progress = (n: number) => ({
          counts: { teams: { added: n, changed: 0, unchanged: 0, deleted: 0, skipped: 0 } },
          upstreamRequests: n,
          retries: 0,
          throttled: 0,
        });
        const writes = { writes: { schoolId: s, kinds: ['teams'] as const } };
        const write = async (tx: Store, n: number) => {
          await tx.records.upsert(s, 'teams', [team(n, [])], T1);
          await tx.records.setCursors(s, new Map([['sessions', T1]]), { atCommit: true });
          await tx.runs.recordRunProgress(runId, progress(n), { atCommit: true });
        };
        await expect(
          store.transaction(async (tx) => {
            await write(tx, 1);
            // Not written yet: read back inside the transaction, the cursor is as it was.
            expect(await tx.records.getCursor(s, 'sessions')).toBe(T0);
            throw new Error('boom');
          }, writes),
        ).rejects.toThrow('boom');
        const kept = async () => ({
          cursor: await store.records.getCursor(s, 'sessions'),
          requests: (await store.runs.listRuns(s))[0]!.upstreamRequests,
          version: await store.records.dataVersion(s),
          teams: await store.records.liveIds(s, 'teams'),
        });
        expect(await kept()).toEqual({ cursor: T0, requests: 0, version: 0, teams: [] });
        await store.transaction((tx) => write(tx, 2), writes);
        expect(await kept()).toEqual({ cursor: T1, requests: 2, version: 1, teams: [2] });
      });

      it('nested transactions join the outer one and commit with it', async () => {
        const s = school();
        const result = await store.transaction(async (tx) => {
          await tx.records.upsert(s, 'teams', [team(1, [])], T0);
          return tx.transaction(async (inner) => {
            await inner.records.upsert(s, 'teams', [team(2, [])], T0);
            return 'done';
          });
        });
        expect(result).toBe('done');
        expect(await store.records.liveIds(s, 'teams')).toEqual([1, 2]);

        await expect(
          store.transaction(async (tx) => {
            await tx.records.upsert(s, 'teams', [team(3, [])], T0);
            await tx.transaction(async () => {
              throw new Error('inner');
            });
          }),
        ).rejects.toThrow('inner');
        expect(await store.records.liveIds(s, 'teams')).toEqual([1, 2]);
      });

      it('hides uncommitted writes from other callers and serialises concurrent transactions', async () => {
        const s = school();
        const started = deferred();
        const release = deferred();
        const tx1 = store.transaction(async (tx) => {
          await tx.records.upsert(s, 'teams', [team(1, [])], T0);
          started.resolve();
          await release.promise;
        });
        await started.promise;
        expect(await store.records.liveIds(s, 'teams')).toEqual([]);
        const tx2 = store.transaction(async (tx) => {
          const seen = await tx.records.liveIds(s, 'teams');
          await tx.records.upsert(s, 'teams', [team(2, [])], T0);
          return seen;
        });
        release.resolve();
        await tx1;
        // On SQLite tx2 starts after tx1 (one writer); on PostgreSQL it reads committed data at its own pace.
        const seen = await tx2;
        expect(seen.every((id) => id === 1)).toBe(true);
        expect(await store.records.liveIds(s, 'teams')).toEqual([1, 2]);
      });
    });

    // A pull's transaction names the kinds it writes, whose locks PostgreSQL's BEGIN then takes (pg-begin-locks.ts).
    it.each([
      ['its lock as it first writes the kind', false],
      ['its lock taken by its BEGIN', true],
    ])(
      'two overlapping writers of the same new records both succeed, each membership kept once (%s)',
      async (_, atBegin) => {
        // Two pulls of one school overlapping (a lease taken over from a stalled replica): both read "not stored
        // yet" unless writers of a kind are serialised; the second then sees the first's rows and rewrites them.
        const s = school();
        const opts = atBegin ? { writes: { schoolId: s, kinds: ['sessions'] as const } } : undefined;
        const first = [
          session(1, { students: [sessionStudent(3), sessionStudent(4)], teams: [sessionTeam(10)] }),
        ];
        const second = [
          session(1, { title: 'Moved', students: [sessionStudent(3)], teams: [sessionTeam(10)] }),
        ];
        const started = deferred();
        const release = deferred();
        const tx1 = store.transaction(async (tx) => {
          await tx.records.upsert(s, 'sessions', first, T0);
          started.resolve();
          await release.promise;
        }, opts);
        await started.promise;
        const tx2 = store.transaction((tx) => tx.records.upsert(s, 'sessions', second, T1), opts);
        // The second writer reaches the store before the first commits: seen waiting on the lock, not after a pause.
        await db.writerWaiting?.();
        release.resolve();
        await tx1;
        expect(await tx2).toMatchObject({ changed: 1, added: 0 });
        expect((await store.records.get(s, 'sessions', 1))?.title).toBe('Moved');
        expect(ids(await store.records.listSessions(s, { studentId: 3 }))).toEqual([1]);
        expect(ids(await store.records.listSessions(s, { studentId: 4 }))).toEqual([]);
        expect(ids(await store.records.listSessions(s, { teamIds: [10] }))).toEqual([1]);
      },
    );

    describe('sync runs, cursors and job status', () => {
      it('keeps cursors per school and key', async () => {
        const s = school();
        expect(await store.records.getCursor(s, 'sessions')).toBeNull();
        await store.records.setCursor(s, 'sessions', T0);
        await store.records.setCursor(s, 'sessions', T1);
        await store.records.setCursor(s, 'teams', T2);
        expect(await store.records.getCursor(s, 'sessions')).toBe(T1);
        expect(await store.records.getCursor(s, 'teams')).toBe(T2);
        expect(await store.records.getCursor(school(), 'sessions')).toBeNull();
      });

      it('reads every cursor of a school at once and sets several in one go', async () => {
        const s = school();
        expect(await store.records.cursors(s)).toEqual(new Map());
        await store.records.setCursor(s, 'sessions', T0);
        await store.records.setCursor(school(), 'elsewhere', T0);
        await store.records.setCursors(
          s,
          new Map([
            ['sessions', T1],
            ['teams', T2],
          ]),
        );
        await store.records.setCursors(s, new Map());
        expect(await store.records.cursors(s)).toEqual(
          new Map([
            ['sessions', T1],
            ['teams', T2],
          ]),
        );
      });

      it('keeps one status per school and job', async () => {
        const s = school();
        const base = {
          schoolId: s,
          job: 'incremental',
          lastStartedAt: T0,
          lastFinishedAt: null,
          lastStatus: 'running' as const,
          lastError: null,
          nextRunAt: T1,
        };
        await store.runs.saveJobStatus(base);
        await store.runs.saveJobStatus({ ...base, job: 'full', nextRunAt: T2 });
        await store.runs.saveJobStatus({
          ...base,
          lastFinishedAt: T1,
          lastStatus: 'failed',
          lastError: 'HTTP 503',
        });
        const derived = { owner: null, lastSkippedAt: null, lastSkipReason: null };
        expect(await store.runs.listJobStatus(s)).toEqual([
          // Started and not finished, by no known process: it cannot be told interrupted.
          { ...base, ...derived, job: 'full', nextRunAt: T2, state: 'running' },
          {
            ...base,
            ...derived,
            lastFinishedAt: T1,
            lastStatus: 'failed',
            lastError: 'HTTP 503',
            state: null,
          },
        ]);
        expect((await store.runs.listJobStatus()).filter((j) => j.schoolId === s)).toHaveLength(2);
        // Instants come back in the one canonical form whatever offset they were given in.
        await store.runs.saveJobStatus({ ...base, job: 'push', nextRunAt: '2026-11-02T09:00:00+01:00' });
        expect((await store.runs.listJobStatus(s)).find((j) => j.job === 'push')?.nextRunAt).toBe(T1);

        // A save writes only what it is given: a skip recorded by one replica leaves another's run as it was.
        await store.runs.saveJobStatus({
          schoolId: s,
          job: 'full',
          lastSkippedAt: T1,
          lastSkipReason: 'busy',
        });
        expect((await store.runs.listJobStatus(s)).find((j) => j.job === 'full')).toMatchObject({
          lastStartedAt: T0,
          nextRunAt: T2,
          lastSkippedAt: T1,
          lastSkipReason: 'busy',
        });
        // A run started by a process that beats is running; once it stops beating, interrupted.
        const owner = { id: `${s}-replica:1:abc`, host: 'elsewhere', pid: 1, startedAt: T0 };
        await store.runs.beat(owner, new Date().toISOString());
        await store.runs.saveJobStatus({ schoolId: s, job: 'full', lastStartedAt: T2, owner: owner.id });
        const stateOf = async () => (await store.runs.listJobStatus(s)).find((j) => j.job === 'full')?.state;
        expect(await stateOf()).toBe('running');
        await store.runs.forgetOwner(owner.id);
        expect(await stateOf()).toBe('interrupted');
      });

      it('remembers which records a listing left out, until told otherwise', async () => {
        const s = school();
        expect(await store.records.listMissing(s, 'sessions')).toEqual(new Map());
        await store.records.setMissing(s, 'sessions', [3, 1, 2], T0);
        await store.records.setMissing(s, 'students', [1], T0);
        await store.records.setMissing(s, 'sessions', [2, 3, 4], T1);
        expect(await store.records.listMissing(s, 'sessions')).toEqual(
          new Map([
            [2, T0],
            [3, T0],
            [4, T1],
          ]),
        );
        expect(await store.records.listMissing(s, 'students')).toEqual(new Map([[1, T0]]));
        expect(await store.records.listMissingOf(s, ['students', 'sessions', 'teams'])).toEqual(
          new Map([
            ['students', new Map([[1, T0]])],
            [
              'sessions',
              new Map([
                [2, T0],
                [3, T0],
                [4, T1],
              ]),
            ],
            ['teams', new Map()],
          ]),
        );
        expect(await store.records.listMissingOf(school(), ['students'])).toEqual(
          new Map([['students', new Map()]]),
        );
        await store.records.setMissing(s, 'sessions', [], T2);
        expect(await store.records.listMissing(s, 'sessions')).toEqual(new Map());
      });
    });
  });
}
