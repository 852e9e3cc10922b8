// `rostercal status` after a fire let pass because the job's previous fire still ran: seen from outside, it read
// "last run 06:09:34 … skipped … next run 06:10:04" after 06:10:04 had passed, though the fire skipped was the
// 06:10:04 one. The real scheduler (a fire each second) on a real store, against a sandbox slow enough that a pull
// outlasts a second, so cron's next fire overlaps it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { describeJob } from '../../src/sync/job-display.ts';
import { type SchedulerHandle, startScheduler } from '../../src/sync/scheduler.ts';
import { TEST_NOW } from '../support/clock.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

let sandbox: Sandbox;
let ts: TestStore;
let scheduler: SchedulerHandle | null = null;

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 5, scale: 'small', now: TEST_NOW, latencyMs: 800 });
  ts = await openTestStore('sqlite');
});
afterAll(async () => {
  await scheduler?.stop();
  await ts?.cleanup();
  await sandbox?.close();
});

it('a skipped fire shows its own time as the last run, and the next run is a fire still ahead', async () => {
  // Read at the skip's own event: the scheduler saved the status just before telling it, and the fire still
  // running has not ended (a sleep here let it end first under load, and its finish is then rightly the last run).
  const statusAtSkip = new Promise<Awaited<ReturnType<typeof ts.store.runs.listJobStatus>>>((resolve) => {
    void startScheduler({
      store: ts.store,
      config: {
        schools: [testSchool(sandbox, { schedules: { incremental: '* * * * * *', full: '0 3 1 1 *' } })],
      },
      clientFor: () => testClient(sandbox),
      now: () => new Date(),
      stopWaitMs: 5_000,
      onFire: (e) => {
        if (e.type === 'skipped' && e.job === 'incremental' && e.reason.startsWith('overlap'))
          resolve(ts.store.runs.listJobStatus('hillcrest'));
      },
    }).then((s) => {
      scheduler = s;
    });
  });
  const job = (await statusAtSkip).find((j) => j.job === 'incremental')!;
  // The next run is after the skipped fire, not the skipped fire itself (before: they were the same second).
  expect(Date.parse(job.nextRunAt!), JSON.stringify(job)).toBeGreaterThan(Date.parse(job.lastSkippedAt!));
  // The skip is dated by the fire let pass (a whole second of the schedule), not by when it was noticed.
  expect(job.lastSkippedAt, JSON.stringify(job)).toMatch(/:\d\d\.000Z$/);
  // Once the running fire has ended, status says the skipped fire's time as the last run.
  const view = describeJob({ ...job, state: null });
  expect(view.result).toBe('skipped');
  expect(view.lastRunAt).toBe(job.lastSkippedAt);
}, 120_000);
