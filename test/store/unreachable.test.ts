// Which errors mean "the store cannot be reached for now" (store/unreachable.ts): the real errors of the real
// drivers, a PostgreSQL that refuses connections and one that ends a session, against refusals that are not an
// outage (a constraint, a syntax error) and SQLite's.
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { isStoreUnreachable, StoreUnreachableError } from '../../src/store/unreachable.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { downUpstream } from '../support/ports.ts';

const caught = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => new Error('no error'),
    (e) => e,
  );

describe('isStoreUnreachable', () => {
  let db: TestDatabase | undefined;
  afterAll(async () => {
    await db?.drop();
  });

  it('a PostgreSQL that refuses connections, and a session the server ends, are an outage', async () => {
    const down = await downUpstream();
    const refused = await caught(openStore({ databaseUrl: `postgres://u:p@${new URL(down.url).host}/x` }));
    expect(isStoreUnreachable(refused), String(refused)).toBe(true);

    db = await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    client.on('error', () => {});
    await client.connect();
    const { rows } = await client.query('select pg_backend_pid() as pid');
    const killer = new pg.Client({ connectionString: db.url });
    await killer.connect();
    await killer.query('select pg_terminate_backend($1)', [(rows[0] as { pid: number }).pid]);
    await killer.end();
    const ended = await caught(client.query('select 1'));
    expect(isStoreUnreachable(ended), String(ended)).toBe(true);
    expect(isStoreUnreachable(new StoreUnreachableError(ended))).toBe(true);
  });

  it('what the store refuses, or a mistake in the statement, is not', async () => {
    db ??= await createTestDatabase();
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      expect(isStoreUnreachable(await caught(client.query('select * from no_such_table')))).toBe(false);
      await client.query('create table t (id int primary key)');
      await client.query('insert into t values (1)');
      expect(isStoreUnreachable(await caught(client.query('insert into t values (1)')))).toBe(false);
    } finally {
      await client.end();
    }
    const sqlite = new DatabaseSync(':memory:');
    let sqliteErr: unknown;
    try {
      sqlite.exec('select * from no_such_table');
    } catch (err) {
      sqliteErr = err;
    }
    expect(sqliteErr).toBeDefined();
    expect(isStoreUnreachable(sqliteErr)).toBe(false);
    expect(isStoreUnreachable(new TypeError('x is undefined'))).toBe(false);
  });

  it('its own error, once it crossed a thread, is not taken for unreachable by its words: the thread must say so', async () => {
    const { MessageChannel } = await import('node:worker_threads');
    const { port1, port2 } = new MessageChannel();
    const crossed = new Promise<unknown>((r) => port2.once('message', r));
    port1.postMessage(new StoreUnreachableError(new Error('the database did not answer a read within 4 s')));
    const err = await crossed;
    port1.close();
    expect(err).not.toBeInstanceOf(StoreUnreachableError);
    // Only the message crossed: a word match would also take any error that quotes one (a bug report, a pull's
    // note) for an outage. school-render-worker.ts sends `unreachable` beside the message instead.
    expect(String((err as Error).message)).toMatch(/^the store cannot be reached: /);
    expect(isStoreUnreachable(err)).toBe(false);
  });
});
