// At most one pull of a school at a time, across every process and replica sharing the database: two
// `rostercal sync` processes, two schedulers' fires of different kinds; and the store's writes stay safe even
// when two writers overlap (the `session_teams` duplicate key seen with two replicas on an empty database).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import type { Store } from '../../src/store/types.ts';
import { startScheduler } from '../../src/sync/scheduler.ts';
import { clientForSchool } from '../../src/sync/school-upstream.ts';
import { session, sessionTeam } from '../store/fixtures.ts';
import { rostercal, schoolEnv } from '../support/cli.ts';
import { startWeekSandbox } from '../support/clock.ts';
import { waitUntilBlockedOnLock } from '../support/pg.ts';
import { openTestStore, type TestStore, testSchool } from '../sync/helpers.ts';
import { holdSchool } from '../sync/pull/hold-school.ts';

describe('one pull of a school at a time (PostgreSQL, two processes)', () => {
  let sandbox: Sandbox;
  let ts: TestStore;
  beforeAll(async () => {
    // Latency stretches a pull to seconds, so two started together overlap.
    sandbox = await startWeekSandbox({ seed: 11, scale: 'small', latencyMs: 120 });
    ts = await openTestStore('postgres');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('two `rostercal sync --full` on an empty database: one pulls, the other says a pull is running, exit 1', async () => {
    const env = schoolEnv(sandbox, ts.env);
    // Ordered by events, whatever the machine's load: the first is mid-pull (its request held at the sandbox's
    // door) when the second starts, and let go only once the second has ended.
    const door = sandbox.hold();
    const a = rostercal(['sync', '--full'], env);
    let b: ReturnType<typeof rostercal> | undefined;
    try {
      await door.arrived(1);
      b = rostercal(['sync', '--full'], env);
      await b.exit;
    } finally {
      door.release();
    }
    const outputs = `${a.output()}\n----\n${b!.output()}`;
    expect([await a.exit, await b!.exit], outputs).toEqual([0, 1]);
    const loser = b!;
    expect(loser.output()).toMatch(
      /rostercal sync: hillcrest: a pull of hillcrest is already running \(.+:\d+:\w+, since \d{4}-.+\); nothing was pulled\. Try again when it ends, or use --wait SECONDS\./,
    );
    expect(outputs).not.toMatch(/duplicate key/);
    const runs = await ts.store.runs.listRuns('hillcrest');
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
  }, 180_000);

  it('with --wait it waits for the running pull to end, then pulls', async () => {
    const env = schoolEnv(sandbox, ts.env);
    // Another replica pulling: a live owner holding the school's turn (a real second process is in the test above).
    const lease = await holdSchool(ts.store, 'hillcrest');
    const before = (await ts.store.runs.listRuns('hillcrest')).length;
    const b = rostercal(['sync', '--wait', '120'], env);
    await b.waitFor(/hillcrest: waiting for the pull already running \(hillcrest-other:1:abc, since /);
    // Ordered by events, not by a sleep: no run while the lease is held, and the one it makes starts after the
    // lease is let go.
    expect((await ts.store.runs.listRuns('hillcrest')).length).toBe(before);
    const releasedAt = Date.now();
    await lease.release();
    expect(await b.exit, b.output()).toBe(0);
    const runs = await ts.store.runs.listRuns('hillcrest');
    expect(runs.length).toBe(before + 1);
    expect(Date.parse(runs[0]!.startedAt)).toBeGreaterThanOrEqual(releasedAt - 5);

    // Waiting has its limit: then it says so, exit 1.
    const again = await holdSchool(ts.store, 'hillcrest');
    const c = rostercal(['sync', '--wait', '2'], env);
    expect(await c.exit).toBe(1);
    expect(c.output()).toMatch(
      /a pull of hillcrest is already running .*; nothing was pulled\. It did not end within 2 s\./,
    );
    await again.release();
  }, 180_000);

  it('scheduled full and incremental fires on two replicas at once: the full pull is never lost, a skip is called a skip', async () => {
    const school = testSchool(sandbox, {
      upstream: {
        url: sandbox.url,
        token: sandbox.token,
        rateLimit: { requestsPerSecond: 500, concurrency: 4 },
      },
    });
    const other = await ts.reopen();
    const replicas = await Promise.all(
      [ts.store, other].map((store, i) =>
        startScheduler({
          store,
          config: { schools: [school] },
          clientFor: (s) => clientForSchool(s),
          owner: `replica-${i}`,
        }),
      ),
    );
    try {
      const since = new Date().toISOString();
      const outcomes = await Promise.all([
        replicas[0]!.runNow('hillcrest', 'full'),
        replicas[1]!.runNow('hillcrest', 'incremental'),
      ]);
      const story = JSON.stringify(outcomes);
      // Whichever took the school first, a full pull ran after the full fire: the incremental one turned full, the
      // full one waited its turn, or the incremental one was let pass — and said so (never "succeeded").
      const runs = (await ts.store.runs.listRuns('hillcrest', { limit: 5 })).filter(
        (r) => r.startedAt >= since,
      );
      expect(
        runs.filter((r) => r.kind === 'full' && r.status === 'succeeded'),
        story,
      ).not.toHaveLength(0);
      expect(await ts.store.runs.fullPullRequest('hillcrest')).toBeNull();
      for (const o of outcomes) {
        expect(['succeeded', 'skipped'], story).toContain(o.status);
        if (o.status === 'succeeded') expect(o.error ?? '', story).not.toMatch(/skip/);
        else expect(o.error, story).toMatch(/already running|began after this fire/);
      }
    } finally {
      for (const r of replicas) await r.stop();
      await other.close();
    }
  });
});

describe('overlapping writers (PostgreSQL)', () => {
  let ts: TestStore;
  let other: Store;
  beforeAll(async () => {
    ts = await openTestStore('postgres');
    other = await ts.reopen();
    await ts.store.records.upsertSchool({ id: 'hillcrest', name: 'Hillcrest', timeZone: 'Australia/Sydney' });
  });
  afterAll(async () => {
    await other?.close();
    await ts?.cleanup();
  });

  it('the same new sessions written by two transactions at once: both succeed, one set of memberships', async () => {
    const sessions = [1, 2, 3].map((id) => session(id, { teams: [sessionTeam(10), sessionTeam(11)] }));
    const at = '2026-11-23T08:00:00.000Z';
    let commitFirst!: () => void;
    const held = new Promise<void>((r) => {
      commitFirst = r;
    });
    let wrote!: () => void;
    const written = new Promise<void>((r) => {
      wrote = r;
    });
    const first = ts.store.transaction(async (tx) => {
      await tx.records.upsert('hillcrest', 'sessions', sessions, at);
      wrote();
      await held;
    });
    await written;
    // Waits on the first transaction's rows, then finds them there: before, its membership insert failed.
    const second = other.records.upsert('hillcrest', 'sessions', sessions, at);
    // Committed only once PostgreSQL says the second writer waits on a lock (pg_stat_activity), not after a pause.
    await waitUntilBlockedOnLock(ts.env.DATABASE_URL!);
    commitFirst();
    await first;
    await expect(second).resolves.toBeDefined();
    const stored = await other.records.listSessions('hillcrest', { teamIds: [10] });
    expect(stored.map((s) => s.id)).toEqual([1, 2, 3]);
  });
});
