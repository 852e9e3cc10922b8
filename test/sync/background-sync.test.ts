// startSyncService, what `rostercal serve` calls: scheduler up, a first full pull for a school never pulled,
// nothing extra for one already pulled, job status recorded, clean stop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startSyncService } from '../../src/sync/background-sync.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { openTestStore, type TestStore } from './helpers.ts';

describe('startSyncService', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  beforeAll(async () => {
    // startSyncService takes no clock (it is serve's): the pull runs on the real one, so a school of this week.
    sandbox = await startWeekSandbox({ seed: 3, scale: 'small' });
    ts = await openTestStore('sqlite');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('pulls a never-pulled school at start, schedules its jobs and records their status', async () => {
    const config = await loadConfig({
      UPSTREAM_URL: sandbox.url,
      UPSTREAM_TOKEN: sandbox.token,
      SCHOOL_TZ: 'Australia/Sydney',
      SCHOOL_ID: 'hillcrest',
      SCHOOL_NAME: 'Hillcrest College',
      ...ts.env,
    });
    const svc = await startSyncService({ config, store: ts.store });
    expect(svc.demoUrl).toBeNull();
    await svc.initialPulls;
    expect(
      svc.scheduler
        .nextRuns()
        .map((r) => r.job)
        .sort(),
    ).toEqual(['full', 'incremental']);
    for (const r of svc.scheduler.nextRuns()) expect(Date.parse(r.nextRunAt!)).toBeGreaterThan(Date.now());
    await svc.stop();

    const runs = await ts.store.runs.listRuns('hillcrest');
    expect(runs.map((r) => [r.kind, r.status])).toEqual([['full', 'succeeded']]);
    const jobs = await ts.store.runs.listJobStatus('hillcrest');
    const full = jobs.find((j) => j.job === 'full')!;
    expect(full).toMatchObject({ lastStatus: 'succeeded', lastError: null });
    expect(full.lastFinishedAt).not.toBeNull();
    expect(jobs.find((j) => j.job === 'incremental')!.nextRunAt).not.toBeNull();

    // Already pulled: a restart waits for the schedule.
    const again = await startSyncService({ config, store: ts.store });
    await again.initialPulls;
    await again.stop();
    expect((await ts.store.runs.listRuns('hillcrest')).length).toBe(1);
  });
});
