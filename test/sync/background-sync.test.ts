// startSyncService, what `rostercal serve` calls: scheduler up, a first full pull for a school never pulled,
// nothing extra for one already pulled, job status recorded, clean stop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { FOLDED, QUEUED, startSyncService } from '../../src/sync/background-sync.ts';
import type { FireEvent } from '../../src/sync/scheduler.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { openTestStore, type TestStore } from './helpers.ts';

/** Schools `ids` behind one upstream, each with its incremental job firing every second. */
async function everySecond(upstream: Sandbox, store: TestStore, ids: string[]) {
  const one = await loadConfig({
    UPSTREAM_URL: upstream.url,
    UPSTREAM_TOKEN: upstream.token,
    SCHOOL_TZ: 'Australia/Sydney',
    SCHOOL_ID: ids[0]!,
    SCHOOL_NAME: ids[0]!.toUpperCase(),
    ...store.env,
  });
  const base = one.schools[0]!;
  const schools = ids.map((id) => ({
    ...base,
    id,
    name: id.toUpperCase(),
    schedules: { ...base.schedules, incremental: '* * * * * *' },
  }));
  return { one, schools };
}

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
      const { one, schools } = await everySecond(slow, fleet, ['a', 'b', 'c']);
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

  it("queues one incremental pull behind a school's running start-up pull for the fires meanwhile, letting none pass", async () => {
    // One school whose start-up pull takes seconds (the upstream's latency) while its incremental job fires each
    // second: those fires came after the full pull had begun reading, so it may have missed what they would read.
    const slow = await startWeekSandbox({ seed: 5, scale: 'small', latencyMs: 150 });
    const fleet = await openTestStore('sqlite');
    try {
      const { one, schools } = await everySecond(slow, fleet, ['a']);
      const events: (FireEvent & { at: number })[] = [];
      const svc = await startSyncService({
        config: { ...one, schools },
        store: fleet.store,
        onFire: (e) => events.push({ ...e, at: Date.now() }),
      });
      await svc.initialPulls;
      const startup = () =>
        events.find((e) => e.type === 'finished' && e.job === 'full' && e.fireTime === null);
      // The queued pull starts once the start-up pull has ended (not a fire: no fire time of its own).
      const queuedRan = () =>
        events.find((e) => e.type === 'started' && e.job === 'incremental' && e.fireTime === null);
      const deadline = Date.now() + 20_000;
      while (!queuedRan() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      await svc.stop();

      const end = startup()!.at;
      const during = events.flatMap((e) =>
        e.type === 'skipped' && e.job === 'incremental' && e.at <= end ? [e] : [],
      );
      expect(during.length).toBeGreaterThan(0);
      // Every fire while the start-up pull ran is queued behind it, none let pass as "another pull is running".
      for (const e of during) expect([FOLDED, QUEUED]).toContain(e.reason);
      expect(during.some((e) => e.reason === QUEUED)).toBe(true);
      // One pull for all of them (coalesced), started after the start-up pull ended.
      const queued = events.filter(
        (e) => e.type === 'started' && e.job === 'incremental' && e.fireTime === null,
      );
      expect(queued).toHaveLength(1);
      expect(queued[0]!.at).toBeGreaterThanOrEqual(end);
    } finally {
      await fleet.cleanup();
      await slow.close();
    }
  });
});
