// An online copy of the SQLite store (store/sqlite-backup.ts), on a real store file: the copy holds what was
// committed, even while another connection holds a write transaction open, and never the rotation record row (a
// backup must not vouch for the feed secret on its own); a missing store or an existing destination is refused.
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { backupSqlite } from '../../src/store/sqlite-backup.ts';
import type { Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';

const T = '2026-11-02T08:00:00.000Z';
let ts: TestStore;
let store: Store;
let dir: string;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
  store = ts.store;
  dir = ts.env.DATA_DIR!;
  await store.links.startFeedRotationRecord('fp-live', T);
  await store.links.addFeedRotations([{ school: 'north', scope: 'team', id: 1, version: 2, at: T }]);
});
afterAll(() => ts?.cleanup());

it('copies what was committed while a write is open, without the rotation record row', async () => {
  const file = path.join(dir, 'rostercal.sqlite');
  const writer = new DatabaseSync(file);
  writer.exec(
    "BEGIN IMMEDIATE; DELETE FROM feed_rotations; UPDATE feed_rotation_record SET secret = 'uncommitted'",
  );
  const dest = path.join(dir, 'copy', 'rostercal.sqlite');
  mkdirSync(path.dirname(dest));
  try {
    backupSqlite(file, dest);
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
  const copy = await openStore({ file: dest });
  try {
    expect(await copy.links.getFeedRotationRecord()).toBeNull();
    expect(await copy.links.listFeedRotations()).toEqual([
      { school: 'north', scope: 'team', id: 1, version: 2, at: T },
    ]);
  } finally {
    await copy.close();
  }
  // The original keeps its record.
  expect((await store.links.getFeedRotationRecord())?.secret).toBe('fp-live');
});

it('refuses a missing store and an existing destination', () => {
  expect(() => backupSqlite(path.join(dir, 'none.sqlite'), path.join(dir, 'x.sqlite'))).toThrow(
    `no store at ${path.join(dir, 'none.sqlite')}`,
  );
  expect(existsSync(path.join(dir, 'x.sqlite'))).toBe(false);
  const file = path.join(dir, 'rostercal.sqlite');
  expect(() => backupSqlite(file, file)).toThrow();
});
