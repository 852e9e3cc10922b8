// The pull's lease (sync/pull/lease.ts), in a real SQLite store: taken at once when free; held by another live
// process, refused at once (PullBusyError naming the holder), waited for up to `whenBusy` ms or for as long as it
// takes ('queue'), telling the caller once that it waits; a wait stopped by the signal is an interrupted pull.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PullBusyError, PullInterruptedError } from '../../../src/sync/pull/errors.ts';
import { takeLease } from '../../../src/sync/pull/lease.ts';
import { newSchool } from '../../store/each-store.ts';
import { openTestStore, type TestStore } from '../helpers.ts';

let ts: TestStore;
beforeAll(async () => {
  ts = await openTestStore('sqlite');
});
afterAll(() => ts?.cleanup());

/** The school's lease held by another process on this host that keeps beating; resolves to its token. */
async function heldElsewhere(school: string): Promise<{ owner: string; token: string }> {
  const owner = {
    id: `${school}-other:1:abc`,
    host: 'elsewhere',
    pid: 1,
    startedAt: new Date().toISOString(),
  };
  await ts.store.runs.beat(owner, new Date().toISOString());
  const lease = await ts.store.runs.acquirePullLease(school, owner.id, new Date().toISOString());
  if (!lease.acquired) throw new Error('the lease was not free');
  return { owner: owner.id, token: lease.token };
}

describe("the pull's lease", () => {
  it('is taken at once when free, and refused at once when another process holds it', async () => {
    const free = newSchool();
    const token = await takeLease(ts.store, free, {});
    expect(token).toEqual(expect.any(String));
    await ts.store.runs.releasePullLease(free, token);

    const busy = newSchool();
    const other = await heldElsewhere(busy);
    const waits: unknown[] = [];
    const refused = await takeLease(ts.store, busy, { onWait: (h) => waits.push(h) }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(PullBusyError);
    expect((refused as PullBusyError).holder.owner).toBe(other.owner);
    expect(waits).toEqual([]);
  });

  it('waits for a holder that lets go, saying so once', async () => {
    const school = newSchool();
    const other = await heldElsewhere(school);
    const waits: { owner: string }[] = [];
    const started = Date.now();
    setTimeout(() => void ts.store.runs.releasePullLease(school, other.token), 1_500);
    const token = await takeLease(ts.store, school, { whenBusy: 'queue', onWait: (h) => waits.push(h) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(waits).toMatchObject([{ owner: other.owner }]);
    await ts.store.runs.releasePullLease(school, token);
  });

  it('gives up after whenBusy ms, and stops waiting when the signal aborts', async () => {
    const school = newSchool();
    await heldElsewhere(school);
    const started = Date.now();
    await expect(takeLease(ts.store, school, { whenBusy: 1_200 })).rejects.toBeInstanceOf(PullBusyError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_200);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('shutting down')), 200);
    await expect(
      takeLease(ts.store, school, { whenBusy: 'queue', signal: stop.signal }),
    ).rejects.toBeInstanceOf(PullInterruptedError);
  });
});
