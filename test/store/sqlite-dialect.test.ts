// The Kysely dialect for node:sqlite (store/sqlite-dialect.ts), on real SQLite files: one holder of a file's
// connection at a time (a caller's statements never run inside another caller's transaction), one connection per
// file shared by the stores of a process and closed with the last, a write lock held by another connection waited
// out without blocking the event loop, values bound as SQLite takes them, and a read-only store's refusal saying why.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { type Generated, Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeSqliteDialect } from '../../src/store/sqlite-dialect.ts';

interface DB {
  t: { id: Generated<number>; v: string | null; flag: number | null; at: string | null };
}

let dir: string;
let file: string;
const opened: Kysely<DB>[] = [];
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'rostercal-dialect-'));
  file = path.join(dir, 'db.sqlite');
  const setup = new DatabaseSync(file);
  setup.exec(
    'PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, flag INTEGER, at TEXT)',
  );
  setup.close();
});
afterEach(async () => {
  for (const db of opened.splice(0)) await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

function open(opts: { key?: string; readOnly?: string } = {}): Kysely<DB> {
  const db = new Kysely<DB>({
    dialect: new NodeSqliteDialect(
      opts.key ?? file,
      () => new DatabaseSync(file, { readOnly: opts.readOnly !== undefined, timeout: 0 }),
      opts.readOnly ? { readOnly: opts.readOnly } : {},
    ),
  });
  opened.push(db);
  return db;
}

const values = async (db: Kysely<DB>) =>
  (await db.selectFrom('t').select('v').orderBy('id').execute()).map((r) => r.v);

describe('NodeSqliteDialect', () => {
  it('never runs a store’s statement inside another store’s transaction on the same file', async () => {
    // Kysely serialises the callers of one instance; the stores of a process share the file's one connection.
    const db = open();
    const other = open();
    const failed = other.transaction().execute(async (tx) => {
      await tx.insertInto('t').values({ v: 'in the failed transaction' }).execute();
      await new Promise((r) => setTimeout(r, 30));
      throw new Error('rolled back');
    });
    // Issued while the transaction is open: it waits for the connection, and so survives the rollback.
    await new Promise((r) => setTimeout(r, 5));
    const alone = db.insertInto('t').values({ v: 'on its own' }).execute();
    await expect(failed).rejects.toThrow('rolled back');
    await alone;
    expect(await values(db)).toEqual(['on its own']);
    // Two transactions at once: the second begins once the first has ended.
    const slow = other.transaction().execute(async (tx) => {
      await tx.insertInto('t').values({ v: 'slow' }).execute();
      await new Promise((r) => setTimeout(r, 20));
    });
    const quick = db.transaction().execute((tx) => tx.insertInto('t').values({ v: 'quick' }).execute());
    await Promise.all([slow, quick]);
    expect(await values(db)).toEqual(['on its own', 'slow', 'quick']);
  });

  it('shares one connection per file among the stores of a process, closed with the last of them', async () => {
    const a = open();
    const b = open();
    await a.insertInto('t').values({ v: 'a' }).execute();
    await a.destroy();
    await expect(a.selectFrom('t').selectAll().execute()).rejects.toThrow();
    expect(await values(b)).toEqual(['a']);
    await b.destroy();
    const c = open();
    expect(await values(c)).toEqual(['a']);
  });

  it('waits out another connection’s write lock, the event loop turning meanwhile', async () => {
    const db = open();
    await db.insertInto('t').values({ v: 'first' }).execute();
    const other = new DatabaseSync(file);
    other.exec("BEGIN IMMEDIATE; INSERT INTO t (v) VALUES ('other')");
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const write = db.transaction().execute((tx) => tx.insertInto('t').values({ v: 'after' }).execute());
    await new Promise((r) => setTimeout(r, 150));
    other.exec('COMMIT');
    other.close();
    await write;
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(5);
    expect(await values(db)).toEqual(['first', 'other', 'after']);
  });

  it('takes the write lock at BEGIN, so another process’s write waits rather than breaking a transaction', async () => {
    const db = open();
    const other = new DatabaseSync(file, { timeout: 0 });
    await db.transaction().execute(async (tx) => {
      await tx.selectFrom('t').selectAll().execute();
      expect(() => other.exec("INSERT INTO t (v) VALUES ('other')")).toThrow(/database is locked/);
      await tx.insertInto('t').values({ v: 'ours' }).execute();
    });
    other.close();
    expect(await values(db)).toEqual(['ours']);
  });

  it('binds booleans, dates and undefined as SQLite takes them, and returns rows of a write that returns', async () => {
    const db = open();
    const at = new Date('2026-11-02T08:00:00.000Z');
    const rows = await db
      .insertInto('t')
      .values({ v: undefined, flag: true as unknown as number, at: at as unknown as string })
      .returning(['id', 'v', 'flag', 'at'])
      .execute();
    expect(rows).toEqual([{ id: 1, v: null, flag: 1, at: '2026-11-02T08:00:00.000Z' }]);
    const result = await db
      .insertInto('t')
      .values({ v: 'x', flag: false as unknown as number })
      .executeTakeFirst();
    expect(result.numInsertedOrUpdatedRows).toBe(1n);
    expect(result.insertId).toBe(2n);
    const raw = await sql<{ u: unknown; b: unknown }>`select ${undefined} as u, ${false} as b`.execute(db);
    expect(raw.rows).toEqual([{ u: null, b: 0 }]);
    const streamed: string[] = [];
    for await (const r of db.selectFrom('t').select('id').orderBy('id').stream()) streamed.push(String(r.id));
    expect(streamed).toEqual(['1', '2']);
  });

  it('says why a read-only store refuses a write', async () => {
    const db = open({ key: `${file}#read-only`, readOnly: 'the disk holding DATA_DIR is full' });
    await expect(db.insertInto('t').values({ v: 'x' }).execute()).rejects.toThrow(
      /attempt to write a readonly database: the disk holding DATA_DIR is full/,
    );
    await expect(sql`select 1 from nowhere`.execute(db)).rejects.toThrow(/^no such table: nowhere$/);
  });
});
