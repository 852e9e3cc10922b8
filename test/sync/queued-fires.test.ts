// Fires through the job queue replicas share (src/sync/queued-fires.ts), on real PostgreSQL: two replicas' stores,
// each with its own pg-boss. The replica whose insert wins takes the fire and runs it; the outcome (after the run's
// work that follows it) is read back on the other; a replica without the job, or a run that throws, settles the
// fire all the same; a take the database refused is tried again once it is back (a real network cut, pg-wire.ts);
// a stopping replica stops waiting for an outcome.
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobOutcome } from '../../src/jobs/job.ts';
import type { FireQueue, QueuedFire, TakenFire } from '../../src/store/fire-queue.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { type FireRun, QueuedFires } from '../../src/sync/queued-fires.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';

let db: TestDatabase;
let wire: PgWire;
let stores: Store[] = [];
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  wire = await startPgWire(db.url);
  // Replica a straight to the server; replica b through the relay, which a test may cut.
  stores = [await openStore({ databaseUrl: db.url, poolSize: 2 })];
  stores.push(await openStore({ databaseUrl: wire.url, poolSize: 2, migrate: false }));
  for (const s of stores) await s.fires!.start();
}, 60_000);
afterAll(async () => {
  for (const s of stores) await s.close().catch(() => {});
  await wire?.close();
  await db?.drop();
});

/** A fire no other test queued. */
const fire = (): QueuedFire => ({
  schoolId: `school-${n++}`,
  job: 'incremental',
  fireTime: new Date(Date.UTC(2026, 11, 1, 8, n)).toISOString(),
});

/** A replica's fires; `run` stands for its scheduler's path (a pull that resolves, its pushes after it). */
function replica(queue: FireQueue, run: (fire: TakenFire) => FireRun | null) {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const fires = new QueuedFires({ queue, log, run, retryMs: 100 });
  return { fires, lines };
}

const ran = (outcome: JobOutcome, after: Promise<unknown> = Promise.resolve()): FireRun => ({
  outcome: Promise.resolve(outcome),
  after,
});

describe('queued fires across replicas (PostgreSQL)', () => {
  const [a, b] = [() => stores[0]!.fires!, () => stores[1]!.fires!];

  it('the replica whose insert wins runs the fire; the other reads its outcome, settled after the work that follows', async () => {
    const f = fire();
    const runs: string[] = [];
    let finishPushes!: () => void;
    const pushes = new Promise<void>((r) => {
      finishPushes = r;
    });
    const winner = replica(a(), (t) => {
      runs.push(`${t.schoolId} ${t.job} ${t.fireTime}`);
      return ran({ status: 'succeeded', error: null }, pushes);
    });
    const other = replica(b(), () => {
      throw new Error('the other replica runs nothing');
    });
    const id = await winner.fires.enqueue(f);
    expect(id).not.toBeNull();
    expect(await other.fires.enqueue(f)).toBeNull();
    winner.fires.takeNow();
    let read = false;
    const there = other.fires.outcome(id!).then((o) => {
      read = true;
      return o;
    });
    // The pull is done, its pushes are not: the fire is not settled yet.
    await sleep(600);
    expect(read).toBe(false);
    finishPushes();
    expect(await there).toEqual({ status: 'succeeded', error: null });
    expect(await winner.fires.outcome(id!)).toEqual({ status: 'succeeded', error: null });
    expect(runs).toEqual([`${f.schoolId} incremental ${f.fireTime}`]);
    winner.fires.stop();
    other.fires.stop();
  }, 30_000);

  it('settles a fire it has no job for as skipped, and a run that throws as failed, with the reason', async () => {
    const none = replica(a(), () => null);
    const f = fire();
    const id = await none.fires.enqueue(f);
    none.fires.takeNow();
    expect(await none.fires.outcome(id!)).toEqual({
      status: 'skipped',
      error: `no job incremental of ${f.schoolId} on this replica`,
    });
    const throwing = replica(a(), () => {
      throw new Error('the pull could not start');
    });
    const g = fire();
    const id2 = await throwing.fires.enqueue(g);
    throwing.fires.takeNow();
    expect(await replica(b(), () => null).fires.outcome(id2!)).toEqual({
      status: 'failed',
      error: 'the pull could not start',
    });
    none.fires.stop();
    throwing.fires.stop();
  }, 30_000);

  it('takes again, once the database is back, a fire whose take the database refused', async () => {
    const runs: string[] = [];
    const cut = replica(b(), (t) => {
      runs.push(t.id);
      return ran({ status: 'succeeded', error: null });
    });
    cut.fires.start();
    const id = await replica(a(), () => null).fires.enqueue(fire());
    wire.cut();
    cut.fires.takeNow();
    for (let i = 0; i < 100 && !cut.lines.some((l) => l.includes('could not take a fire')); i++)
      await sleep(50);
    expect(cut.lines.join('')).toContain('could not take a fire from the queue');
    expect(runs).toEqual([]);
    wire.restore();
    const reader = replica(a(), () => null);
    // Taken again by the retry every 100 ms; not taken at all, the fire would wait here for ever.
    const outcome = await Promise.race([reader.fires.outcome(id!), sleep(10_000, 'never taken again')]);
    expect(outcome).toEqual({ status: 'succeeded', error: null });
    expect(runs).toEqual([id]);
    cut.fires.stop();
    reader.fires.stop();
  }, 60_000);

  it('stops waiting for an outcome when the replica stops', async () => {
    const id = await a().enqueue(fire());
    const waiting = replica(a(), () => null);
    const outcome = waiting.fires.outcome(id!);
    await sleep(300);
    waiting.fires.stop();
    expect(await outcome).toEqual({ status: 'skipped', error: 'the service is stopping' });
    // Not left for a later test's take.
    const [left] = await a().take(1);
    expect(left?.id).toBe(id);
    await a().finish(left!, { status: 'skipped' });
  }, 30_000);
});
