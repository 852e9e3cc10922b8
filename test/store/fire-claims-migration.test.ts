// Migration 0030: `fire_claims` is dropped, on SQLite and PostgreSQL. Fires are elected by the job queue on
// PostgreSQL (store/fire-queue.ts; test/store/fire-queue.test.ts) and not at all on SQLite, so nothing reads or
// writes the table: a new store ends without it, and an older one loses it, rows and all.
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.ts';
import { DIALECTS, openTestStore, type TestStore } from '../sync/helpers.ts';

const MIGRATION = '0030_i45_drop_fire_claims';

/** Runs `statements` on the test store's database, outside the store (as an older rostercal left it); rows of the last. */
async function raw(ts: TestStore, statements: string[]): Promise<unknown[]> {
  let rows: unknown[] = [];
  if (ts.env.DATABASE_URL) {
    const client = new pg.Client({ connectionString: ts.env.DATABASE_URL });
    await client.connect();
    try {
      for (const s of statements) rows = (await client.query(s)).rows;
    } finally {
      await client.end();
    }
    return rows;
  }
  const db = new DatabaseSync(path.join(ts.env.DATA_DIR!, 'rostercal.sqlite'));
  try {
    for (const s of statements) rows = db.prepare(s).all();
  } finally {
    db.close();
  }
  return rows;
}

const TABLE_EXISTS: Record<string, string> = {
  sqlite: "select name from sqlite_master where type = 'table' and name = 'fire_claims'",
  postgres:
    "select tablename as name from pg_tables where schemaname = current_schema() and tablename = 'fire_claims'",
};

for (const dialect of DIALECTS)
  describe(`migration 0030: fire_claims dropped (${dialect})`, () => {
    let ts: TestStore;
    /** The store opened again after going back to before 0030 (cleanup closes the first one only). */
    let reopened: Store | undefined;
    beforeAll(async () => {
      ts = await openTestStore(dialect);
    });
    afterAll(async () => {
      await reopened?.close();
      await ts?.cleanup();
    });

    it('a new store has no fire_claims table', async () => {
      expect(await raw(ts, [TABLE_EXISTS[dialect]!])).toEqual([]);
    });

    it('an older store loses its fire_claims table, rows and all, and keeps the rest', async () => {
      await ts.store.records.upsertSchool({ id: 'kept', name: 'Kept', timeZone: 'UTC' });
      await ts.store.close();
      // Back to the store as 0001 made it and claimFire filled it, before 0030 ran.
      const before = await raw(ts, [
        `create table if not exists fire_claims (job text not null, fire_time text not null, owner text not null,
          claimed_at text not null, constraint fire_claims_pk primary key (job, fire_time))`,
        `insert into fire_claims values ('kept:incremental', '2026-11-01T08:00:00.000Z', 'replica-a', '2026-11-01T08:00:00.100Z')`,
        `delete from schema_migrations where name = '${MIGRATION}'`,
        TABLE_EXISTS[dialect]!,
      ]);
      expect(before).toHaveLength(1);
      reopened = await ts.reopen();
      expect(await raw(ts, [TABLE_EXISTS[dialect]!])).toEqual([]);
      expect((await reopened.records.listSchools()).map((s) => s.id)).toContain('kept');
      expect(await reopened.migrate()).toEqual([]);
    });
  });
