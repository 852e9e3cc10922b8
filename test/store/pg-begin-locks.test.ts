// PostgreSQL's BEGIN carrying a transaction's advisory locks (store/pg-begin-locks.ts), on a real server (the run's
// embedded one or TEST_DATABASE_URL's): the first transaction the call chain opens holds the locks from its BEGIN
// (the same lock lockText takes, quotes and all), excludes a second writer of the same key until it ends, and no
// later or differently set transaction takes them again.
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockingPostgresDialect, lockText, withBeginLocks } from '../../src/store/pg-begin-locks.ts';
import { createTestDatabase, type TestDatabase, waitUntilBlockedOnLock } from '../support/pg.ts';

let db: TestDatabase;
let kysely: Kysely<Record<string, never>>;
let pool: pg.Pool;
beforeAll(async () => {
  db = await createTestDatabase();
  pool = new pg.Pool({ connectionString: db.url, max: 4 });
  kysely = new Kysely({ dialect: new LockingPostgresDialect({ pool }, pg.escapeLiteral) });
});
afterAll(async () => {
  await kysely?.destroy();
  await db?.drop();
});

type Executor = Kysely<Record<string, never>>;

/** The advisory locks this session holds, as [key1, key2] (pg_advisory_xact_lock(int4, int4)). */
async function heldLocks(tx: Executor): Promise<[number, number][]> {
  const { rows } = await sql<{ k1: number; k2: number }>`
    select classid::int as k1, objid::int as k2 from pg_locks
    where locktype = 'advisory' and pid = pg_backend_pid() and granted order by 1, 2`.execute(tx);
  return rows.map((r) => [r.k1, r.k2]);
}

async function hashes(tx: Executor, ...keys: [string, string][]): Promise<[number, number][]> {
  const out: [number, number][] = [];
  for (const [a, b] of keys) {
    const { rows } = await sql<{ k1: number; k2: number }>`
      select hashtext(${a}) as k1, hashtext(${b}) as k2`.execute(tx);
    out.push([rows[0]!.k1, rows[0]!.k2]);
  }
  return out.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
}

describe('withBeginLocks on LockingPostgresDialect', () => {
  it('takes the locks with the first BEGIN of the call chain, quoted, and only there', async () => {
    const keys: [string, string][] = [
      ["o'brien-high", 'sessions'],
      ['north', 'teams'],
    ];
    const seen = await withBeginLocks(keys, async (begun) => {
      expect(begun()).toBe(false);
      const first = await kysely
        .transaction()
        .execute(async (tx) => [await heldLocks(tx), await hashes(tx, ...keys)]);
      expect(begun()).toBe(true);
      const second = await kysely.transaction().execute((tx) => heldLocks(tx));
      return { first, second };
    });
    expect(seen.first[0]).toEqual(seen.first[1]);
    expect(seen.first[0]).toHaveLength(2);
    expect(seen.second).toEqual([]);
  });

  it('leaves a transaction with its own settings, or outside the chain, to a bare BEGIN', async () => {
    const set = await withBeginLocks([['north', 'teams']], async (begun) => {
      const locks = await kysely
        .transaction()
        .setIsolationLevel('serializable')
        .execute((tx) => heldLocks(tx));
      return { locks, begun: begun() };
    });
    expect(set).toEqual({ locks: [], begun: false });
    expect(await kysely.transaction().execute((tx) => heldLocks(tx))).toEqual([]);
    expect(
      await withBeginLocks([], async (begun) => [
        await kysely.transaction().execute((tx) => heldLocks(tx)),
        begun(),
      ]),
    ).toEqual([[], false]);
  });

  it('holds a writer of the same key at its BEGIN until the first transaction ends', async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    const first = withBeginLocks([['north', 'sessions']], () =>
      kysely.transaction().execute(async () => {
        order.push('first in');
        entered();
        await held;
        order.push('first out');
      }),
    );
    await inside;
    const second = withBeginLocks([['north', 'sessions']], () =>
      kysely.transaction().execute(async () => {
        order.push('second in');
      }),
    );
    await waitUntilBlockedOnLock(db.url);
    expect(order).toEqual(['first in']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['first in', 'first out', 'second in']);
  });
});

it('writes the lock statement with literals, as records-repository takes it', () => {
  expect(lockText(["o'brien", 'teams'], pg.escapeLiteral)).toBe(
    "select pg_advisory_xact_lock(hashtext('o''brien'), hashtext('teams'))",
  );
});
