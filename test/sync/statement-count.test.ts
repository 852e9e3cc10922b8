// How many SQL statements a pull sends to the store, counted at the drivers (test/support/statements.ts) and printed
// by shape: the first (full) pull of a small school, a full pull that finds nothing changed, an unchanged
// incremental pull — the one a school pays at every fire — and an incremental pull that brings one edit. Each
// statement is a round trip on PostgreSQL (and a turn of the loop on SQLite), so each is held to an upper bound:
// a repeat per resource that creeps back in (a cursor, a progress line or a transaction each) fails here instead of in bench:sync.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts';
import { pullSchool } from '../../src/sync/pull.ts';
import { TEST_NOW } from '../support/clock.ts';
import { countStatements, describeCount, type StatementCount } from '../support/statements.ts';
import { DIALECTS, editAbsence, openTestStore, type TestStore, testClient, testSchool } from './helpers.ts';

/**
 * Upper bounds per pull and store. Counted on 7 Dec (issue 46) before the repeats were cut (first, unchanged full,
 * unchanged incremental): SQLite 156, 89, 49; PostgreSQL 138, 90, 50 — a cursor upsert per cursor, a progress
 * line, a transaction and a missing-records read per resource, a cursor read per resource at the plan, a read of
 * every live id per resource of a full pull, the kind's lock and a data-version bump per write call. After:
 * SQLite 130, 23, 17; PostgreSQL 110, 23, 16. Then (PostgreSQL's first pull) each resource's transaction took its
 * kinds' locks in its BEGIN, and wrote its data version, cursors and the run's progress line in one statement
 * just before its COMMIT: PostgreSQL 79. Then an incremental listing that brought nothing read no live hashes of
 * its kind (17 → 15 on SQLite, 16 → 14 on PostgreSQL), and a pull read its last runs, whether a full one
 * completed and the full-pull request in one statement instead of three (two on a full pull): SQLite 127, 22, 13;
 * PostgreSQL 78, 22, 12. Then a school written unchanged once by the store was not written again (serve writes
 * every school at its start; the first pull here still writes it): SQLite 127, 21, 12; PostgreSQL 78, 21, 11.
 * Then the cursors, the missing-record marks and (a quiet full turn of teams) the sensitive-rosters mark were
 * read in one statement at the run's start: SQLite 127, 20, 11; PostgreSQL 78, 20, 10.
 * An incremental pull that brings one edited absence (one resource's transaction) was counted on 7 Dec as the
 * marks' re-read in its transaction (43a0086) went, the lease's fence making it needless: SQLite 18 → 17,
 * PostgreSQL 16 → 15. Then (8 Dec, issue 45) a pull on PostgreSQL took its school's turn in pg-boss's queue: a send,
 * a fetch and a complete in place of the lease's release (the lease row is only raised), two more a pull: PostgreSQL
 * 78 → 82 (the school's queue is made once a process), 20 → 22, 10 → 12, 15 → 17.
 */
const BOUND = {
  sqlite: { first: 130, unchangedFull: 20, unchangedIncremental: 11, editedIncremental: 17 },
  postgres: { first: 82, unchangedFull: 22, unchangedIncremental: 12, editedIncremental: 17 },
};

/**
 * Statements that come with time, not with the work: a progress line at most once a second for resources that
 * wrote nothing (run-resources.ts) and a heartbeat every 10 s. A pull that took n seconds (a loaded machine) may
 * make n more than its bound.
 */
const timedAllowance = (ms: number) => Math.floor(ms / 1000);

describe.each(DIALECTS)('statements a pull sends to %s', (dialect) => {
  let sandbox: Sandbox;
  let ts: TestStore;
  const counted: Record<string, StatementCount> = {};
  const tookMs: Record<string, number> = {};

  beforeAll(async () => {
    sandbox = await startSandbox({ seed: 7, scale: 'small', now: TEST_NOW });
    ts = await openTestStore(dialect);
    // PostgreSQL's job queue started, as serve starts it before its first fire (its start is ~20 statements of its
    // own, once a process: `rostercal sync` pays them at its pull).
    await ts.store.fires?.start();
  });
  afterAll(async () => {
    await ts?.cleanup();
    await sandbox?.close();
  });

  const pull = async (name: string, kind: 'full' | 'incremental') => {
    const counter = countStatements();
    const began = Date.now();
    let summary: Awaited<ReturnType<typeof pullSchool>>;
    try {
      summary = await pullSchool({
        now: () => new Date(sandbox.now()),
        store: ts.store,
        client: testClient(sandbox),
        school: testSchool(sandbox),
        kind,
      });
    } finally {
      counted[name] = counter.stop();
      tookMs[name] = Date.now() - began;
    }
    console.info(describeCount(`${dialect}, ${name} (${summary.kind})`, counted[name]!));
    return summary;
  };

  it('a first pull, an unchanged full one, an unchanged incremental one and one bringing an edit stay within their bounds', async () => {
    const first = await pull('first', 'full');
    expect(first.status).toBe('succeeded');
    expect(first.counts.sessions!.added).toBeGreaterThan(0);
    const full = await pull('unchangedFull', 'full');
    expect(full.status).toBe('succeeded');
    expect(full.counts.sessions).toMatchObject({ added: 0, changed: 0, deleted: 0 });
    // A minute on: the unchanged pull's cursors and beat marks move, though it opened no transaction for them.
    const before = await ts.store.records.cursors('hillcrest');
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    const incremental = await pull('unchangedIncremental', 'incremental');
    expect(incremental.kind).toBe('incremental');
    expect(incremental.status).toBe('succeeded');
    expect(incremental.counts.sessions).toMatchObject({ added: 0, changed: 0, deleted: 0 });
    const after = await ts.store.records.cursors('hillcrest');
    for (const kind of ['sessions', 'absences', 'teams'])
      for (const key of [`updatedAfter:${kind}`, `readAt:${kind}`]) {
        expect(after.get(key), key).toBeDefined();
        expect(Date.parse(after.get(key)!) - Date.parse(before.get(key)!), key).toBeGreaterThanOrEqual(
          60_000,
        );
      }

    // One absence edited upstream: an incremental pull that writes one resource's transaction.
    await editAbsence(sandbox, sandbox.school.absences[0]!.id, 'edited');
    sandbox.setNow(new Date(Date.parse(sandbox.now()) + 60_000).toISOString());
    const edited = await pull('editedIncremental', 'incremental');
    expect(edited.counts.absences).toMatchObject({ changed: 1 });

    for (const [name, bound] of Object.entries(BOUND[dialect]))
      expect(counted[name]!.total, name).toBeLessThanOrEqual(bound + timedAllowance(tookMs[name]!));
  });
});
