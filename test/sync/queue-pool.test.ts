// The job queue's own pool run dry (PostgreSQL, store/fire-queue.ts). On 7 Dec its pool of 3 ran dry under load:
// sends waited pg-boss's 10 s for a connection, node-cron counted the next fires as overlaps, and the fires whose
// send gave up were said only as "timeout exceeded when trying to connect" in the log, nothing in the job's
// status. Here the database holds every queue call that has a connection (the queue's job table locked, as a
// slow database would), and more schools fire at once than the pool has connections: each fire either runs once
// the database answers again or is said, in its job's status, problems() and the log, to have been let pass
// because the store (the queue's pool, named) failed — within the store's connect bound, before the next fire.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { JobOutcome } from '../../src/jobs/job.ts';
import { QUEUE_POOL_MAX } from '../../src/store/fire-queue.ts';
import { PG_CONNECT_TIMEOUT_S } from '../../src/store/index.ts';
import { type SchedulerHandle, startScheduler } from '../../src/sync/scheduler.ts';
import { until } from '../support/until.ts';
import { openTestStore, type TestStore, testSchool } from './helpers.ts';

let ts: TestStore;
let scheduler: SchedulerHandle | null = null;
/** More schools than the queue's pool has connections. */
const SCHOOLS = QUEUE_POOL_MAX + 4;
const NEVER = '0 3 1 1 *';

beforeAll(async () => {
  ts = await openTestStore('postgres');
});
afterAll(async () => {
  await scheduler?.stop();
  await ts?.cleanup();
});

it('a dry queue pool lets no fire pass unsaid: each runs, or its status says the store failed', async () => {
  const schools = Array.from({ length: SCHOOLS }, (_, i) =>
    testSchool(
      { url: 'http://127.0.0.1:9', token: 'unused' },
      { id: `s${String(i).padStart(2, '0')}`, schedules: { incremental: NEVER, full: NEVER } },
    ),
  );
  const ran: string[] = [];
  scheduler = await startScheduler({
    store: ts.store,
    config: { schools },
    clientFor: () => {
      throw new Error('no pull in this test');
    },
    // The queue's part alone: a job that does nothing, fired through the same election as a pull.
    extraJobs: (school) => [
      {
        name: 'noop',
        cron: NEVER,
        run: async () => {
          ran.push(school.id);
          return { status: 'succeeded' };
        },
      },
    ],
  });

  const admin = new pg.Client({ connectionString: ts.env.DATABASE_URL });
  await admin.connect();
  try {
    const schema = (await admin.query<{ s: string }>('select current_schema() as s')).rows[0]!.s;
    await admin.query('begin');
    await admin.query(`lock table ${pg.escapeIdentifier(schema)}.job in access exclusive mode`);
    const t = '2026-11-23T01:00:00.000Z';
    const startedAt = Date.now();
    const fires = schools.map((s) =>
      scheduler!
        .fire(s.id, 'noop', t)
        .then((outcome): { id: string; outcome: JobOutcome | null; ms: number } => ({
          id: s.id,
          outcome,
          ms: Date.now() - startedAt,
        })),
    );
    // The database answers again after a fire's interval (10 s; pg-boss's own connect wait) has passed.
    await new Promise((r) => setTimeout(r, 11_000));
    await admin.query('commit');
    const results = await Promise.all(fires);

    const failed = results.filter((r) => r.outcome === null);
    const succeeded = results.filter((r) => r.outcome?.status === 'succeeded');
    expect(failed.length + succeeded.length, JSON.stringify(results)).toBe(SCHOOLS);
    // More fires than connections: some had none, and said so within the bound (not pg-boss's 10 s, a fire's
    // whole interval, which made node-cron count the next fire an overlap).
    expect(failed.length, JSON.stringify(results)).toBeGreaterThan(0);
    for (const f of failed) expect(f.ms, f.id).toBeLessThan(PG_CONNECT_TIMEOUT_S * 1000 + 1500);
    const said = /the job queue got no PostgreSQL connection within \d+ s \(its pool of \d+ all busy/;
    const problems = scheduler.problems();
    for (const f of failed) {
      expect(problems[f.id], f.id).toMatch(said);
      // The job's status says it: the store's own pool was not dry, so it could.
      await until(`${f.id}'s status`, async () =>
        (await ts.store.runs.listJobStatus(f.id)).some(
          (j) => j.job === 'noop' && j.lastSkippedAt !== null && /^store: /.test(j.lastSkipReason ?? ''),
        ),
      );
      const job = (await ts.store.runs.listJobStatus(f.id)).find((j) => j.job === 'noop')!;
      expect(job.lastSkipReason).toMatch(said);
    }
    // The others ran, once each, after the database answered.
    expect(ran.sort()).toEqual(succeeded.map((r) => r.id).sort());
  } finally {
    await admin.query('rollback').catch(() => {});
    await admin.end();
  }
}, 120_000);
