// Issue 28, "Fifty schools on one replica": schools' fires are spread over their schedule's interval (a thousand
// schools do not all pull in the same second), each school's by an offset of its own id, so that two replicas
// compute the same fire times and the election (one job in the queue per school, job and fire time) still holds.
import cron from 'node-cron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import type { JobDefinition } from '../../src/jobs/job.ts';
import { type FireEvent, type SchedulerHandle, startScheduler } from '../../src/sync/scheduler.ts';
import { spreadCron, spreadFraction } from '../../src/sync/spread.ts';
import { until } from '../support/until.ts';
import { openTestStore, type TestStore, testSchool } from './helpers.ts';

/** The next `n` fires of an expression after `from` (node-cron's own reading of it). */
function firesOf(expression: string, n: number): Date[] {
  const task = cron.createTask(expression, () => {}, { timezone: 'UTC' });
  const runs = task.getNextRuns(n);
  void task.destroy();
  return runs;
}

const ids = Array.from({ length: 1000 }, (_, i) => `school-${i + 1}`);

describe('spreading schools over the interval', () => {
  it('a thousand schools on the default incremental schedule fire across the 30 s, not in one second', () => {
    const bySecond = new Map<number, number>();
    for (const id of ids) {
      const spread = spreadCron('*/30 * * * * *', id);
      // Still every 30 s, at the school's own second.
      const runs = firesOf(spread, 4);
      for (let i = 1; i < runs.length; i++) expect(runs[i]!.getTime() - runs[i - 1]!.getTime()).toBe(30_000);
      const second = runs[0]!.getUTCSeconds() % 30;
      bySecond.set(second, (bySecond.get(second) ?? 0) + 1);
    }
    // Every second of the interval has schools, and none more than twice its share (1000 / 30).
    expect(bySecond.size).toBe(30);
    expect(Math.max(...bySecond.values())).toBeLessThanOrEqual((2 * 1000) / 30);
  });

  it('spreads full pulls over their hour and every-10-minutes over the 10 minutes, keeping the interval', () => {
    const full = new Set(
      ids.map((id) => firesOf(spreadCron('0 */6 * * *', id), 1)[0]!.getTime() % 3_600_000),
    );
    // 1000 schools over 3,600 seconds: hardly two in one second.
    expect(full.size).toBeGreaterThan(850);
    for (const id of ids.slice(0, 20)) {
      const runs = firesOf(spreadCron('0 */6 * * *', id), 3);
      expect(runs[1]!.getTime() - runs[0]!.getTime()).toBe(6 * 3_600_000);
      const tens = firesOf(spreadCron('*/10 * * * *', id), 3);
      expect(tens[1]!.getTime() - tens[0]!.getTime()).toBe(600_000);
    }
  });

  it('is the school id’s alone: the same on every call, and what the operator fixed stays fixed', () => {
    expect(spreadCron('*/30 * * * * *', 'hillcrest')).toBe(spreadCron('*/30 * * * * *', 'hillcrest'));
    expect(spreadFraction('hillcrest')).toBe(spreadFraction('hillcrest'));
    expect(new Set(ids.slice(0, 50).map((id) => spreadCron('*/30 * * * * *', id))).size).toBeGreaterThan(20);
    for (const fixed of ['* * * * * *', '5,35 * * * * *', '0-5 * * * *', '*/7 * * * * *'])
      expect(spreadCron(fixed, 'hillcrest')).toBe(fixed);
  });
});

describe('spread fires on two replicas sharing PostgreSQL', () => {
  const SCHOOLS = 6;
  const EVERY = 5; // seconds: each school fires at its own second within each 5
  let ts: TestStore;
  const events: FireEvent[] = [];
  const schedulers: SchedulerHandle[] = [];

  beforeAll(async () => {
    ts = await openTestStore('postgres');
    // The pulls never come round (1 January): a job of the test's own fires on the spread schedule instead, so
    // that only the schedule and the election are measured, not pulls.
    const schools: SchoolConfig[] = Array.from({ length: SCHOOLS }, (_, i) =>
      testSchool(
        { url: 'http://127.0.0.1:9', token: 'unused' },
        { id: `spread-${i}`, schedules: { incremental: '0 3 1 1 *', full: '0 3 1 1 *' } },
      ),
    );
    const tick = (): JobDefinition => ({
      name: 'tick',
      cron: `*/${EVERY} * * * * *`,
      run: async () => ({ status: 'succeeded' }),
    });
    for (const owner of ['replica-a', 'replica-b'])
      schedulers.push(
        await startScheduler({
          store: owner === 'replica-a' ? ts.store : await ts.reopen(),
          config: { schools },
          clientFor: () => {
            throw new Error('no pull runs in this test');
          },
          owner,
          extraJobs: () => [tick()],
          onFire: (e) => events.push(e),
        }),
      );
  });
  afterAll(async () => {
    for (const s of schedulers) await s.stop();
    await ts?.cleanup();
  });

  it('each school fires at its own second, and each fire is queued exactly once across both', async () => {
    const asked = (owner: string) =>
      events.filter(
        (e) =>
          e.job === 'tick' && e.owner === owner && (e.type === 'queued' || e.type === 'queued-elsewhere'),
      );
    /** Fire keys both replicas asked about, each answered by both. */
    const askedOfBoth = () => {
      const b = new Set(asked('replica-b').map((e) => `${e.schoolId}@${e.fireTime}`));
      return [...new Set(asked('replica-a').map((e) => `${e.schoolId}@${e.fireTime}`))].filter((k) =>
        b.has(k),
      );
    };
    const schoolsAsked = () => new Set(askedOfBoth().map((k) => k.split('@')[0]));
    // Ordered by what the schedulers report, however long a loaded machine takes to get there.
    await until(
      `two fires of each of ${SCHOOLS} schools asked of both replicas`,
      () => schoolsAsked().size >= SCHOOLS && askedOfBoth().length >= 2 * SCHOOLS,
      120_000,
    );
    for (const key of askedOfBoth()) {
      const [schoolId, fireTime] = key.split('@') as [string, string];
      const answers = events.filter(
        (e) =>
          e.schoolId === schoolId &&
          e.fireTime === fireTime &&
          (e.type === 'queued' || e.type === 'queued-elsewhere'),
      );
      // One replica won it, the other was told so: the same fire time on both.
      expect(answers.map((e) => e.type).sort(), key).toEqual(['queued', 'queued-elsewhere']);
      // At the school's own second of the interval.
      const second = new Date(fireTime).getUTCSeconds() % EVERY;
      expect(second, key).toBe(Math.floor(spreadFraction(schoolId) * EVERY));
    }
    // The schools did not all fire in the same second.
    const seconds = new Set(askedOfBoth().map((k) => new Date(k.split('@')[1]!).getUTCSeconds() % EVERY));
    expect(seconds.size).toBeGreaterThan(1);
    // Every claim ran once (the tick's finished events are the winner's alone).
    const queued = events.filter((e) => e.type === 'queued' && e.job === 'tick');
    expect(new Set(queued.map((e) => `${e.schoolId}@${e.fireTime}`)).size).toBe(queued.length);
  }, 180_000);
});
