// startSyncService, what `rostercal serve` calls: scheduler up, a first full pull for a school never pulled,
// nothing extra for one already pulled, job status recorded, clean stop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { FOLDED, startSyncService } from '../../src/sync/background-sync.ts';
import type { FireEvent } from '../../src/sync/scheduler.ts';
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

  it("folds a waiting school's incremental fires into its start-up pull, which reads everything once", async () => {
    // Three schools behind one upstream: their start-up pulls run one after another, each slowed by the
    // upstream's latency, while every school's incremental job fires each second.
    const slow = await startWeekSandbox({ seed: 4, scale: 'small', latencyMs: 60 });
    const fleet = await openTestStore('sqlite');
    try {
      const one = await loadConfig({
        UPSTREAM_URL: slow.url,
        UPSTREAM_TOKEN: slow.token,
        SCHOOL_TZ: 'Australia/Sydney',
        SCHOOL_ID: 'a',
        SCHOOL_NAME: 'A',
        ...fleet.env,
      });
      const base = one.schools[0]!;
      const schools = ['a', 'b', 'c'].map((id) => ({
        ...base,
        id,
        name: id.toUpperCase(),
        schedules: { ...base.schedules, incremental: '* * * * * *' },
      }));
      const events: FireEvent[] = [];
      const began = new Map<string, number>();
      const svc = await startSyncService({
        config: { ...one, schools },
        store: fleet.store,
        onFire: (e) => {
          events.push(e);
          if (e.type === 'started' && e.fireTime === null) began.set(e.schoolId, Date.now());
        },
      });
      await svc.initialPulls;
      await svc.stop();

      const folded = events.filter((e) => e.type === 'skipped' && e.reason === FOLDED);
      // c waits for a's and b's pulls (over a second each at this latency): its fires meanwhile are folded.
      expect(folded.filter((e) => e.schoolId === 'c').length).toBeGreaterThan(0);
      for (const e of folded) {
        expect(e.job).toBe('incremental');
        // Only before the school's start-up pull started.
        expect(Date.parse(e.fireTime!)).toBeLessThanOrEqual(began.get(e.schoolId)!);
      }
      // No fire of a waiting school ran a full pull of its own: one full run each, the start-up's.
      for (const id of ['a', 'b', 'c']) {
        const runs = await fleet.store.runs.listRuns(id);
        expect(runs.filter((r) => r.kind === 'full').map((r) => r.status)).toEqual(['succeeded']);
      }
      const status = await fleet.store.runs.listJobStatus('c');
      expect(status.find((j) => j.job === 'incremental')?.lastSkipReason).toBeDefined();
    } finally {
      await fleet.cleanup();
      await slow.close();
    }
  });
});
