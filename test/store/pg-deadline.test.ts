// The deadline on PostgreSQL statements outside a transaction (src/store/pg-deadline.ts), with a short deadline on
// a real server: a statement past it fails as "store unreachable", its client is destroyed (not handed back to the
// pool with the statement still running), new connections are refused at once for UNANSWERED_MEMO_MS and then
// served again; a statement inside a transaction is not cut, however long. (The held network itself:
// test/failures/store-partition.test.ts.)
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { copyingPool } from '../../src/store/pg-copy.ts';
import { ReadDeadline, UNANSWERED_MEMO_MS } from '../../src/store/pg-deadline.ts';
import { isStoreUnreachable, StoreUnreachableError } from '../../src/store/unreachable.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { startPgWire } from '../support/pg-wire.ts';

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

describe('a store healed after its connections went unanswered', () => {
  it('reconnects once the network is back, however often it is asked meanwhile', async () => {
    const database = await createTestDatabase();
    const relay = await startPgWire(database.url);
    const direct = await openStore({ databaseUrl: database.url, poolSize: 2 });
    const url = new URL(relay.url);
    url.searchParams.set('connect_timeout', '1');
    const store = await openStore({ databaseUrl: url.toString(), poolSize: 2, migrate: false });
    try {
      await store.ping();
      relay.hold();
      // Asked every 200 ms while held: a read misses its deadline, then a connection misses its timeout.
      const askUntil = async (ms: number) => {
        const end = performance.now() + ms;
        let ok = 0;
        let firstOkAt = Number.NaN;
        const t0 = performance.now();
        while (performance.now() < end) {
          const fine = await store.ping().then(
            () => true,
            (e: unknown) => {
              if (!isStoreUnreachable(e)) throw e;
              return false;
            },
          );
          if (fine && ok++ === 0) firstOkAt = performance.now() - t0;
          await new Promise((r) => setTimeout(r, 200));
        }
        return { ok, firstOkAt };
      };
      expect((await askUntil(7000)).ok).toBe(0);
      relay.restore();
      // Seen before the fix: a refusal by the memo read as a new connect timeout ('connect_timeout' in its
      // words) and armed the memo again, so a replica asked at least once a second never reconnected.
      const healed = await askUntil(4000);
      expect(healed.ok).toBeGreaterThan(0);
      expect(healed.firstOkAt).toBeLessThan(UNANSWERED_MEMO_MS + 1500);
    } finally {
      await store.close();
      await direct.close();
      await relay.close();
      await database.drop();
    }
  }, 30_000);
});
