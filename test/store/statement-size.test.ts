// SQLite runs each statement on the thread that answers requests, uninterrupted: a multi-row write is cut so
// that no statement carries more than SQLITE_STATEMENT_CHARS of parameters (a district's upsert of 500
// sessions held serve's loop for up to 42 ms of CPU in bench:feeds). Statement sizes are countable; their time on
// a shared host is not, so this checks the sizes.
import { describe, expect, it } from 'vitest';
import { type Row, SQLITE_STATEMENT_CHARS, sqliteRowsPerStatement } from '../../src/store/sql-context.ts';

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
