// The fire election on PostgreSQL (store/fire-queue.ts, pg-boss): every replica queues each fire under the id its
// school, job and fire time make, so exactly one insert wins, and a queued fire is taken by one replica only.
// (It replaced store.runs.claimFire and its `fire_claims` table.) Three store handles stand for three replicas,
// each with its own pg-boss and pools; test/sync/scheduler.test.ts runs whole replicas through it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fireId, type QueuedFire } from '../../src/store/fire-queue.ts';
import type { Store } from '../../src/store/types.ts';
import { openTestStore, type TestStore } from '../sync/helpers.ts';
import { newSchool, T0 } from './each-store.ts';

describe('the fire queue: one run per school, job and fire time across replicas (PostgreSQL)', () => {
  let ts: TestStore;
  let replicas: Store[] = [];
  beforeAll(async () => {
    ts = await openTestStore('postgres');
    replicas = [ts.store, await ts.reopen(), await ts.reopen()];
  });
  afterAll(async () => {
    await Promise.all(replicas.slice(1).map((r) => r.close()));
    await ts?.cleanup();
  });
  const queue = (r: Store) => {
    if (!r.fires) throw new Error('a PostgreSQL store has a job queue');
    return r.fires;
  };

  it('lets exactly one of many concurrent senders queue each fire, and one replica take it', async () => {
    const schoolId = newSchool();
    const fires: QueuedFire[] = Array.from({ length: 10 }, (_, i) => ({
      schoolId,
      job: 'incremental',
      fireTime: new Date(Date.parse(T0) + i * 10_000).toISOString(),
    }));
    // Two sends of every fire from each replica, all at once.
    const sent = await Promise.all(
      fires.map((f) => Promise.all(replicas.flatMap((r) => [0, 1].map(() => queue(r).enqueue(f))))),
    );
    for (const [i, ids] of sent.entries())
      expect(
        ids.filter((id) => id !== null),
        fires[i]!.fireTime,
      ).toEqual([fireId(fires[i]!)]);

    // A late send of a queued fire loses; another job or school at the same moment is a fire of its own.
    expect(await queue(replicas[2]!).enqueue(fires[0]!)).toBeNull();
    const full = { ...fires[0]!, job: 'full' };
    const elsewhere = { ...fires[0]!, schoolId: newSchool() };
    expect(await queue(replicas[1]!).enqueue(full)).toBe(fireId(full));
    expect(await queue(replicas[1]!).enqueue(elsewhere)).toBe(fireId(elsewhere));
    expect(new Set(fires.concat(full, elsewhere).map(fireId)).size).toBe(12);

    // Every replica takes at once: each queued fire goes to one of them.
    const taken = (await Promise.all(replicas.map((r) => queue(r).take(12)))).flat();
    expect(taken.map((t) => t.id).sort()).toEqual(fires.concat(full, elsewhere).map(fireId).sort());
    expect(await Promise.all(replicas.map((r) => queue(r).take(12)))).toEqual([[], [], []]);

    // Its outcome, settled by whoever took it, reads the same from every replica.
    const [first] = taken.filter((t) => t.id === fireId(fires[0]!));
    await queue(replicas[0]!).finish(first!, { status: 'succeeded' });
    for (const r of replicas)
      expect(await queue(r).outcome(first!.id)).toEqual({ status: 'succeeded', error: null });
  }, 60_000);
});
