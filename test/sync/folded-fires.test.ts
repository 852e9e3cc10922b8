// Issue 46, a fresh replica's start-up on PostgreSQL: an incremental fire that this replica lets pass on what it
// alone knows (folded into the school's start-up pull, still to start or running) is let pass before it is queued.
// Queued, each such fire cost pg-boss an insert, a fetch, a completion and beats: with 500 schools waiting for
// their start-up pulls that was ~50 fires a second through the job queue's pool of 10, which ran dry (bench:fleet,
// 8 Dec: 1,102 fires let pass as "the store failed", 392 jobs failed) while the start-up pulls needed it. Another
// replica that has the school's data runs the fire instead: it queues it as ever.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { fireId } from '../../src/store/fire-queue.ts';
import type { FireEvent } from '../../src/sync/scheduler.ts';
import { startScheduler } from '../../src/sync/scheduler.ts';
import { TEST_NOW } from '../support/clock.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

const WAITING = 'folded into a start-up pull still to start (the test says so)';

describe('a fire folded into a start-up pull, on PostgreSQL', () => {
  let sandbox: Sandbox;
  let ts: TestStore;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 9, scale: 'small', now: TEST_NOW });
    ts = await openTestStore('postgres');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('is let pass without a job in the queue, said in the job status and to onFire; a fire not folded is queued', async () => {
    let folded: string | null = WAITING;
    const events: FireEvent[] = [];
    const scheduler = await startScheduler({
      store: ts.store,
      config: {
        schools: [testSchool(sandbox, { schedules: { incremental: '0 3 1 1 *', full: '0 3 1 1 *' } })],
      },
      clientFor: () => testClient(sandbox),
      foldedInto: () => folded,
      onFire: (e) => events.push(e),
      now: () => new Date(sandbox.now()),
    });
    try {
      const at = '2026-11-23T01:00:00.000Z';
      const outcome = await scheduler.fire('hillcrest', 'incremental', at);
      expect(outcome).toEqual({ status: 'skipped', error: WAITING });
      // Never queued: the queue holds no job of its id (which it says as a fire no replica took), where a queued
      // fire let pass holds this replica's outcome.
      expect(
        await ts.store.fires!.outcome(fireId({ schoolId: 'hillcrest', job: 'incremental', fireTime: at })),
      ).toEqual({ status: 'skipped', error: 'no replica took the fire within a minute' });
      expect(events.map((e) => e.type)).toEqual(['skipped', 'finished']);
      const status = (await ts.store.runs.listJobStatus('hillcrest')).find((j) => j.job === 'incremental');
      expect(status?.lastSkipReason).toBe(WAITING);

      // Served (nothing folded): the next fire goes through the queue and runs its pull.
      folded = null;
      const later = '2026-11-23T01:00:10.000Z';
      const ran = await scheduler.fire('hillcrest', 'incremental', later);
      expect(ran?.status).toBe('succeeded');
      expect(
        await ts.store.fires!.outcome(fireId({ schoolId: 'hillcrest', job: 'incremental', fireTime: later })),
      ).toMatchObject({ status: 'succeeded' });
    } finally {
      await scheduler.stop();
    }
  }, 60_000);
});
