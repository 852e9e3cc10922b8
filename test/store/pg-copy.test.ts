// COPY as a statement of the store's PostgreSQL connections (src/store/pg-copy.ts): inside a transaction it is
// part of it, a row the server refuses fails the statement and rolls the transaction back, and the connection
// goes on serving the pool afterwards. A session the server ends mid-COPY fails the write at once (no hang) and
// the store's pool opens a new one: its client's 'error' event is heard (store/index.ts), or the process would
// end on it (the store test fails with that handler taken out).
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { CopyRows, copyingPool, copyText } from '../../src/store/pg-copy.ts';
import { CopyText } from '../../src/store/pg-copy-text.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { untilValue } from '../support/until.ts';
import { session, writeAndFindSession } from './fixtures.ts';

describe('COPY FROM STDIN through the store connections', () => {
  let database: TestDatabase;
  let db: Kysely<Record<string, never>>;
  const rows = (t: string) =>
    db.executeQuery<{ id: number; label: string | null }>(
      CompiledQuery.raw(`select id, label from ${t} order by id`),
    );
  const copy = (t: string, items: [number, string | null][]) =>
    db.executeQuery(CompiledQuery.raw(`copy ${t} (id, label) from stdin`, [new CopyRows(items, (r) => r)]));

  beforeAll(async () => {
    database = await createTestDatabase();
    // One connection: the test sees the very client that ran the failed COPY serve the next statement.
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    // As the store's own pool does (store/index.ts): a client whose session the server ends emits 'error'.
    pool.on('connect', (client) => client.on('error', () => {}));
    db = new Kysely({ dialect: new PostgresDialect({ pool: await copyingPool(pool) }) });
    await db.executeQuery(CompiledQuery.raw('create table t (id int8 primary key, label text)'));
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('writes every row exactly, in chunks, nulls as nulls', async () => {
    const many: [number, string | null][] = Array.from({ length: 5_000 }, (_, i) => [
      i + 1,
      i % 7 === 0 ? null : `row ${i}\t\\${'x'.repeat(i % 300)}\n`,
    ]);
    await copy('t', many);
    expect((await rows('t')).rows).toEqual(many.map(([id, label]) => ({ id: String(id), label })));
    await db.executeQuery(CompiledQuery.raw('truncate t'));
  });

  it('takes rows already in COPY text, several to a piece, across chunks (CopyText)', async () => {
    const total = 30_000;
    function* pieces(): Generator<string> {
      for (let i = 1; i <= total; i += 3) {
        let piece = '';
        for (let j = i; j < i + 3 && j <= total; j++)
          piece += `${j}\t${j % 5 ? copyText(`l\t${j}`) : '\\N'}\n`;
        yield piece;
      }
    }
    await db.executeQuery(CompiledQuery.raw('copy t (id, label) from stdin', [new CopyText(pieces())]));
    const got = (await rows('t')).rows;
    expect(got).toHaveLength(total);
    expect(got.slice(0, 5)).toEqual([
      { id: '1', label: 'l\t1' },
      { id: '2', label: 'l\t2' },
      { id: '3', label: 'l\t3' },
      { id: '4', label: 'l\t4' },
      { id: '5', label: null },
    ]);
    expect(got.at(-1)).toEqual({ id: String(total), label: null });
    await db.executeQuery(CompiledQuery.raw('truncate t'));
  });

  it('takes its rows from a generator: every row of many chunks, exactly', async () => {
    const total = 200_000;
    function* generated(): Generator<[number, string | null]> {
      for (let i = 1; i <= total; i++) yield [i, i % 2 ? null : `r${i}`];
    }
    await db.executeQuery(
      CompiledQuery.raw('copy t (id, label) from stdin', [new CopyRows(generated(), (r) => r)]),
    );
    const { rows: stats } = await db.executeQuery<{ n: string; s: string; nulls: string; last: string }>(
      CompiledQuery.raw(
        `select count(*) as n, sum(id) as s, count(*) - count(label) as nulls, max(label) filter (where id = ${total}) as last from t`,
      ),
    );
    expect(stats[0]).toEqual({
      n: String(total),
      s: String((total * (total + 1)) / 2),
      nulls: String(total / 2),
      last: `r${total}`,
    });
    await db.executeQuery(CompiledQuery.raw('truncate t'));
  });

  it('a refused row fails the statement and rolls its transaction back; the connection goes on', async () => {
    await copy('t', [[1, 'kept']]);
    const failed = db.transaction().execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(`insert into t (id, label) values (2, 'in the transaction')`));
      await trx.executeQuery(
        CompiledQuery.raw('copy t (id, label) from stdin', [
          new CopyRows<[number, string]>(
            [
              [3, 'new'],
              [1, 'a duplicate'],
            ],
            (r) => r,
          ),
        ]),
      );
    });
    await expect(failed).rejects.toThrow(/duplicate key/);
    expect((await rows('t')).rows).toEqual([{ id: '1', label: 'kept' }]);
    await copy('t', [[4, 'after']]);
    expect((await rows('t')).rows.map((r) => r.label)).toEqual(['kept', 'after']);
  });

  it('a session ended by the server mid-COPY fails the statement at once, and the pool serves on', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      let ended: Promise<unknown> | undefined;
      const failed = db.transaction().execute(async (trx) => {
        const { rows } = await trx.executeQuery<{ pid: number }>(
          CompiledQuery.raw('select pg_backend_pid() as pid'),
        );
        const pid = rows[0]!.pid;
        // Far more rows than one write: the server ends the session while they stream.
        const many = Array.from({ length: 400_000 }, (_, i) => i + 100);
        const rowsParam = new CopyRows(many, (i) => {
          if (i === 1_000) ended = admin.query('select pg_terminate_backend($1)', [pid]);
          return [i, `row ${i}`];
        });
        await trx.executeQuery(CompiledQuery.raw('copy t (id, label) from stdin', [rowsParam]));
      });
      // Failing, not hanging: a COPY that waited for ever would meet the test's own deadline.
      await expect(failed).rejects.toThrow(/terminat|connection|ECONNRESET|EPIPE/i);
      await ended;
      // The pool replaces the lost client: the next statements run, and nothing of the COPY was kept.
      expect((await rows('t')).rows.every((r) => Number(r.id) < 100)).toBe(true);
    } finally {
      await admin.end();
    }
  });

  it('refuses CopyRows anywhere but as the one parameter of a COPY … FROM STDIN', async () => {
    const rowsParam = new CopyRows([[1]], (r) => r);
    await expect(db.executeQuery(CompiledQuery.raw('select $1', [rowsParam]))).rejects.toThrow(/COPY/);
  });

  it('escapes what COPY text gives a meaning', () => {
    expect(copyText(null)).toBe('\\N');
    expect(copyText('\\N')).toBe('\\\\N');
    expect(copyText('a\tb\nc\rd\\e')).toBe('a\\tb\\nc\\rd\\\\e');
    expect(copyText(12.5)).toBe('12.5');
    expect(copyText('plain ✓')).toBe('plain ✓');
  });
});

