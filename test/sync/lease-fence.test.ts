// A pull that stalls past its lease (a GC pause, SIGSTOP, a lost network) can be taken over by another replica once
// its heartbeat has been silent for OWNER_SILENT_MS (SQLite), or its turn in the job queue lapsed (PostgreSQL); when it wakes, it must write nothing more into the store: not
// records, not cursors, not deletion marks. Pull A takes the school's lease and stalls (its onStart awaits); this
// process's heartbeat is made as old as a silent replica's; pull B takes the lease over and completes; the upstream
// moves on; A wakes. A ends as having lost its lease (an interrupted run saying so), and the store is as B left it.
// Two ways A would write: a resource's transaction (an edited absence), and the one statement of cursors an
// unchanged pull writes at its end.
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processOwner } from '../../src/jobs/heartbeat.ts';
import type { PullKind } from '../../src/jobs/pull-summary.ts';
import { createLogger, type Logger } from '../../src/log.ts';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { OWNER_SILENT_MS } from '../../src/store/liveness.ts';
import { PullInterruptedError, pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { lapsePullTurn } from '../support/lapse-turn.ts';
import {
  DIALECTS,
  editAbsence,
  openTestStore,
  snapshot,
  type TestStore,
  testClient,
  testSchool,
} from './helpers.ts';

describe.each(DIALECTS)('a pull taken over while it stalled (%s)', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const pull = (kind: PullKind, onStart?: () => Promise<void>, log?: Logger) => {
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    return pullSchool({
      now: () => new Date(sandbox.now()),
      store: ts.store,
      client: testClient(sandbox),
      school: testSchool(sandbox),
      kind,
      ...(onStart ? { onStart } : {}),
      ...(log ? { log } : {}),
    });
  };

  /** Pull A, stalled once it holds the lease and has recorded its run, until `wake()`. */
  async function stalledPull(kind: PullKind) {
    const { promise: woken, resolve: wake } = Promise.withResolvers<void>();
    const { promise: held, resolve: holding } = Promise.withResolvers<void>();
    const out = new PassThrough();
    const lines: { level: string; msg: string }[] = [];
    out.on('data', (b: Buffer) => {
      for (const l of b.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
    });
    const log = createLogger({ level: 'info', destination: out });
    const pulled = pull(
      kind,
      async () => {
        holding();
        await woken;
      },
      log,
    );
    const ended = pulled.then(
      (summary) => ({ summary, error: null, lines }),
      (error: unknown) => ({ summary: null, error, lines }),
    );
    await held;
    // Silent past OWNER_SILENT_MS, as a stalled replica's beat is: its lease may be taken over (SQLite); on
    // PostgreSQL the school's turn in the job queue lapses first, as a holder's silent for 10 s does.
    if (dialect === 'postgres') await lapsePullTurn(ts.env.DATABASE_URL!, 'hillcrest');
    else
      await ts.store.runs.beat(processOwner(), new Date(Date.now() - OWNER_SILENT_MS - 1_000).toISOString());
    return { wake, ended };
  }

  /** What a pull writes of the school: its records, cursors and deletion marks. */
  const written = async () => ({
    records: await snapshot(ts.store, 'hillcrest'),
    cursors: Object.fromEntries(await ts.store.records.cursors('hillcrest')),
    marks: await ts.store.records.listMissingOf('hillcrest', ['absences', 'sessions', 'teams', 'students']),
  });

  async function expectLostLease({
    summary,
    error,
    lines,
  }: {
    summary: unknown;
    error: unknown;
    lines: { level: string; msg: string }[];
  }) {
    expect(summary).toBeNull();
    expect(error).toBeInstanceOf(PullInterruptedError);
    expect((error as Error).message).toMatch(/lost the school's pull lease/);
    const runId = (error as PullInterruptedError).runId;
    const run = (await ts.store.runs.listRuns('hillcrest')).find((r) => r.id === runId);
    expect(run).toMatchObject({ status: 'interrupted' });
    expect(run!.errors.join('; ')).toMatch(/lost the school's pull lease/);
    // Said once, as what it is: no resource's failure, no error line.
    expect(lines.filter((l) => /lost the school's pull lease/.test(l.msg))).toMatchObject([
      { level: 'warn' },
    ]);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  }

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    expect((await pull('full')).status).toBe('succeeded');
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  it("a resource's transaction of the stalled pull writes nothing once another pull took the lease", async () => {
    const a = await stalledPull('full');
    const b = await pull('full');
    expect(b.status).toBe('succeeded');
    // The upstream moves on: what A reads when it wakes is not what B wrote.
    await editAbsence(sandbox, sandbox.school.absences[0]!.id, 'edited after B');
    const before = await written();
    a.wake();
    const ended = await a.ended;
    expect(await written()).toEqual(before);
    await expectLostLease(ended);
    // The lease is free again: the next pull takes it and reads the edit.
    const c = await pull('incremental');
    expect(c.status).toBe('succeeded');
    expect(c.counts.absences).toMatchObject({ changed: 1 });
  });

  it('the cursors an unchanged stalled pull writes at its end are not written once another pull took the lease', async () => {
    const a = await stalledPull('incremental');
    expect((await pull('incremental')).status).toBe('succeeded');
    // A minute on, A's cursors would move past B's.
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    const before = await written();
    a.wake();
    const ended = await a.ended;
    expect(await written()).toEqual(before);
    await expectLostLease(ended);
  });
});
