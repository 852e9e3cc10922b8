// Missing-record marks are read once at a run's start (79af380): only the pull holding the school's lease changes
// them. Two pulls of a school overlap only when one stalled past its lease (a GC pause, SIGSTOP, a lost network)
// and another took it over; a stalled pull's marks are stale when it wakes, and whatever it writes then lands
// beside the other's. An absence left marked though a pull saw it since (edited upstream) is deleted by the next
// full listing that omits it without looking short (its last page dropped and the count lowered to match): one
// omission, though it is still upstream. 43a0086 re-read the marks in an incremental pull's transaction against
// this; the lease's fence (store/lease-fence.ts) now refuses every write of the stalled pull instead. Both orders,
// with real pulls: the stalled pull is the one whose marks went stale, or the one whose late mark would make the
// lease holder's stale. And the same two orders for a full listing's deletion that rests on a mark (the second
// complete listing in a row to leave a record out), decided on the marks read at the run's start: with the fence
// disabled (and that deletion's re-read of the marks gone), the stalled full pull deleted an absence the holder had
// seen since, and the stalled incremental pull's sighting took away the mark the holder's full pull decided on.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Id } from '../../src/domain/types.ts';
import { keepAlive, processOwner } from '../../src/jobs/heartbeat.ts';
import type { PullKind } from '../../src/jobs/pull-summary.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import type { Store } from '../../src/store/types.ts';
import { PullLeaseLostError, pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import {
  DIALECTS,
  editAbsence,
  listAll,
  openTestStore,
  type TestStore,
  testClient,
  testSchool,
} from './helpers.ts';

type PullStore = Pick<Store, 'records' | 'runs' | 'pullTurns' | 'transaction'>;

/** A point a pull waits at until `open()`; `reached` resolves once it is there. */
function gate() {
  const at = Promise.withResolvers<void>();
  const opened = Promise.withResolvers<void>();
  return {
    reached: at.promise,
    open: () => opened.resolve(),
    wait: async () => {
      at.resolve();
      await opened.promise;
    },
  };
}

describe.each(DIALECTS)('a stalled pull and missing-record marks (%s)', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const absences = () => ts.store.records.listMissing('hillcrest', 'absences');

  /** The store as one pull sees it: it stalls right after reading its cursors and marks, or before its absences' transaction. */
  function stalling(where: {
    afterState?: () => Promise<void>;
    beforeAbsences?: () => Promise<void>;
  }): PullStore {
    const records = ts.store.records;
    return {
      runs: ts.store.runs,
      pullTurns: ts.store.pullTurns,
      records: new Proxy(records, {
        get: (target, key) => {
          const value: unknown = Reflect.get(target, key, target);
          if (key === 'pullState' && where.afterState) {
            return async (...args: Parameters<typeof records.pullState>) => {
              const state = await target.pullState(...args);
              await where.afterState?.();
              return state;
            };
          }
          return typeof value === 'function' ? value.bind(target) : value;
        },
      }),
      transaction: async (fn, opts) => {
        if (opts?.writes?.kinds.includes('absences')) await where.beforeAbsences?.();
        return ts.store.transaction(fn, opts);
      },
    };
  }

  const pull = (kind: PullKind, store: PullStore = ts.store, onStart?: () => Promise<void>) => {
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    return pullSchool({
      now: () => new Date(sandbox.now()),
      store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind,
      ...(onStart ? { onStart } : {}),
    });
  };
  const truncated = async <T>(fn: () => Promise<T>): Promise<T> => {
    sandbox.setListingFaults({ 'pre-explained-absences': 'truncated' });
    try {
      return await fn();
    } finally {
      sandbox.setListingFaults({});
    }
  };
  /**
   * This process's beat, kept for both stores the pulls use (keepAlive beats afresh for a store it does not yet
   * beat for), and made silent past OWNER_SILENT_MS, as a stalled replica's is: its lease may be taken over.
   */
  let beats: (() => void)[] = [];
  const beatFor = async (store: PullStore) => {
    beats = [await keepAlive(ts.store), await keepAlive(store)];
  };
  const silent = () =>
    ts.store.runs.beat(processOwner(), new Date(Date.now() - OWNER_SILENT_MS - 1_000).toISOString());

  /** The absence a truncated listing drops (its last record, the count lowered to match). */
  async function droppedByTruncation(): Promise<Id> {
    const list = async () => (await listAll(testClient(sandbox).preExplainedAbsences({}))).map((a) => a.id);
    const whole = await list();
    const cut = await truncated(list);
    const dropped = whole.filter((id) => !cut.includes(id));
    expect(dropped).toHaveLength(1);
    return dropped[0]!;
  }
  /** A pull's end, caught at once: the error it threw, or null. */
  const settled = (p: Promise<unknown>): Promise<unknown> =>
    p.then(
      () => null,
      (err: unknown) => err,
    );
  /** A's end: without the fence it runs on beside B; with it, it has lost its lease and written nothing. */
  async function ended(a: Promise<unknown>) {
    const error = await a;
    if (error !== null) expect(error).toBeInstanceOf(PullLeaseLostError);
  }
  /** The next full listing omits x without looking short: on one omission since it was seen, x is kept. */
  async function keptByPartialListing(x: Id) {
    const partial = await truncated(() => pull('full'));
    expect(partial.counts.absences).toMatchObject({ deleted: 0 });
    expect(await ts.store.records.get('hillcrest', 'absences', x)).not.toBeNull();
  }

  beforeEach(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    expect((await pull('full')).status).toBe('succeeded');
  });
  afterEach(async () => {
    for (const stop of beats) stop();
    await ts?.cleanup();
    await sandbox?.close();
  });

  it('a stalled incremental pull whose marks went stale leaves no mark on an absence it saw', async () => {
    const x = await droppedByTruncation();
    // A reads its cursors and marks (none on x), then stalls past its lease.
    const stall = gate();
    const stalled = stalling({ afterState: stall.wait });
    await beatFor(stalled);
    const a = settled(pull('incremental', stalled));
    await stall.reached;
    await silent();
    // B takes the lease over; its full listing omits x: marked once, rightly (nothing since has seen it).
    const b = await truncated(() => pull('full'));
    expect(b.counts.absences).toMatchObject({ pending: 1 });
    expect([...(await absences()).keys()]).toEqual([x]);
    // The upstream moves on: x is edited, and minutes pass (past the cursors' overlap) before A wakes and lists it.
    await editAbsence(sandbox, x, 'edited after B');
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 10 * 60_000).toISOString());
    stall.open();
    await ended(a);
    // Whatever A wrote, x's mark stands only while no record in the store is one seen since B marked it: the next
    // incremental pull reads what A's edit means, and x is then unmarked and kept.
    const next = await pull('incremental');
    expect(next.status).toBe('succeeded');
    expect([...(await absences()).keys()]).not.toContain(x);
    await keptByPartialListing(x);
  });

  it("a stalled full pull's late mark does not stay on an absence the lease holder saw", async () => {
    const x = await droppedByTruncation();
    const stallB = gate();
    const stalled = stalling({ beforeAbsences: stallB.wait });
    await beatFor(stalled);
    // A stalls once it holds the lease, before it reads anything.
    const stallA = gate();
    const a = settled(pull('full', ts.store, stallA.wait));
    await stallA.reached;
    await silent();
    // x is edited; B takes the lease over, reads its marks (none on x), lists x, and waits before writing it.
    await editAbsence(sandbox, x, 'edited before B');
    const b = pull('incremental', stalled);
    await stallB.reached;
    // A wakes, its full listing omitting x: it would mark x, after B read the marks.
    await truncated(async () => {
      stallA.open();
      await ended(a);
    });
    stallB.open();
    const seen = await b;
    expect(seen.status).toBe('succeeded');
    expect(seen.counts.absences).toMatchObject({ changed: 1 });
    expect([...(await absences()).keys()]).not.toContain(x);
    await keptByPartialListing(x);
  });

  // A full listing's deletion that rests on a mark (the second complete listing in a row to leave a record out) is
  // decided on the marks read at the run's start, not read again in its transaction: the two orders in which they
  // could differ from the store's, each with a real stalled pull taken over, end as the lease holders' pulls alone
  // decide (the stalled one's writes refused by the fence).
  /** x left out by a complete listing once: marked. */
  async function markedOnce(x: Id) {
    const once = await truncated(() => pull('full'));
    expect(once.counts.absences).toMatchObject({ pending: 1, deleted: 0 });
    expect([...(await absences()).keys()]).toEqual([x]);
  }
  const lostLease = async (a: Promise<unknown>) => expect(await a).toBeInstanceOf(PullLeaseLostError);
  const reasonOf = async (x: Id) =>
    ((await ts.store.records.get('hillcrest', 'absences', x)) as { reason?: string } | null)?.reason;

  it('a stalled full pull whose mark went stale deletes nothing the lease holder saw since', async () => {
    const x = await droppedByTruncation();
    await markedOnce(x);
    // A reads its marks (x marked), then stalls past its lease.
    const stall = gate();
    const stalled = stalling({ afterState: stall.wait });
    await beatFor(stalled);
    const a = settled(pull('full', stalled));
    await stall.reached;
    await silent();
    // x is edited; B takes the lease over and sees it: x's mark goes.
    await editAbsence(sandbox, x, 'edited while A stalled');
    const b = await pull('incremental');
    expect(b.counts.absences).toMatchObject({ changed: 1 });
    expect([...(await absences()).keys()]).toEqual([]);
    // A wakes, its full listing leaving x out again: on its stale marks, the second omission in a row.
    await truncated(async () => {
      stall.open();
      await lostLease(a);
    });
    expect(await reasonOf(x)).toMatch(/edited while A stalled/);
    expect([...(await absences()).keys()]).toEqual([]);
    await keptByPartialListing(x);
  });

  it('a stalled pull’s late sighting does not change the marks a full pull holding the lease decides on', async () => {
    const x = await droppedByTruncation();
    await markedOnce(x);
    const stallB = gate();
    const stalled = stalling({ beforeAbsences: stallB.wait });
    await beatFor(stalled);
    // A stalls once it holds the lease, before it reads anything.
    const stallA = gate();
    const a = settled(pull('incremental', ts.store, stallA.wait));
    await stallA.reached;
    await silent();
    // B takes the lease over: a full pull that reads its marks (x marked), lists the absences without x again, and
    // waits before writing them.
    sandbox.setListingFaults({ 'pre-explained-absences': 'truncated' });
    const b = pull('full', stalled);
    await stallB.reached;
    sandbox.setListingFaults({});
    // x is edited; A wakes and lists it: its sighting would take x's mark away, under B's feet.
    await editAbsence(sandbox, x, 'edited while B listed');
    stallA.open();
    await lostLease(a);
    expect([...(await absences()).keys()]).toEqual([x]);
    expect(await reasonOf(x)).not.toMatch(/edited while B listed/);
    // B decides on the marks as it read them, which are the store's: two complete listings in a row left x out,
    // and nothing the store holds saw it between (A's sighting was refused), so it goes, as it would without A.
    stallB.open();
    const decided = await b;
    expect(decided.status).toBe('succeeded');
    expect(decided.counts.absences).toMatchObject({ deleted: 1 });
    expect([...(await absences()).keys()]).toEqual([]);
  });
});
