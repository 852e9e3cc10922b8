// Issue 46, "Twice as fresh for the same cost": incremental fires come every 10 s, and each reads only the resources
// whose beat has come round (sessions at every fire, absences every minute, teams every 2 minutes), so an idle school
// costs its upstream no more than the 8 requests a minute that 30-s fires reading everything cost. The real
// scheduler's fires, driven through `fire` at the times cron would give them, against the sandbox over HTTP, counted
// by the sandbox's own counter; a full pull and the one-off `rostercal sync` (the real CLI) still read everything.
import cron from 'node-cron';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { idleRequestsPerMinute } from '../../src/sync/pull/beats.ts';
import type { SchedulerHandle } from '../../src/sync/scheduler.ts';
import { spreadCron } from '../../src/sync/spread.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { TEST_NOW } from '../support/clock.ts';
import {
  drivenScheduler,
  openTestStore,
  sandboxStats,
  type TestStore,
  testClient,
  testSchool,
} from './helpers.ts';

const T0 = Date.parse(TEST_NOW);
const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();
const LISTINGS = ['GET /sessions', 'GET /pre-explained-absences', 'GET /teams'] as const;

/** The upstream's listings of the incremental resources since the last call, by route. */
function counter(sandbox: Sandbox) {
  let before = sandbox.stats();
  return () => {
    const now = sandbox.stats();
    const count = (route: string) => (now.routes[route]?.total ?? 0) - (before.routes[route]?.total ?? 0);
    const out = { sessions: count(LISTINGS[0]), absences: count(LISTINGS[1]), teams: count(LISTINGS[2]) };
    const total = now.total - before.total;
    before = now;
    return { ...out, total };
  };
}

describe('the default beats', () => {
  it('fire every 10 s and cost an idle school at most 8 upstream requests a minute', async () => {
    const school = testSchool({ url: 'http://127.0.0.1:1', token: 't' });
    expect(school.schedules.incremental).toBe('*/10 * * * * *');
    expect(school.pull.beatSeconds).toEqual({ sessions: 0, absences: 60, teams: 120 });
    // The school's own fires, spread (spread.ts): still 10 s apart.
    const task = cron.createTask(spreadCron(school.schedules.incremental, school.id), () => {});
    const runs = task.getNextRuns(7).map((d) => d.getTime());
    await task.destroy();
    const gaps = new Set(runs.slice(1).map((t, i) => t - runs[i]!));
    expect([...gaps]).toEqual([10_000]);
    // Sessions 6 a minute (one listing at every fire), absences 1 (one listing a minute), teams 1 (two listings,
    // shown and hidden, every 2 minutes).
    expect(idleRequestsPerMinute(school, 10_000)).toBe(8);
    // What 30-s fires reading all four listings cost, for comparison: the same.
    const everything = testSchool(
      { url: 'http://127.0.0.1:1', token: 't' },
      { pull: { beatSeconds: { absences: 0, teams: 0 } } },
    );
    expect(idleRequestsPerMinute(everything, 30_000)).toBe(8);
  });
});

describe('scheduled incremental fires read each resource on its beat', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  let scheduler: SchedulerHandle;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 17, scale: 'small', now: TEST_NOW });
    ts = await openTestStore('sqlite');
    // Default beats.
    scheduler = await drivenScheduler(sandbox, ts, { clientFor: () => testClient(sandbox) });
  });
  afterAll(async () => {
    await scheduler?.stop();
    await ts?.cleanup();
    await sandbox?.close();
  });

  const fire = async (job: string, seconds: number) => {
    const outcome = await scheduler.fire('hillcrest', job, at(seconds));
    expect(outcome?.status).toBe('succeeded');
  };

  it('sessions at every fire, absences every minute, teams every 2 minutes: 8 requests a minute idle', async () => {
    const count = counter(sandbox);
    await fire('full', 0);
    count();
    const fires: ReturnType<ReturnType<typeof counter>>[] = [];
    for (let k = 1; k <= 12; k++) {
      await fire('incremental', 10 * k);
      fires.push(count());
    }
    // Each fire read sessions; absences at 60 and 120 s, teams (shown and hidden) at 120 s; nothing else.
    expect(fires.map((f) => f.sessions)).toEqual(Array(12).fill(1));
    expect(fires.map((f) => f.absences)).toEqual([0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]);
    expect(fires.map((f) => f.teams)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
    const total = fires.reduce((n, f) => n + f.total, 0);
    expect(total / 2).toBe(8);

    // A full pull reads every resource whole, and their beats start again from it.
    await fire('full', 125);
    const full = count();
    expect(full.sessions).toBeGreaterThan(0);
    expect(full.absences).toBeGreaterThan(0);
    expect(full.teams).toBeGreaterThanOrEqual(2);
    await fire('incremental', 130);
    expect(count()).toEqual({ sessions: 1, absences: 0, teams: 0, total: 1 });
  });

  it('`rostercal sync` reads every incremental resource, whatever their beats', async () => {
    const before = await sandboxStats(sandbox.url);
    const sync = rostercal(['sync'], schoolEnv(sandbox, ts.env));
    expect(await sync.exit, sync.output()).toBe(0);
    expect(sync.output()).toMatch(/incremental/);
    const after = await sandboxStats(sandbox.url);
    const count = (route: string) => (after.routes[route]?.total ?? 0) - (before.routes[route]?.total ?? 0);
    expect(LISTINGS.map(count)).toEqual([1, 1, 2]);
  });
});
