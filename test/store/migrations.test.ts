// The one migration set (src/store/migrations.ts, with its later part in migrations-since-0021.ts and what they share
// in migration-kit.ts), run against real SQLite files: a new store takes every migration once in list order, a store
// that is current takes none, and a store one migration behind takes exactly that one and keeps its rows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createLeaseTable } from '../../src/store/migration-kit.ts';
import { MIGRATIONS, pendingMigrations, runMigrations } from '../../src/store/migrations.ts';
import { SINCE_0021 } from '../../src/store/migrations-since-0021.ts';
import type { DB } from '../../src/store/schema.ts';
import { NodeSqliteDialect } from '../../src/store/sqlite-dialect.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-migrations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function open(name: string): Kysely<DB> {
  const file = path.join(dir, name);
  return new Kysely<DB>({
    dialect: new NodeSqliteDialect(`migrations-test:${file}`, () => new DatabaseSync(file)),
  });
}

const names = MIGRATIONS.map((m) => m.name);
const tables = async (db: Kysely<DB>) => (await db.introspection.getTables()).map((t) => t.name).sort();

describe('migrations', () => {
  it('are named once each, the later ones appended after 0020 in the order they always ran', () => {
    expect(new Set(names).size).toBe(names.length);
    expect(names.slice(-SINCE_0021.length)).toEqual(SINCE_0021.map((m) => m.name));
    expect(names.indexOf('0020_i16_sqlite_memberships_without_rowid')).toBe(
      names.length - SINCE_0021.length - 1,
    );
    // A store applied them in this order: moving one would run it against a schema it was not written for.
    expect(SINCE_0021.map((m) => m.name.slice(0, 4))).toEqual([
      '0021',
      '0022',
      '0023',
      '0024',
      '0026',
      '0025',
      '0027',
      '0028',
      '0029',
      '0030',
    ]);
  });

  it('a new store takes every migration once; a current one takes none', async () => {
    const db = open('new.db');
    try {
      expect(await pendingMigrations(db)).toEqual(names);
      expect(await runMigrations(db, 'sqlite')).toEqual(names);
      expect(await pendingMigrations(db)).toEqual([]);
      expect(await runMigrations(db, 'sqlite')).toEqual([]);
      const made = await tables(db);
      for (const t of [
        'pull_leases',
        'push_leases',
        'family_absence_acts',
        'installation',
        'schema_migrations',
      ])
        expect(made).toContain(t);
      expect(made).not.toContain('fire_claims'); // made by 0001, dropped by 0030
      const recorded = await db.selectFrom('schema_migrations').select('name').execute();
      expect(recorded.map((r) => r.name).sort()).toEqual([...names].sort());
    } finally {
      await db.destroy();
    }
  });

  it('a store one migration behind takes exactly that one, and keeps its rows', async () => {
    const db = open('behind.db');
    try {
      await runMigrations(db, 'sqlite');
      await db
        .insertInto('pull_leases')
        .values({
          school_id: 'hill',
          owner: '',
          token: '',
          acquired_at: '2026-12-07T00:00:00.000Z',
          fence: 4,
        })
        .execute();
      // As a store left by the release before 0030: fire_claims still there, 0030 not recorded.
      await db.schema.createTable('fire_claims').addColumn('k', 'text').execute();
      await db.deleteFrom('schema_migrations').where('name', '=', '0030_i45_drop_fire_claims').execute();
      expect(await pendingMigrations(db)).toEqual(['0030_i45_drop_fire_claims']);
      expect(await runMigrations(db, 'sqlite')).toEqual(['0030_i45_drop_fire_claims']);
      expect(await tables(db)).not.toContain('fire_claims');
      const lease = await db.selectFrom('pull_leases').select(['school_id', 'fence']).execute();
      expect(lease.map((r) => ({ ...r, fence: Number(r.fence) }))).toEqual([{ school_id: 'hill', fence: 4 }]);
    } finally {
      await db.destroy();
    }
  });

  it('a lease table is keyed by what it leases: a second row for one key is refused', async () => {
    const db = open('lease.db');
    try {
      await createLeaseTable(db, 'push_leases', 'target');
      const row = { target: 'hill/teams', owner: 'a', token: 't', acquired_at: '2026-12-07T00:00:00.000Z' };
      await db.insertInto('push_leases').values(row).execute();
      await expect(
        db
          .insertInto('push_leases')
          .values({ ...row, owner: 'b' })
          .execute(),
      ).rejects.toThrow(/UNIQUE/);
    } finally {
      await db.destroy();
    }
  });
});
