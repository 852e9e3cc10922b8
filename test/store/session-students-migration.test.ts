// Migration 0018: sessions stored with their students' names, SIS ids and year groups (as every store before it
// holds them) are rewritten to ids only, hashes included, so the first pull after the upgrade changes nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import type { Session } from '../../src/domain/types.ts';
import { openStore } from '../../src/store/index.ts';
import { session, sessionStudent } from './fixtures.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-0018-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 0018: session students as ids', () => {
  it('rewrites old records to what a pull now writes, so the next pull finds them unchanged', async () => {
    const file = path.join(dir, 'rostercal.sqlite');
    const now = session(7, { students: [sessionStudent(3), sessionStudent(4)] });
    // As the pull wrote it before: each listed student with names, SIS id and year group.
    const before = {
      ...now,
      students: now.students.map((s) => ({
        id: s.id,
        firstName: 'Ana',
        lastName: `Lima ${s.id}`,
        smsId: `S${s.id}`,
        yearGroup: { id: 701, name: 'Year 7' },
      })),
    } as unknown as Session;
    let store = await openStore({ file });
    await store.records.upsert('s', 'sessions', [before, session(8)], '2026-11-01T08:00:00.000Z');
    await store.close();
    // Back to the store as it was before 0018 ran.
    const raw = new DatabaseSync(file);
    raw.prepare("delete from schema_migrations where name = '0018_i16_session_students_ids_only'").run();
    raw.close();

    store = await openStore({ file });
    try {
      const migrated = await store.records.get('s', 'sessions', 7);
      expect(migrated?.students).toEqual([{ id: 3 }, { id: 4 }]);
      expect(migrated?.meta.version).toBe(0);
      const stats = await store.records.upsert(
        's',
        'sessions',
        [now, session(8)],
        '2026-11-02T08:00:00.000Z',
      );
      expect(stats).toEqual({ added: 0, changed: 0, unchanged: 2, restored: 0 });
      expect(await store.records.listSessions('s', { studentId: 4 })).toHaveLength(1);
    } finally {
      await store.close();
    }
  });
});
