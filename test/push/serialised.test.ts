// Issue 28: serve pushes after each pull, and pulls come every 30 s, outside the school's pull lock. Pushes of
// one target still run one at a time: in this process (pushes asked for while one waits its turn join it, so a
// push slower than the pulls never piles up more) and across processes and replicas (a lease per target in the
// store, `push_leases`). Sandbox → pull → SQLite → real @googleapis/calendar → fake Google.
//
// A push that stalls past its lease (SIGSTOP, a loop blocked, its beat refused by a busy file) can be taken over by
// the other process on the file (`rostercal sync` beside `serve`); when it wakes it must write nothing more of the
// target's state into the store, and end `interrupted`. Before its writes were checked against the lease's fence
// (store/lease-fence.ts), the woken push wrote the target's 5 calendars and their mappings after the takeover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import { processOwner } from '../../src/jobs/heartbeat.ts';
import { silentLogger } from '../../src/log.ts';
import type { PushSummary } from '../../src/push/summary.ts';
import { pushJobs, pushSchool } from '../../src/push/triggers.ts';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type Bench, pushRuns, pushThatWaits, startBench, withTeamsOnGoogle } from './harness.ts';

describe('pushes of one target', () => {
  let bench: Bench;
  let fake: FakeGoogle;
  let school: SchoolConfig;
  /** Another process on the store's file. */
  const other = { id: 'elsewhere:1:abcdef', host: 'elsewhere', pid: 1, startedAt: new Date().toISOString() };

  beforeAll(async () => {
    [bench, fake] = await Promise.all([startBench(), startFakeGoogle()]);
    school = withTeamsOnGoogle(bench, fake);
  });
  afterAll(async () => {
    await fake.close();
    await bench.close();
  });

  it('run one at a time; those asked for while one waits join it', async () => {
    const before = await pushRuns(bench);
    // The first push is held at Google's door (a barrier, not a poll) while three pulls end: one more push waits,
    // and carries all of their changes. A push is queued or joined as it is asked for, before its first await.
    let release: () => void = () => {};
    const arrived = new Promise<void>((reached) => {
      fake.knobs.holds = [
        {
          match: /./,
          reached: () => reached(),
          release: new Promise<void>((r) => {
            release = r;
          }),
        },
      ];
    });
    const first = pushSchool({ store: bench.store, school, now: bench.now });
    let more: Promise<PushSummary[]>[];
    try {
      await arrived;
      more = Array.from({ length: 3 }, () => pushSchool({ store: bench.store, school, now: bench.now }));
    } finally {
      fake.knobs.holds = [];
      release();
    }
    const results = await Promise.all([first, ...more]);
    for (const [r] of results) expect(r!.status).toBe('succeeded');
    expect(await pushRuns(bench)).toBe(before + 2);
  }, 180_000); // a deadline: 9.7 s alone, 74 s beside three push files at load 27

  it('wait for another process pushing the same target', async () => {
    await bench.store.runs.beat(other, new Date().toISOString());
    const lease = await bench.store.runs.acquirePushLease('hill/teams', other.id, new Date().toISOString());
    if (!lease.acquired) throw new Error('the test could not take the lease');
    const before = await pushRuns(bench);
    const requestsBefore = fake.stats.requests;
    // Ordered by the push's own word that it waits (its first refused lease), not by a sleep.
    const p = pushThatWaits(bench, school, 'hill/teams');
    await p.waiting;
    expect(p.done()).toBe(false);
    expect(await pushRuns(bench)).toBe(before);
    expect(fake.stats.requests).toBe(requestsBefore);
    await bench.store.runs.releasePushLease('hill/teams', lease.token);
    const [result] = await p.pushing;
    expect(result!.status).toBe('succeeded');
    expect(await pushRuns(bench)).toBe(before + 1);
  }, 60_000);

  /** A target of its own, not yet pushed: a push of it has everything to write. */
  const stalledTarget = () => ({ ...school, targets: school.targets.map((t) => ({ ...t, id: 'stalled' })) });
  const state = async () => ({
    calendars: await bench.store.push.listPushCalendars('hill', 'stalled'),
    mappings: await bench.store.push.listPushMappings('hill', 'stalled'),
  });

  it("writes none of the target's calendars or mappings once another process took the lease", async () => {
    const arrived = Promise.withResolvers<void>();
    const woken = Promise.withResolvers<void>();
    fake.knobs.holds = [{ match: /./, reached: () => arrived.resolve(), release: woken.promise }];
    const a = pushSchool({ store: bench.store, school: stalledTarget(), now: bench.now }).then(
      (r) => ({ result: r, error: null }),
      (error: unknown) => ({ result: null, error }),
    );
    await arrived.promise;
    fake.knobs.holds = [];
    await bench.store.runs.beat(processOwner(), new Date(Date.now() - OWNER_SILENT_MS - 1_000).toISOString());
    await bench.store.runs.beat(other, new Date().toISOString());
    const lease = await bench.store.runs.acquirePushLease('hill/stalled', other.id, new Date().toISOString());
    expect(lease.acquired).toBe(true);
    const before = await state();
    woken.resolve();
    const ended = await a;
    expect(before.calendars).toEqual([]);
    expect(await state()).toEqual(before);
    expect(ended.error).toBeNull();
    expect(ended.result?.[0]?.status).toBe('interrupted');
    expect(ended.result?.[0]?.errors.join(' ')).toMatch(/lost the push lease of hill\/stalled/);
  }, 60_000);

  it('a scheduled push refused by the fence reads as interrupted in its job outcome, not succeeded', async () => {
    const scheduled = {
      ...school,
      schedules: { ...school.schedules, push: '0 3 * * *' },
      targets: school.targets.map((t) => ({ ...t, id: 'stalled-job' })),
    };
    const arrived = Promise.withResolvers<void>();
    const woken = Promise.withResolvers<void>();
    fake.knobs.holds = [{ match: /./, reached: () => arrived.resolve(), release: woken.promise }];
    const [job] = pushJobs(bench.store, scheduled, bench.now);
    const outcome = job!.run({
      fireTime: null,
      log: silentLogger,
      started: async () => {},
      following: () => {},
    });
    await arrived.promise;
    fake.knobs.holds = [];
    await bench.store.runs.beat(processOwner(), new Date(Date.now() - OWNER_SILENT_MS - 1_000).toISOString());
    await bench.store.runs.beat(other, new Date().toISOString());
    const lease = await bench.store.runs.acquirePushLease(
      'hill/stalled-job',
      other.id,
      new Date().toISOString(),
    );
    expect(lease.acquired).toBe(true);
    woken.resolve();
    const ended = await outcome;
    expect(ended.status).toBe('interrupted');
    expect(ended.error).toMatch(/lost the push lease of hill\/stalled-job/);
  }, 60_000);
});
