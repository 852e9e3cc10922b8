// The pull's hold on its school (sync/pull/lease.ts), in a real store of each kind (SQLite: the school's lease;
// PostgreSQL: the school's turn in the job queue, the lease row carrying its fence): taken at once when free; held by
// another live process, refused at once (PullBusyError naming the holder), waited for up to `whenBusy` ms or for as
// long as it takes ('queue'), telling the caller once that it waits; a wait stopped by the signal is an interrupted
// pull; a holder whose process is gone is taken over at once (on PostgreSQL, before pg-boss would see it).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processOwner } from '../../../src/jobs/heartbeat.ts';
import type { Store } from '../../../src/store/types.ts';
import { PullBusyError, PullInterruptedError } from '../../../src/sync/pull/errors.ts';
import { takeFencedLease } from '../../../src/sync/pull/lease.ts';
import { newSchool } from '../../store/each-store.ts';
import { DIALECTS, openTestStore, type TestStore } from '../helpers.ts';
import { holdSchool, silence } from './hold-school.ts';

describe.each(DIALECTS)("the pull's hold on its school (%s)", (dialect) => {
  let ts: TestStore;
  let other: Store;
  beforeAll(async () => {
    ts = await openTestStore(dialect);
    other = await ts.reopen();
  });
  afterAll(async () => {
    await other?.close();
    await ts?.cleanup();
  });

  it('is taken at once when free, and refused at once when another process holds it', async () => {
    const free = newSchool();
    const held = await takeFencedLease(ts.store, free, {});
    expect(held.fence).toEqual(expect.any(Number));
    await held.release();

    const busy = newSchool();
    const elsewhere = await holdSchool(other, busy);
    const waits: unknown[] = [];
    const refused = await takeFencedLease(ts.store, busy, { onWait: (h) => waits.push(h) }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(PullBusyError);
    expect((refused as PullBusyError).holder.owner).toBe(elsewhere.owner);
    expect(waits).toEqual([]);
    await elsewhere.release();
  });

  it('waits for a holder that lets go, saying so once, and raises the fence', async () => {
    const school = newSchool();
    const elsewhere = await holdSchool(other, school);
    const waits: { owner: string }[] = [];
    const started = Date.now();
    setTimeout(() => void elsewhere.release(), 1_500);
    const held = await takeFencedLease(ts.store, school, {
      whenBusy: 'queue',
      onWait: (h) => waits.push(h),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(waits).toMatchObject([{ owner: elsewhere.owner }]);
    expect(held.fence).toBe(elsewhere.fence + 1);
    await held.release();
  });

  it('takes the school at once from a holder whose process is gone, and raises the fence', async () => {
    const school = newSchool();
    const elsewhere = await holdSchool(other, school);
    await silence(other, elsewhere);
    // PostgreSQL: its turn ended by our liveness, not 10 s on when pg-boss would see its beats stop.
    const started = Date.now();
    const held = await takeFencedLease(ts.store, school, {});
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(held.fence).toBe(elsewhere.fence + 1);
    await held.release();
    await elsewhere.release();
  });

  it("takes the school at once from this process's own pull that ended without its release stored", async () => {
    const school = newSchool();
    // As a pull of this process leaves it when the store refused its release: held in this (live) process's name.
    const own = processOwner();
    await ts.store.runs.beat(own, new Date().toISOString());
    const at = new Date().toISOString();
    let fence: number;
    if (ts.store.pullTurns) {
      const turn = await ts.store.pullTurns.tryPullTurn(school);
      fence = await ts.store.runs.seizePullLease(school, own.id, at, turn!.id);
    } else {
      const lease = await ts.store.runs.acquirePullLease(school, own.id, at);
      if (!lease.acquired) throw new Error('the lease was not free');
      fence = lease.fence;
    }
    const started = Date.now();
    const held = await takeFencedLease(ts.store, school, {});
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(held.fence).toBe(fence + 1);
    // Still one pull at a time within this process: its running pull is not taken from.
    await expect(takeFencedLease(ts.store, school, {})).rejects.toBeInstanceOf(PullBusyError);
    await held.release();
  });

  it('gives up after whenBusy ms, and stops waiting when the signal aborts', async () => {
    const school = newSchool();
    const elsewhere = await holdSchool(other, school);
    const started = Date.now();
    await expect(takeFencedLease(ts.store, school, { whenBusy: 1_200 })).rejects.toBeInstanceOf(
      PullBusyError,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_200);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('shutting down')), 200);
    await expect(
      takeFencedLease(ts.store, school, { whenBusy: 'queue', signal: stop.signal }),
    ).rejects.toBeInstanceOf(PullInterruptedError);
    // Asks that gave up left nothing behind: the school is the next ask's as soon as the holder lets go.
    await elsewhere.release();
    const held = await takeFencedLease(ts.store, school, {});
    await held.release();
  });
});
