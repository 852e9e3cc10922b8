// SQLite runs each statement on the thread that answers requests, uninterrupted: a multi-row write is cut so
// that no statement carries more than SQLITE_STATEMENT_CHARS of parameters (a district's upsert of 500
// sessions held serve's loop for up to 42 ms of CPU in bench:feeds), and a rewritten record's membership rows
// are deleted a few at a time (500 pairs of a district's session_students: up to 46 ms). Statement sizes are
// countable; their time on a shared host is not, so this checks the sizes.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { StatementSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { type Row, SQLITE_STATEMENT_CHARS, sqliteRowsPerStatement } from '../../src/store/sql-context.ts';
import { session, sessionStudent } from './fixtures.ts';

/** A stored session's row as the pull writes it, its JSON `chars` long. */
function sessionRow(id: number, chars: number): Row {
  return {
    school_id: 'district',
    id,
    data: `{"id":${id},"notes":"${'x'.repeat(Math.max(0, chars - 20))}"}`,
    hash: 'h'.repeat(32),
    version: 1,
    created_at: '2026-12-07T05:00:00.000Z',
    updated_at: '2026-12-07T05:00:00.000Z',
    deleted_at: null,
    start_at: '2026-12-08T05:00:00.000Z',
    end_at: '2026-12-08T06:30:00.000Z',
    activity_id: 7,
    cancelled: 0,
  };
}

const charsOf = (row: Row) =>
  Object.values(row).reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 8), 0);

describe('rows per SQLite write statement', () => {
  it("keeps a statement of a district's sessions within the bound, however many are written", () => {
    // ~1.4 KB a session on average, 1.8 KB the largest (bench:feeds' district), and one far larger.
    for (const widest of [1_400, 1_846, 9_000]) {
      const rows = [sessionRow(1, 600), sessionRow(2, widest), sessionRow(3, 1_000)];
      const n = sqliteRowsPerStatement(rows);
      expect(n * Math.max(...rows.map(charsOf))).toBeLessThanOrEqual(SQLITE_STATEMENT_CHARS);
      // A power of two (the statement shapes stay few) and not needlessly small: twice as many would not fit.
      expect(Math.log2(n) % 1).toBe(0);
      expect(2 * n * Math.max(...rows.map(charsOf))).toBeGreaterThan(SQLITE_STATEMENT_CHARS);
    }
    expect(sqliteRowsPerStatement([sessionRow(1, 1_846)])).toBeLessThanOrEqual(64);
  });

  it('writes a row larger than the bound on its own, and small rows many at a time', () => {
    expect(sqliteRowsPerStatement([sessionRow(1, SQLITE_STATEMENT_CHARS * 2)])).toBe(1);
    const membership = { school_id: 'district', student_id: 1, session_id: 2 };
    expect(sqliteRowsPerStatement([membership])).toBeGreaterThanOrEqual(256);
  });
});

describe('membership rows deleted per SQLite statement', () => {
  it("deletes a rewritten session's students at most 128 pairs a statement, every one of them", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-statement-size-'));
    const store = await openStore({ file: path.join(dir, 'store.sqlite') });
    // Pairs in each delete statement (its one JSON list), read where node:sqlite runs it.
    const deletes: number[] = [];
    const proto = StatementSync.prototype as unknown as { run: (...args: unknown[]) => unknown };
    const run = proto.run;
    proto.run = function (this: StatementSync, ...args: unknown[]) {
      if (this.sourceSQL.startsWith('delete from "session_students"'))
        deletes.push((JSON.parse(String(args[1])) as unknown[]).length);
      return run.apply(this, args);
    };
    try {
      // 20 sessions of 60 students each (a district's session holds a team or two), then all 20 rewritten with
      // other students: their 1,200 stored pairs are deleted.
      const students = (first: number) => Array.from({ length: 60 }, (_, i) => sessionStudent(first + i));
      const sessions = (first: number) =>
        Array.from({ length: 20 }, (_, i) => session(i + 1, { students: students(first) }));
      await store.records.upsert('district', 'sessions', sessions(1_000), '2026-12-07T05:00:00.000Z');
      await store.records.upsert('district', 'sessions', sessions(2_000), '2026-12-07T06:00:00.000Z');
      expect(deletes.reduce((n, d) => n + d, 0)).toBe(1_200);
      expect(Math.max(...deletes)).toBeLessThanOrEqual(128);
      expect(await store.records.listSessions('district', { studentId: 1_000 })).toEqual([]);
      expect((await store.records.listSessions('district', { studentId: 2_000 })).length).toBe(20);
    } finally {
      proto.run = run;
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
