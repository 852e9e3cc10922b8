// Issue 28, "Fresh within a minute": incremental pulls run every 30 seconds by default, and an upstream that answers
// 429 slows them down by itself. The sandbox's rate limit (a token bucket) throttles a full pull; the real
// scheduler, its fires driven through `fire` as cron would fire them, then lets incremental fires pass for a
// doubling while, says so in the job's status (`rostercal status`, the real CLI), and returns to its schedule after
// a pull that met no 429.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schoolSchema } from '../../src/config.ts';
import type { JobOutcome } from '../../src/jobs/job.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import type { SchedulerHandle } from '../../src/sync/scheduler.ts';
import { createUpstreamClient } from '../../src/upstream/client.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { TEST_NOW } from '../support/clock.ts';
import { drivenScheduler, openTestStore, type TestStore } from './helpers.ts';

// The bucket: RATE requests a second, BURST at once. A small school's full pull needs many more than BURST
// (throttled); an unchanged incremental pull needs fewer (clean, once the bucket has refilled).
const RATE = 2;
const BURST = 6;
const T0 = Date.parse(TEST_NOW);
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

describe('the pace of incremental pulls', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let scheduler: SchedulerHandle;
  const pulls: { throttled: number; kind: string }[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox({
      seed: 11,
      scale: 'small',
      now: TEST_NOW,
      rateLimit: RATE,
      burst: BURST,
    });
    ts = await openTestStore('sqlite');
    scheduler = await drivenScheduler(sandbox, ts, {
      // Short backoff between retries: the pull gets through its 429s quickly, and still counts them.
      clientFor: () =>
        createUpstreamClient({
          baseUrl: sandbox.url,
          token: sandbox.token,
          rateLimit: { requestsPerSecond: 1000, concurrency: 4 },
          backoff: { baseMs: 20, capMs: 200, maxRetries: 40 },
        }),
      onPull: (_s, summary) => {
        pulls.push({ throttled: summary.upstream.throttled, kind: summary.kind });
      },
    });
  });
  afterAll(async () => {
    await scheduler?.stop();
    await ts?.cleanup();
    await sandbox?.close();
  });

  const fire = async (job: string, minutes: number): Promise<JobOutcome> => {
    const outcome = await scheduler.fire('hillcrest', job, at(minutes));
    if (!outcome) throw new Error('this only replica was not elected');
    return outcome;
  };
  /**
   * Waits out the bucket's refill: the next few requests then meet no 429. The one sleep kept here: the sandbox's
   * bucket refills on the real monotonic clock (as an upstream's does), which no test can move, and a loaded machine
   * can only make the wait longer than the refill, never shorter, so no race is decided by it.
   */
  const bucketRefilled = () => sleep(((BURST / RATE) * 1000) | 0);
  const slowed = /^slowed down: upstream asked us to slow down \(429\) — next pull at \d{4}-\d\d-\d\dT/;

  it('defaults to every 10 seconds', () => {
    expect(schoolSchema.shape.schedules.parse(undefined).incremental).toBe('*/10 * * * * *');
  });

  it('backs off after 429s, doubling while they last, says so in status, and returns to its schedule', async () => {
    // A full pull drains the bucket many times over: it gets through, with 429s.
    expect((await fire('full', 0)).status).toBe('succeeded');
    expect(pulls.at(-1)!.throttled).toBeGreaterThan(0);

    // The next fire is let pass, and says why and when the next pull is.
    const passed = await fire('incremental', 1);
    expect(passed.status).toBe('skipped');
    expect(passed.error).toMatch(slowed);
    expect(pulls).toHaveLength(1);

    const status = rostercal(['status'], schoolEnv(sandbox, ts.env));
    expect(await status.exit, status.output()).toBe(0);
    expect(status.output()).toMatch(/incremental\s.*skipped/);
    expect(status.output()).toContain('slowed down: upstream asked us to slow down (429) — next pull at');

    // Two minutes on, the pace allows a pull. A full one (never let pass) meets 429s again: the while doubles.
    expect((await fire('full', 2)).status).toBe('succeeded');
    expect(pulls.at(-1)!.throttled).toBeGreaterThan(0);
    for (const minute of [3, 4, 5]) expect((await fire('incremental', minute)).error).toMatch(slowed);
    expect(pulls).toHaveLength(2);

    // Four minutes after it, an incremental pull runs; with the bucket refilled it meets no 429 ...
    await bucketRefilled();
    const clean = await fire('incremental', 6);
    expect(clean.status).toBe('succeeded');
    expect(pulls.at(-1)).toEqual({ throttled: 0, kind: 'incremental' });
    // ... and the pace is the schedule's again: the very next minute pulls.
    await bucketRefilled();
    expect((await fire('incremental', 7)).status).toBe('succeeded');
    expect(pulls).toHaveLength(4);

    const after = rostercal(['status'], schoolEnv(sandbox, ts.env));
    expect(await after.exit, after.output()).toBe(0);
    expect(after.output()).toMatch(/incremental\s.*succeeded/);
  });

  it('a pull asked for by a person is never held back', async () => {
    expect((await fire('full', 10)).status).toBe('succeeded');
    expect(pulls.at(-1)!.throttled).toBeGreaterThan(0);
    expect((await fire('incremental', 11)).error).toMatch(slowed);
    await bucketRefilled();
    expect((await scheduler.runNow('hillcrest', 'incremental')).status).toBe('succeeded');
  });
});
