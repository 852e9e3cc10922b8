// Issue 28, "Fresh within a minute": the work after a pull (serve's pushes) runs after the school's pull lock is
// let go. When it ran inside the lock, a push slower than a minute made the next incremental fires find the lock
// busy and pass ("another pull of this school is running"), and the next edit waited minutes for the feeds.
// The real scheduler on a real store against the sandbox; the work after the pull is held open by the test.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { type FireEvent, type SchedulerHandle, startScheduler } from '../../src/sync/scheduler.ts';
import { TEST_NOW } from '../support/clock.ts';
import { openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

const T0 = Date.parse(TEST_NOW);
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** A door the test opens: the first pull's after-pull work waits at it. */
function door() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

describe('the work after a pull', () => {
  let sandbox: Sandbox;
  let ts: TestStore | null = null;
  let scheduler: SchedulerHandle | null = null;

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 5, scale: 'small', now: TEST_NOW });
    return () => sandbox.close();
  });
  afterEach(async () => {
    await scheduler?.stop();
    await ts?.cleanup();
    scheduler = null;
    ts = null;
  });

  const start = async (schedules: { incremental: string; full: string }, onFire?: (e: FireEvent) => void) => {
    ts = await openTestStore('sqlite');
    const hold = door();
    const entered = door();
    let afterPulls = 0;
    scheduler = await startScheduler({
      store: ts.store,
      config: { schools: [testSchool(sandbox, { schedules })] },
      clientFor: () => testClient(sandbox),
      now: () => new Date(sandbox.now()),
      stopWaitMs: 2_000,
      ...(onFire ? { onFire } : {}),
      // The first pull's after-pull work (a slow push) lasts until the test opens the door.
      onPull: async () => {
        if (afterPulls++ > 0) return;
        entered.open();
        await hold.opened;
      },
    });
    return { hold, entered, afterPulls: () => afterPulls };
  };

  it('does not hold the school: the next fire pulls while it runs', async () => {
    const NEVER = '0 3 1 1 *';
    const { hold, entered, afterPulls } = await start({ incremental: NEVER, full: NEVER });
    const first = scheduler!.fire('hillcrest', 'full', at(0));
    await entered.opened;
    // Before: skipped, "another pull of this school is running".
    const second = await scheduler!.fire('hillcrest', 'incremental', at(1));
    expect(second).toEqual({ status: 'succeeded', error: null });
    expect(afterPulls()).toBe(2);
    hold.open();
    // `fire` settles once the work after its pull has.
    expect(await first).toEqual({ status: 'succeeded', error: null });
  }, 60_000);

  it('does not hold the job: its next scheduled fires run', async () => {
    const ran: FireEvent[] = [];
    const pulledTwice = door();
    const { hold, entered } = await start({ incremental: '* * * * * *', full: '0 3 1 1 *' }, (e) => {
      if (e.type !== 'finished' || e.job !== 'incremental') return;
      ran.push(e);
      if (ran.filter((r) => r.type === 'finished' && r.outcome.status === 'succeeded').length >= 3)
        pulledTwice.open();
    });
    await entered.opened;
    // Cron's fires each second while the first pull's after-pull work is held: two more pulls get through.
    // Before: each was let pass ("overlap" or "another pull of this school is running") until the door opened,
    // so they never came. The deadline only ends that case; it measures nothing (a pull here is a fraction of a
    // second, the deadline minutes).
    const waited = await Promise.race([
      pulledTwice.opened.then(() => 'pulled'),
      new Promise((r) => setTimeout(() => r('timed out'), 120_000)),
    ]);
    hold.open();
    expect(waited, JSON.stringify(ran)).toBe('pulled');
  }, 180_000);

  // serve holds the school's feed renders (requests answer the stored bytes) from a pull's first write until its
  // re-render (storeOutputs) has ended: never the work after it, which must not hold them.
  it('is not inside the hold on renders, which covers the pull and its stored outputs', async () => {
    ts = await openTestStore('sqlite');
    const steps: string[] = [];
    const NEVER = '0 3 1 1 *';
    scheduler = await startScheduler({
      store: ts.store,
      config: { schools: [testSchool(sandbox, { schedules: { incremental: NEVER, full: NEVER } })] },
      clientFor: () => testClient(sandbox),
      now: () => new Date(sandbox.now()),
      whilePulling: () => {
        steps.push('held');
        return () => steps.push('released');
      },
      storeOutputs: async () => {
        steps.push('outputs stored');
      },
      onPull: () => {
        steps.push('after the pull');
      },
    });
    expect(await scheduler.fire('hillcrest', 'full', at(0))).toEqual({ status: 'succeeded', error: null });
    expect(steps).toEqual(['held', 'outputs stored', 'released', 'after the pull']);
  }, 60_000);
});
