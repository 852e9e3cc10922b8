// A PostgreSQL store's dump and restore by pg_dump and pg_restore (src/store/pg-backup.ts), against real databases
// on TEST_DATABASE_URL's server (its tools must be of the server's major version: vitest.config.ts runs this file
// only there). What it decides: the copy holds the snapshot and the rotations but never the record's row (a backup
// must not vouch for the secret alone); a restore is all or nothing; the password reaches neither a command line
// nor an error; a missing tool is named.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { dumpPostgres, postgresTables, restorePostgres } from '../../src/store/pg-backup.ts';
import type { FeedRotationRow, Store } from '../../src/store/types.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { T0, T1 } from './each-store.ts';
import { session } from './fixtures.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'rostercal-pgdump-'));
const dbs: TestDatabase[] = [];
const database = async () => {
  const db = await createTestDatabase();
  dbs.push(db);
  return db;
};
const rotated: FeedRotationRow = { school: 's1', scope: 'team', id: 12, version: 2, at: T1 };
let source: TestDatabase;
const dump = path.join(dir, 'rostercal.pgdump');

/** The database URL with a password in it: the test server trusts local connections and ignores it. */
const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.username ||= 'postgres';
  u.password = password;
  return u.toString();
};

async function onStore<T>(url: string, fn: (s: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ databaseUrl: url, poolSize: 2, migrate: false });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

beforeAll(async () => {
  source = await database();
  const store = await openStore({ databaseUrl: source.url, poolSize: 2 });
  try {
    await store.records.upsert('s1', 'sessions', [session(1), session(2, { title: 'Away match' })], T0);
    await store.links.startFeedRotationRecord('fingerprint-of-the-secret', T0);
    await store.links.addFeedRotations([rotated]);
  } finally {
    await store.close();
  }
  await dumpPostgres(withPassword(source.url, 'pw-never-shown'), dump);
});
afterAll(async () => {
  for (const db of dbs) await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('dumpPostgres and restorePostgres', () => {
  it('round-trips the snapshot and the rotations, but not the rotation record', async () => {
    const target = await database();
    expect(await postgresTables(target.url)).toBe(0);
    await restorePostgres(target.url, dump);
    expect(await postgresTables(target.url)).toBe(await postgresTables(source.url));
    await onStore(target.url, async (s) => {
      expect((await s.records.list('s1', 'sessions')).map((r) => [r.id, r.title])).toEqual([
        [1, 'Session 1'],
        [2, 'Away match'],
      ]);
      expect(await s.links.listFeedRotations()).toEqual([rotated]);
      expect(await s.links.getFeedRotationRecord()).toBeNull();
    });
  });

  it('restores all or nothing: into a database that already holds a store table, nothing is added', async () => {
    const target = await database();
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      await client.query('create table sessions (id int)');
    } finally {
      await client.end();
    }
    await expect(restorePostgres(target.url, dump)).rejects.toThrow(/^pg_restore failed: .*already exists/s);
    expect(await postgresTables(target.url)).toBe(1);
  });

  it('keeps the password out of errors, and the URL too', async () => {
    const gone = new URL(source.url);
    gone.pathname = '/rostercal_no_such_database';
    const url = withPassword(gone.toString(), 'hunter2-pw');
    const err = (await dumpPostgres(url, path.join(dir, 'never.pgdump')).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/^pg_dump failed: .*does not exist/);
    expect(err.message).not.toContain('hunter2');
    expect(err.message).not.toContain('postgres://');
    const restore = (await restorePostgres(url, dump).catch((e: Error) => e)) as Error;
    expect(restore.message).toMatch(/^pg_restore failed: /);
    expect(restore.message).not.toContain('hunter2');
  });

  it('names a tool that is not installed', async () => {
    const path0 = process.env.PATH;
    process.env.PATH = dir;
    try {
      await expect(dumpPostgres(source.url, path.join(dir, 'never.pgdump'))).rejects.toThrow(
        'pg_dump is not installed (or not on PATH): install the PostgreSQL client tools',
      );
    } finally {
      process.env.PATH = path0;
    }
  });
});
