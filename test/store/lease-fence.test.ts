// A lease's fence (store/lease-fence.ts), on SQLite and PostgreSQL: each acquisition and takeover raises it by one
// and a release never takes it back; a transaction or a cursor write under a fence the lease has moved on from (taken
// over, or freed) writes nothing and throws LeaseLostError, under the current one it commits.
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LeaseLostError, pgFenceRead } from '../../src/store/lease-fence.ts';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import type { DB } from '../../src/store/schema.ts';
import type { Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';
import { describeOnEachStore, newSchool, T0 } from './each-store.ts';

describeOnEachStore('lease fences', (store) => {
  const now = () => new Date().toISOString();
  /** A replica on another host, beating now, or silent past OWNER_SILENT_MS. */
  async function replica(name: string, silent = false) {
    const owner = { id: `${name}:1:abc`, host: `${name}-host`, pid: 1, startedAt: T0 };
    const at = silent ? Date.now() - OWNER_SILENT_MS - 1_000 : Date.now();
    await store().runs.beat(owner, new Date(at).toISOString());
    return owner.id;
  }
  async function take(s: string, owner: string) {
    const lease = await store().runs.acquirePullLease(s, owner, now());
    if (!lease.acquired) throw new Error(`${owner} did not get the lease of ${s}`);
    return lease;
  }
  /** A pull's resource transaction under `fence`: a cursor written now, and one left for its commit. */
  const write = (s: string, fence: number, value: string) =>
    store().transaction(
      async (tx: Store) => {
        await tx.records.setCursor(s, 'now', value);
        await tx.records.setCursors(s, new Map([['atCommit', value]]), { atCommit: true });
      },
      { writes: { schoolId: s, kinds: [], fence } },
    );
  const cursors = async (s: string) => Object.fromEntries(await store().records.cursors(s));

  it('rises by one at each acquisition and takeover, and a release keeps it', async () => {
    const s = newSchool();
    const a = await replica(`${s}-a`);
    const first = await take(s, a);
    expect(first.fence).toBe(1);
    await store().runs.releasePullLease(s, first.token);
    const again = await take(s, a);
    expect(again.fence).toBe(2);
    // Held by a live replica: refused, and the fence stays.
    expect(await store().runs.acquirePullLease(s, 'b:1:def', now())).toMatchObject({ acquired: false });
    await replica(`${s}-a`, true);
    const over = await take(s, 'b:1:def');
    expect(over.fence).toBe(3);
    // Its owner stopped cleanly: freed, not forgotten.
    await store().runs.forgetOwner('b:1:def');
    expect((await take(s, a)).fence).toBe(4);
  });

  it('a transaction under a fence the lease moved on from writes nothing and throws LeaseLostError', async () => {
    const s = newSchool();
    await store().records.upsertSchool({ id: s, name: s, timeZone: 'Australia/Sydney' });
    const a = await take(s, await replica(`${s}-a`));
    await write(s, a.fence, 'a');
    expect(await cursors(s)).toEqual({ now: 'a', atCommit: 'a' });

    await replica(`${s}-a`, true);
    const b = await take(s, await replica(`${s}-b`));
    const refused = await write(s, a.fence, 'a again').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LeaseLostError);
    expect(refused).toMatchObject({ schoolId: s, fence: a.fence });
    // With nothing left for its commit, it is checked all the same.
    const alone = store().transaction(async (tx) => tx.records.setCursor(s, 'now', 'a alone'), {
      writes: { schoolId: s, kinds: [], fence: a.fence },
    });
    await expect(alone).rejects.toBeInstanceOf(LeaseLostError);
    expect(await cursors(s)).toEqual({ now: 'a', atCommit: 'a' });

    await write(s, b.fence, 'b');
    expect(await cursors(s)).toEqual({ now: 'b', atCommit: 'b' });
    // Freed by its holder: its fence no longer writes either.
    await store().runs.releasePullLease(s, b.token);
    await expect(write(s, b.fence, 'b after')).rejects.toBeInstanceOf(LeaseLostError);
    expect(await cursors(s)).toEqual({ now: 'b', atCommit: 'b' });
  });

  it('cursors written on their own under a fence are written only while the lease holds it', async () => {
    const s = newSchool();
    await store().records.upsertSchool({ id: s, name: s, timeZone: 'Australia/Sydney' });
    const a = await take(s, await replica(`${s}-a`));
    const two = (v: string) =>
      new Map([
        ['x', v],
        ['y', v],
      ]);
    await store().records.setCursors(s, two('a'), { fence: a.fence });
    expect(await cursors(s)).toEqual({ x: 'a', y: 'a' });
    await store().records.setCursors(s, two('a2'), { fence: a.fence });
    expect(await cursors(s)).toEqual({ x: 'a2', y: 'a2' });
    await replica(`${s}-a`, true);
    const b = await take(s, await replica(`${s}-b`));
    await expect(store().records.setCursors(s, two('a3'), { fence: a.fence })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await cursors(s)).toEqual({ x: 'a2', y: 'a2' });
    // Freed by its holder: its fence no longer writes either.
    await store().runs.releasePullLease(s, b.token);
    await expect(store().records.setCursors(s, two('b'), { fence: b.fence })).rejects.toBeInstanceOf(
      LeaseLostError,
    );
    expect(await cursors(s)).toEqual({ x: 'a2', y: 'a2' });
  });
});

// PostgreSQL's check reads the lease row FOR SHARE as the transaction's last statement before COMMIT: a takeover
// that comes between that check and the commit waits for the commit, so no write of the old holder lands after it.
describe('lease fences: postgres, a takeover against a check that passed', () => {
  let ts: TestStore;
  let db: Kysely<DB>;
  beforeAll(async () => {
    ts = await openTestStore('postgres');
    const pool = new pg.Pool({ connectionString: ts.env.DATABASE_URL, max: 1 });
    db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  });
  afterAll(async () => {
    await db?.destroy();
    await ts?.cleanup();
  });

  it('waits for the commit of the transaction whose check passed, then raises the fence', async () => {
    const s = newSchool();
    const owner = { id: `${s}-a:1:abc`, host: `${s}-a-host`, pid: 1, startedAt: T0 };
    await ts.store.runs.beat(owner, new Date().toISOString());
    const a = await ts.store.runs.acquirePullLease(s, owner.id, new Date().toISOString());
    if (!a.acquired) throw new Error('the lease was not free');
    await ts.store.runs.beat(owner, new Date(Date.now() - OWNER_SILENT_MS - 1_000).toISOString());
    const { promise: passed, resolve: checked } = Promise.withResolvers<void>();
    const { promise: committing, resolve: commit } = Promise.withResolvers<void>();
    const holder = db.transaction().execute(async (trx) => {
      const { rows } = await pgFenceRead({ schoolId: s, fence: a.fence }).execute(trx);
      expect(rows.map((r) => Number(r.fence))).toEqual([a.fence]);
      checked();
      await committing;
    });
    await passed;
    let settled = false;
    const takeover = ts.store.runs.acquirePullLease(s, 'b:1:def', new Date().toISOString()).finally(() => {
      settled = true;
    });
    await sleep(500);
    expect(settled).toBe(false);
    commit();
    await holder;
    expect(await takeover).toMatchObject({ acquired: true, fence: a.fence + 1 });
  });
});
