// A pull whose end the store could not take (issue 45, an outside tester's report): PostgreSQL goes out of reach
// for 2 s as the pull records its end, so neither its run's end nor the release of its school is written, and the
// process that held the school lives on. Once the database is back, the school's next pull runs (within one fire
// interval, never refused as "already running" on this process's own ended pull), and the run that could not
// record its end is closed (saying why), not `running` for as long as the process lives. A real network cut
// between the store and PostgreSQL (test/support/pg-wire.ts), at the statement of the run's end. Before the fix:
// refused as running 16-17 times, for 9 s (until pg-boss lapsed the turn whose beat had stopped), and the run
// still `running` 10 s after that. (SQLite: a statement waits out another process's lock for 60 s, so a short
// outage does not refuse the release there; a longer one, or a full disk, is covered by the same two rules,
// test/sync/pull/lease.test.ts and run-record.test.ts.)
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processOwner } from '../../src/jobs/heartbeat.ts';
import { createLogger } from '../../src/log.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import type { Store } from '../../src/store/types.ts';
import { PullBusyError, pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { createTestDatabase, type TestDatabase } from '../support/pg.ts';
import { type PgWire, startPgWire } from '../support/pg-wire.ts';
import { untilValue } from '../support/until.ts';
import { editAbsence, testClient, testSchool } from './helpers.ts';

/** The scheduler's incremental fire interval: the next pull must run within it. */
const FIRE_INTERVAL_MS = 30_000;
const CUT_MS = 2_000;

describe('a pull whose end the store could not take (PostgreSQL)', () => {
  let sandbox: Sandbox;
  let db: TestDatabase;
  let wire: PgWire;
  let store: Store;
  const lines: { level: string; msg: string }[] = [];
  const out = new PassThrough();
  out.on('data', (b: Buffer) => {
    for (const l of b.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
  });
  const log = createLogger({ level: 'info', destination: out });

  const pull = (kind: 'full' | 'incremental') => {
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    return pullSchool({
      now: () => new Date(sandbox.now()),
      store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind,
      log,
    });
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 11, scale: 'small', now: TEST_NOW });
    db = await createTestDatabase();
    wire = await startPgWire(db.url);
    store = await openStore({ databaseUrl: wire.url, poolSize: 4 });
    expect((await pull('full')).status).toBe('succeeded');
  }, 120_000);
  afterAll(async () => {
    wire?.restore();
    await store?.close().catch(() => {});
    await wire?.close();
    await db?.drop();
    await sandbox?.close();
  });

  it('once the database is back, the next pull runs within a fire interval and the cut run is closed', async () => {
    await editAbsence(sandbox, sandbox.school.absences[0]!.id, 'before the cut');
    // The database goes away as the run records its end (its status), for CUT_MS.
    wire.cutOn(/^update "sync_runs" set "status"/);
    const cutPull = await pull('incremental').then(
      (s) => ({ ok: s, err: null }),
      (err: unknown) => ({ ok: null, err }),
    );
    // The cut happened at the run's end: the pull did not end as succeeded.
    expect(cutPull.ok).toBeNull();
    await sleep(CUT_MS);
    wire.restore();
    const restoredAt = Date.now();

    // The next pull of the school, asked as the scheduler's fire asks (refused at once if another pull holds the
    // school), again and again until it runs: never refused on this process's own ended pull.
    const own = processOwner().id;
    const refusals: string[] = [];
    let next: Awaited<ReturnType<typeof pull>> | null = null;
    while (!next && Date.now() - restoredAt < FIRE_INTERVAL_MS + 5_000) {
      try {
        next = await pull('incremental');
      } catch (err) {
        if (err instanceof PullBusyError && err.holder.owner === own) refusals.push(err.message);
        else if (
          !(err instanceof PullBusyError) &&
          !/connect|terminat|ECONN|timeout|Connection/i.test(String(err))
        )
          throw err;
        await sleep(500);
      }
    }
    const tookMs = Date.now() - restoredAt;
    console.log(
      `next pull ran ${tookMs} ms after the database came back; refused as running here: ${refusals.length}`,
    );
    expect(next?.status).toBe('succeeded');
    expect.soft(tookMs).toBeLessThan(FIRE_INTERVAL_MS);
    expect.soft(refusals).toEqual([]);

    // The run cut at its end is closed (saying why), not `running` while this process lives.
    const cutRun = await untilValue(
      'the cut run closed',
      async () => {
        const runs = await store.runs.listRuns('hillcrest', { limit: 5 });
        const run = runs.find((r) => r.id !== next!.runId && r.id < next!.runId);
        return run && run.status !== 'running' ? run : undefined;
      },
      10_000,
      200,
    );
    // Failed in the store, said by this process once the store answers (or, had it not, closed as interrupted).
    expect(['failed', 'interrupted']).toContain(cutRun.status);
    expect(cutRun.errors.join('; ')).toMatch(/^(failed|interrupted): /);
    expect(await store.runs.listRuns('hillcrest', { limit: 5 })).not.toContainEqual(
      expect.objectContaining({ status: 'running' }),
    );
  }, 120_000);
});