describe('a store whose PostgreSQL session is ended during a COPY', () => {
  it('fails that write with the reason, keeps nothing of it, and writes again on a new session', async () => {
    const database = await createTestDatabase();
    const store = await openStore({ databaseUrl: database.url, poolSize: 2 });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      // Ordered by events, not by a poll racing the COPY (under load the COPY once ended before the poll saw it): a
      // trigger makes the COPY's first row wait for a lock the test holds, so the session is mid-COPY, rows still
      // streaming, for as long as the test likes; seen waiting there, it is ended.
      await admin.query(
        'create function hold_copy() returns trigger language plpgsql as $$ begin perform pg_advisory_xact_lock(31); return new; end $$',
      );
      await admin.query(
        'create trigger hold_copy before insert on sessions for each row execute function hold_copy()',
      );
      await admin.query('select pg_advisory_lock(31)');
      const many = Array.from({ length: 2_000 }, (_, i) => session(i + 1, { notes: 'x'.repeat(2_000) }));
      const writing = store.records.upsert('s', 'sessions', many, '2026-11-01T08:00:00.000Z');
      writing.catch(() => {});
      const pid = await untilValue('the COPY waiting at the held lock', async () => {
        const { rows } = await admin.query<{ pid: number }>(
          "select pid from pg_stat_activity where datname = current_database() and query ilike 'copy %' and wait_event_type = 'Lock' and wait_event = 'advisory'",
        );
        return rows[0]?.pid;
      });
      const { rows: ended } = await admin.query<{ ok: boolean }>('select pg_terminate_backend($1) as ok', [
        pid,
      ]);
      expect(ended[0]!.ok).toBe(true);
      await expect(writing).rejects.toThrow(/terminat|connection|ECONNRESET|EPIPE/i);
      await admin.query('select pg_advisory_unlock(31)');
      await admin.query('drop trigger hold_copy on sessions');
      expect(await store.records.liveIds('s', 'sessions')).toEqual([]);
      await writeAndFindSession(store);
    } finally {
      await admin.end();
      await store.close();
      await database.drop();
    }
  }, 60_000);
});
