// COPY as a statement of the store's PostgreSQL connections (src/store/pg-copy.ts): inside a transaction it is
// part of it, a row the server refuses fails the statement and rolls the transaction back, and the connection
// goes on serving the pool afterwards.
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CopyRows, copyingPool, copyText } from '../../src/store/pg-copy.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';

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
    db = new Kysely({ dialect: new PostgresDialect({ pool: copyingPool(pool) }) });
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
