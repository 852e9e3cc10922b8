// Migrations 0019 and 0020 on SQLite: a store whose membership tables are rowid tables with an owner index (as
// every store before them) keeps every membership row through the rebuild, and rewrites them correctly after.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { session, sessionStaff, sessionStudent, sessionTeam, team } from './fixtures.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-0020-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TABLES = [
  ['session_teams', 'session_id', 'team_id'],
  ['session_staff', 'session_id', 'staff_id'],
  ['session_students', 'session_id', 'student_id'],
  ['team_students', 'team_id', 'student_id'],
] as const;

const ids = (rows: { id: number }[]) => rows.map((r) => r.id);

describe('migrations 0019 and 0020: membership tables without an owner index, without rowid', () => {
  it('keep every membership row of an older store, and rewrite them correctly after', async () => {
    const file = path.join(dir, 'rostercal.sqlite');
    let store = await openStore({ file });
    await store.records.upsert('s', 'teams', [team(10, [1, 2]), team(11, [2])], '2026-11-01T08:00:00.000Z');
    await store.records.upsert(
      's',
      'sessions',
      Array.from({ length: 300 }, (_, i) =>
        session(i + 1, {
          students: [sessionStudent(100 + (i % 7)), sessionStudent(200 + i)],
          staff: [sessionStaff(40 + (i % 2))],
          teams: [sessionTeam(10 + (i % 2))],
        }),
      ),
      '2026-11-01T08:00:00.000Z',
    );
    await store.close();

    // Back to the tables as they were before 0019: rowid tables with an owner index, the same rows.
    const raw = new DatabaseSync(file);
    for (const [table, owner, member] of TABLES) {
      raw.exec(`create table old_${table} (school_id text not null, ${owner} bigint not null, ${member} bigint not null,
        constraint ${table}_pk primary key (school_id, ${member}, ${owner}))`);
      raw.exec(`insert into old_${table} select school_id, ${owner}, ${member} from ${table}`);
      raw.exec(`drop table ${table}`);
      raw.exec(`alter table old_${table} rename to ${table}`);
      raw.exec(`create index ${table}_owner on ${table} (school_id, ${owner})`);
    }
    raw.exec("delete from schema_migrations where name like '0019_%' or name like '0020_%'");
    raw.close();

    store = await openStore({ file });
    try {
      const all = Array.from({ length: 300 }, (_, i) => i + 1);
      expect(ids(await store.records.listSessions('s', { studentId: 103 }))).toEqual(
        all.filter((id) => (id - 1) % 7 === 3),
      );
      expect(ids(await store.records.listSessions('s', { studentId: 250 }))).toEqual([51]);
      expect((await store.records.listSessions('s', { staffId: 41 })).length).toBe(150);
      expect((await store.records.listSessions('s', { teamIds: [11] })).length).toBe(150);
      // Student 2 is in both teams: all 300 sessions through them.
      expect((await store.records.listSessions('s', { studentId: 2 })).length).toBe(300);

      await store.records.upsert(
        's',
        'sessions',
        [session(51, { students: [sessionStudent(999)] })],
        '2026-11-02T08:00:00.000Z',
      );
      expect(ids(await store.records.listSessions('s', { studentId: 250 }))).toEqual([]);
      expect(ids(await store.records.listSessions('s', { studentId: 999 }))).toEqual([51]);
      expect(ids(await store.records.listSessions('s', { staffId: 40 }))).not.toContain(51);
    } finally {
      await store.close();
    }

    const check = new DatabaseSync(file, { readOnly: true });
    try {
      for (const [table] of TABLES) {
        const { sql } = check.prepare('select sql from sqlite_master where name = ?').get(table) as {
          sql: string;
        };
        expect(sql.toLowerCase(), table).toContain('without rowid');
        expect(
          check.prepare('select name from sqlite_master where name = ?').get(`${table}_owner`),
        ).toBeUndefined();
      }
      // 300 sessions × 2 students, one of session 51's replaced by one; 2 + 1 team members; one staff member and
      // one team per session, none for session 51 now.
      const count = (t: string) => (check.prepare(`select count(*) as n from ${t}`).get() as { n: number }).n;
      expect([
        count('session_students'),
        count('team_students'),
        count('session_staff'),
        count('session_teams'),
      ]).toEqual([599, 3, 299, 299]);
    } finally {
      check.close();
    }
  });
});
