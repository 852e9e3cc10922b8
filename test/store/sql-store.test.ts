// The store the repositories share (store/sql-store.ts), on real SQLite files: migrating a store that can only be
// read refuses, naming the migrations it needs and why it cannot write, and passes when none is pending; a
// transaction's writes are one (a throw leaves none); ping answers until close, which closes every connection.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import type { DB } from '../../src/store/schema.ts';
import { SqlStore } from '../../src/store/sql-store.ts';
import { NodeSqliteDialect } from '../../src/store/sqlite-dialect.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-sql-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A store on `file` read through a read-only connection, as openStore makes one where the disk refuses writes. */
function readOnlyStore(file: string): SqlStore {
  const db = new Kysely<DB>({
    dialect: new NodeSqliteDialect(`ro-test:${file}`, () => new DatabaseSync(file, { readOnly: true }), {
      readOnly: 'the disk is full',
    }),
  });
  return new SqlStore({ dialect: 'sqlite', db, readOnly: 'the disk is full' });
}

it('refuses to migrate a store it can only read, naming what it needs, and passes one already migrated', async () => {
  const empty = path.join(dir, 'empty.sqlite');
  new DatabaseSync(empty).close();
  const fresh = readOnlyStore(empty);
  await expect(fresh.migrate()).rejects.toThrow(
    /^the store can be read but not written \(the disk is full\), and it needs \d+ migration\(s\) it cannot take \(.+\): start once with it writable$/,
  );
  await fresh.close();

  const migrated = await openStore({ dataDir: dir });
  await migrated.close();
  const ready = readOnlyStore(path.join(dir, 'rostercal.sqlite'));
  expect(await ready.migrate()).toEqual([]);
  expect(ready.readOnly).toBe('the disk is full');
  await ready.close();
});

it('keeps none of a transaction’s writes when it throws, and all when it returns', async () => {
  const store = await openStore({ dataDir: dir });
  try {
    await expect(
      store.transaction(async (tx) => {
        await tx.links.startFeedRotationRecord('fp-a', '2026-11-02T08:00:00.000Z');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await store.links.getFeedRotationRecord()).toBeNull();
    expect(
      await store.transaction(async (tx) => {
        await tx.links.startFeedRotationRecord('fp-b', '2026-11-02T08:00:00.000Z');
        return 'done';
      }),
    ).toBe('done');
    expect((await store.links.getFeedRotationRecord())?.secret).toBe('fp-b');
    expect(await store.checkIntegrity()).toBeNull();
    await store.ping();
  } finally {
    await store.close();
  }
  await expect(store.ping()).rejects.toThrow();
  await expect(store.links.getFeedRotationRecord()).rejects.toThrow();
});
