// The deadline on PostgreSQL statements outside a transaction (src/store/pg-deadline.ts), with a short deadline on
// a real server: a statement past it fails as "store unreachable", its client is destroyed (not handed back to the
// pool with the statement still running), new connections are refused at once for UNANSWERED_MEMO_MS and then
// served again; a statement inside a transaction is not cut, however long. (The held network itself:
// test/failures/store-partition.test.ts.)
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyingPool } from '../../src/store/pg-copy.ts';
import { ReadDeadline, UNANSWERED_MEMO_MS } from '../../src/store/pg-deadline.ts';
import { isStoreUnreachable, StoreUnreachableError } from '../../src/store/unreachable.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';

const DEADLINE_MS = 300;

describe('a deadline on statements outside a transaction', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let db: Kysely<Record<string, never>>;
  const run = (text: string) => db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text));

  beforeAll(async () => {
    database = await createTestDatabase();
    pool = new pg.Pool({ connectionString: database.url, max: 2 });
    pool.on('connect', (client) => client.on('error', () => {}));
    db = new Kysely({
      dialect: new PostgresDialect({ pool: await copyingPool(pool, new ReadDeadline(DEADLINE_MS, 'test')) }),
    });
  });
  afterAll(async () => {
    await db?.destroy();
    await database?.drop();
  });

  it('fails an unanswered statement as unreachable, destroys its client, refuses for a moment, then serves', async () => {
    const pid = (await run('select pg_backend_pid() as pid')).rows[0]!.pid;
    const t0 = performance.now();
    const err = await run('select pg_sleep(5)').catch((e: unknown) => e);
    const took = performance.now() - t0;
    expect(err).toBeInstanceOf(StoreUnreachableError);
    expect(isStoreUnreachable(err)).toBe(true);
    expect(took).toBeGreaterThanOrEqual(DEADLINE_MS - 5);
    expect(took).toBeLessThan(DEADLINE_MS + 1000);
    // Its client left the pool: none is idle holding the statement that never answered.
    expect(pool.idleCount).toBe(0);
    // Within the memo: refused at once, nothing sent.
    const t1 = performance.now();
    expect(isStoreUnreachable(await run('select 1').catch((e: unknown) => e))).toBe(true);
    expect(performance.now() - t1).toBeLessThan(100);
    await new Promise((r) => setTimeout(r, UNANSWERED_MEMO_MS + 50));
    const again = await run('select pg_backend_pid() as pid');
    expect(again.rows[0]!.pid).not.toBe(pid);
  });

  it('does not cut a statement inside a transaction', async () => {
    const slept = await db.transaction().execute(async (trx) => {
      await trx.executeQuery(CompiledQuery.raw(`select pg_sleep(${(DEADLINE_MS * 3) / 1000})`));
      return (await trx.executeQuery<{ n: number }>(CompiledQuery.raw('select 1 as n'))).rows[0]!.n;
    });
    expect(slept).toBe(1);
    // And outside it again, the same bound.
    expect(isStoreUnreachable(await run('select pg_sleep(5)').catch((e: unknown) => e))).toBe(true);
  });
});
