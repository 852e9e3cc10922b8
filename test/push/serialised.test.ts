// Issue 28: serve pushes after each pull, and pulls come every 30 s, outside the school's pull lock. Pushes of
// one target still run one at a time: in this process (pushes asked for while one waits its turn join it, so a
// push slower than the pulls never piles up more) and across processes and replicas (a lease per target in the
// store, `push_leases`). Sandbox → pull → SQLite → real @googleapis/calendar → fake Google.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SchoolConfig } from '../../src/config.ts';
import type { PushSummary } from '../../src/push/summary.ts';
import { pushSchool } from '../../src/push/triggers.ts';
import { type FakeGoogle, startFakeGoogle } from '../fakes/google-calendar.ts';
import { type Bench, pushRuns, pushThatWaits, startBench, withTeamsOnGoogle } from './harness.ts';

describe('pushes of one target', () => {
  let bench: Bench;
  let fake: FakeGoogle;
  let school: SchoolConfig;

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
    const other = {
      id: 'elsewhere:1:abcdef',
      host: 'elsewhere',
      pid: 1,
      startedAt: new Date().toISOString(),
    };
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
});
