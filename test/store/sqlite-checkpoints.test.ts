// WAL checkpoints on a worker thread: the committing connection no longer copies the log into the database (the
// better part of a second after a district's pull, with the event loop blocked), the worker does; and a worker
// that cannot run leaves SQLite's own automatic checkpoints in place.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { Checkpointer } from '../../src/store/sqlite-checkpoints.ts';
import { until } from '../support/until.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function walDatabase(): Promise<{ file: string; db: DatabaseSync }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'checkpoints-test-'));
  dirs.push(dir);
  const file = path.join(dir, 'test.sqlite');
  const db = new DatabaseSync(file);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('create table t (id integer primary key, body text not null)');
  // An empty log: the worker's first checkpoint, asked for as it starts, then has nothing to copy and cannot
  // change the file's size under the test.
  db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
  return { file, db };
}

const autoCheckpoint = (db: DatabaseSync) =>
  (db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint;

/** ~6 MB in one transaction: 1,500 pages of log, past SQLite's automatic checkpoint at 1,000. */
function bigWrite(db: DatabaseSync): void {
  const insert = db.prepare('insert into t (body) values (?)');
  db.exec('BEGIN IMMEDIATE');
  for (let i = 0; i < 3_000; i++) insert.run(`${i}:`.padEnd(2_000, 'x'));
  db.exec('COMMIT');
}

describe('Checkpointer', () => {
  it('copies the log into the database on its worker, not in the committing connection', async () => {
    const { file, db } = await walDatabase();
    const checkpointer = new Checkpointer(db, file);
    checkpointer.request();
    await until('the worker', () => checkpointer.active);
    expect(autoCheckpoint(db)).toBe(0);

    const before = (await stat(file)).size;
    bigWrite(db);
    // The commit left the data in the log: the database file has not grown.
    expect((await stat(file)).size).toBe(before);
    checkpointer.request();
    await until('the checkpoint', async () => (await stat(file)).size > before + 5_000_000);

    await checkpointer.stop();
    expect(checkpointer.active).toBe(false);
    expect(autoCheckpoint(db)).toBe(1000);
    db.close();
  });

  it('leaves SQLite checkpointing for itself when its worker cannot open the database', async () => {
    const { file, db } = await walDatabase();
    // A directory where the worker expects the file: its connection fails to open.
    const checkpointer = new Checkpointer(db, path.dirname(file));
    checkpointer.request();
    // Until the worker's failure is seen (an event, not a pause that a slow machine could outlast).
    await until('the worker to fail', () => checkpointer.gone);
    expect(checkpointer.active).toBe(false);
    expect(autoCheckpoint(db)).toBe(1000);

    const before = (await stat(file)).size;
    bigWrite(db);
    expect((await stat(file)).size).toBeGreaterThan(before + 3_000_000);
    await checkpointer.stop();
    db.close();
  });
});
