// Runs and who runs them: sync runs (pull and push) and their progress, each scheduled job's status, full pulls
// asked for, the heartbeats of the processes that run them, a school's pull lease and a push
// target's lease. Every moment judged here is the caller's (an `at` it passes) or the database's own clock
// (`databaseNow`), never this process's.
import { randomUUID } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import type { Instant } from '../domain/types.ts';
import { scrubSecrets } from '../log-text.ts';
import { databaseNow, maybeInstant, storedInstant } from './instants.ts';
import { ownerAlive } from './liveness.ts';
import type { JobStatusTable, SyncRunsTable } from './schema.ts';
import type { SqlContext } from './sql-context.ts';
import type {
  JobResult,
  JobStatus,
  JobStatusPatch,
  LastPull,
  PullLease,
  PullLeaseHolder,
  PullOpening,
  RunCounts,
  RunKind,
  RunOwner,
  RunProgress,
  RunStatus,
  RunsRepository,
  SchoolId,
  SyncRun,
} from './types.ts';

export class SqlRuns implements RunsRepository {
  readonly #ctx: SqlContext;

  constructor(ctx: SqlContext) {
    this.#ctx = ctx;
  }

  async startRun(run: {
    schoolId: SchoolId;
    kind: RunKind;
    target?: string | null;
    at: Instant;
    owner?: string | null;
  }): Promise<number> {
    const row = await this.#ctx.w
      .insertInto('sync_runs')
      .values({
        school_id: run.schoolId,
        kind: run.kind,
        target: run.target ?? null,
        status: 'running',
        started_at: storedInstant(run.at, 'startRun'),
        finished_at: null,
        counts: '{}',
        upstream_requests: 0,
        retries: 0,
        throttled: 0,
        errors: '[]',
        warning: null,
        owner: run.owner ?? null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return Number(row.id);
  }

  async finishRun(
    id: number,
    result: Omit<SyncRun, 'id' | 'schoolId' | 'kind' | 'target' | 'startedAt'> & { finishedAt: Instant },
  ): Promise<void> {
    const r = await this.#ctx.w
      .updateTable('sync_runs')
      .set({
        status: result.status,
        finished_at: storedInstant(result.finishedAt, 'finishRun'),
        counts: JSON.stringify(result.counts),
        upstream_requests: result.upstreamRequests,
        retries: result.retries,
        throttled: result.throttled,
        // Provider and upstream error text can echo credentials: none is ever stored.
        errors: JSON.stringify(result.errors.map(scrubSecrets)),
        warning: result.warning === null ? null : scrubSecrets(result.warning),
        ...(result.upstreamSkewMs === undefined ? {} : { upstream_skew_ms: result.upstreamSkewMs }),
      })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new Error(`finishRun: no sync run ${id}`);
  }

  async recordRunProgress(id: number, progress: RunProgress, opts?: { atCommit?: boolean }): Promise<void> {
    const query = this.#ctx.w
      .updateTable('sync_runs')
      .set({
        counts: JSON.stringify(progress.counts),
        upstream_requests: progress.upstreamRequests,
        retries: progress.retries,
        throttled: progress.throttled,
      })
      .where('id', '=', id)
      .where('status', '=', 'running');
    if (opts?.atCommit) await this.#ctx.atCommit(query.compile());
    else await query.execute();
  }

  async listRuns(schoolId: SchoolId, opts?: { kind?: RunKind; limit?: number }): Promise<SyncRun[]> {
    let q = this.#ctx.r
      .selectFrom('sync_runs')
      .leftJoin('run_owners', 'run_owners.owner', 'sync_runs.owner')
      .selectAll('sync_runs')
      .select(['run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at'])
      .select(databaseNow(this.#ctx.dialect).as('db_now'))
      .where('school_id', '=', schoolId);
    if (opts?.kind) q = q.where('kind', '=', opts.kind);
    const rows = await q
      .orderBy('id', 'desc')
      .limit(opts?.limit ?? 50)
      .execute();
    return rows.map((r) => runOf(r, new Date(r.db_now)));
  }

  async lastPulls(schoolIds: readonly SchoolId[]): Promise<Map<SchoolId, LastPull>> {
    const out = new Map<SchoolId, LastPull>();
    if (!schoolIds.length) return out;
    // Per school, two backward seeks on (school_id, kind, id) and one on its full runs: no scan of the history.
    const last = (kind: RunKind) =>
      sql<number>`(select max(l.id) from sync_runs l where l.school_id = s.id and l.kind = ${kind})`;
    const rows = await this.#ctx.r
      .selectFrom('schools as s')
      .leftJoin('sync_runs', (j) =>
        j.on(
          'sync_runs.id',
          '=',
          sql<number>`coalesce(case when ${last('full')} > ${last('incremental')} or ${last('incremental')} is null then ${last('full')} else ${last('incremental')} end, -1)`,
        ),
      )
      .leftJoin('run_owners', 'run_owners.owner', 'sync_runs.owner')
      .selectAll('sync_runs')
      .select(['s.id as sid', 'run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at'])
      .select(databaseNow(this.#ctx.dialect).as('db_now'))
      .select(
        sql<number>`case when exists (select 1 from sync_runs f where f.school_id = s.id and f.kind = 'full' and f.status in ('succeeded', 'suspicious')) then 1 else 0 end`.as(
          'completed_full',
        ),
      )
      .where((eb) => this.#ctx.inList(eb, 's.id', schoolIds, 'text'))
      .execute();
    for (const r of rows)
      out.set(r.sid, {
        // Whether a run's process is gone is judged on the database's clock, as listRuns does.
        last: r.id === null ? null : runOf(r as Parameters<typeof runOf>[0], new Date(r.db_now)),
        completedFull: Number(r.completed_full) === 1,
      });
    return out;
  }

  async pullOpening(schoolId: SchoolId): Promise<PullOpening> {
    // One row at least (no runs: one of nulls), with the last runs joined and the rest as scalar subqueries.
    const requested = (column: 'full_requested_at' | 'requested_by') =>
      sql<
        string | null
      >`(select ${sql.ref(`p.${column}`)} from pull_requests p where p.school_id = ${schoolId})`;
    const recent = this.#ctx.r
      .selectFrom('sync_runs')
      .selectAll()
      .where('school_id', '=', schoolId)
      .orderBy('id', 'desc')
      .limit(RECENT_RUNS)
      .as('r');
    const rows = await this.#ctx.r
      .selectFrom(sql<{ one: number }>`(select 1 as one)`.as('s'))
      .leftJoin(recent, (j) => j.on(sql<boolean>`1 = 1`))
      .leftJoin('run_owners', 'run_owners.owner', 'r.owner')
      .selectAll('r')
      .select(['run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at'])
      .select(databaseNow(this.#ctx.dialect).as('db_now'))
      .select([
        requested('full_requested_at').as('requested_at'),
        requested('requested_by').as('requested_by'),
        sql<number>`case when exists (select 1 from (select f.status from sync_runs f where f.school_id = ${schoolId} and f.kind = 'full' order by f.id desc limit ${COMPLETED_FULL_WITHIN}) x where x.status in ('succeeded', 'suspicious')) then 1 else 0 end`.as(
          'completed_full',
        ),
      ])
      .orderBy('r.id', 'desc')
      .execute();
    const first = rows[0]!;
    return {
      recent: rows
        .filter((r) => r.id !== null)
        .map((r) => runOf(r as Parameters<typeof runOf>[0], new Date(r.db_now))),
      fullRequest:
        first.requested_at === null || first.requested_by === null
          ? null
          : { at: first.requested_at, by: first.requested_by },
      completedFull: Number(first.completed_full) === 1,
    };
  }

  async saveJobStatus(status: JobStatusPatch): Promise<void> {
    const given = <T>(v: T | undefined, f: (v: T) => unknown) => (v === undefined ? undefined : f(v));
    const patch = {
      last_started_at: given(status.lastStartedAt, (v) => maybeInstant(v, 'lastStartedAt')),
      last_finished_at: given(status.lastFinishedAt, (v) => maybeInstant(v, 'lastFinishedAt')),
      last_status: status.lastStatus,
      last_error: given(status.lastError, (v) => (v === null ? null : scrubSecrets(v))),
      next_run_at: given(status.nextRunAt, (v) => maybeInstant(v, 'nextRunAt')),
      owner: status.owner,
      last_skipped_at: given(status.lastSkippedAt, (v) => maybeInstant(v, 'lastSkippedAt')),
      last_skip_reason: given(status.lastSkipReason, (v) => (v === null ? null : scrubSecrets(v))),
    };
    const values = Object.fromEntries(
      Object.entries(patch).filter(([, v]) => v !== undefined),
    ) as Partial<JobStatusTable>;
    const insert = { school_id: status.schoolId, job: status.job, ...values } as JobStatusTable;
    const q = this.#ctx.w.insertInto('job_status').values(insert);
    await (Object.keys(values).length === 0
      ? q.onConflict((oc) => oc.columns(['school_id', 'job']).doNothing())
      : q.onConflict((oc) => oc.columns(['school_id', 'job']).doUpdateSet(values))
    ).execute();
  }

  async listJobStatus(schoolId?: SchoolId): Promise<JobStatus[]> {
    let q = this.#ctx.r
      .selectFrom('job_status')
      .leftJoin('run_owners', 'run_owners.owner', 'job_status.owner')
      .selectAll('job_status')
      .select(['run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at'])
      .select(databaseNow(this.#ctx.dialect).as('db_now'));
    if (schoolId !== undefined) q = q.where('school_id', '=', schoolId);
    const rows = await q.orderBy('school_id').orderBy('job').execute();
    return rows.map((r) => {
      const unfinished =
        r.last_started_at !== null && (r.last_finished_at === null || r.last_finished_at < r.last_started_at);
      return {
        schoolId: r.school_id,
        job: r.job,
        lastStartedAt: r.last_started_at,
        lastFinishedAt: r.last_finished_at,
        lastStatus: r.last_status as JobResult | null,
        lastError: r.last_error,
        nextRunAt: r.next_run_at,
        owner: r.owner,
        lastSkippedAt: r.last_skipped_at,
        lastSkipReason: r.last_skip_reason,
        state: unfinished ? (ownerGone(r, new Date(r.db_now)) ? 'interrupted' : 'running') : null,
      };
    });
  }

  async requestFullPull(schoolId: SchoolId, at: Instant, by: string): Promise<void> {
    const full_requested_at = storedInstant(at, 'requestFullPull');
    await this.#ctx.w
      .insertInto('pull_requests')
      .values({ school_id: schoolId, full_requested_at, requested_by: by })
      .onConflict((oc) =>
        oc
          .column('school_id')
          .doUpdateSet({ full_requested_at, requested_by: by })
          .where('pull_requests.full_requested_at', '<', full_requested_at),
      )
      .execute();
  }

  async fullPullRequest(schoolId: SchoolId): Promise<{ at: Instant; by: string } | null> {
    const row = await this.#ctx.w
      .selectFrom('pull_requests')
      .select(['full_requested_at', 'requested_by'])
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    return row ? { at: row.full_requested_at, by: row.requested_by } : null;
  }

  async satisfyFullPull(schoolId: SchoolId, startedAt: Instant): Promise<void> {
    await this.#ctx.w
      .deleteFrom('pull_requests')
      .where('school_id', '=', schoolId)
      .where('full_requested_at', '<=', storedInstant(startedAt, 'satisfyFullPull'))
      .execute();
  }

  // --- run owners and pull leases

  async beat(owner: RunOwner, at: Instant): Promise<void> {
    const heartbeat_at = storedInstant(at, 'beat');
    await this.#ctx.w
      .insertInto('run_owners')
      .values({
        owner: owner.id,
        host: owner.host,
        pid: owner.pid,
        started_at: storedInstant(owner.startedAt, 'owner start'),
        heartbeat_at,
      })
      .onConflict((oc) => oc.column('owner').doUpdateSet({ heartbeat_at }))
      .execute();
  }

  async forgetOwner(ownerId: string): Promise<void> {
    await this.#ctx.w.deleteFrom('run_owners').where('owner', '=', ownerId).execute();
    // Freed, not deleted: a lease's row keeps its fence (lease-fence.ts).
    for (const table of ['pull_leases', 'push_leases'] as const)
      await this.#ctx.w
        .updateTable(table)
        .set({ owner: '', token: '' })
        .where('owner', '=', ownerId)
        .execute();
    // Owners silent for a day are long gone: keep the table small.
    const horizon = databaseNow(this.#ctx.dialect, 86_400_000);
    await this.#ctx.w.deleteFrom('run_owners').where('heartbeat_at', '<', horizon).execute();
  }

  acquirePullLease(schoolId: SchoolId, ownerId: string, at: Instant): Promise<PullLease> {
    return this.#acquireLease(LEASES.pull, schoolId, ownerId, at);
  }

  releasePullLease(schoolId: SchoolId, token: string): Promise<void> {
    return this.#releaseLease(LEASES.pull, schoolId, token);
  }

  acquirePushLease(target: string, ownerId: string, at: Instant): Promise<PullLease> {
    return this.#acquireLease(LEASES.push, target, ownerId, at);
  }

  releasePushLease(target: string, token: string): Promise<void> {
    return this.#releaseLease(LEASES.push, target, token);
  }

  seizePushLease(target: string, ownerId: string, at: Instant): Promise<{ token: string; fence: number }> {
    return this.#seizeLease(LEASES.push, target, ownerId, at, randomUUID());
  }

  async seizePullLease(schoolId: SchoolId, ownerId: string, at: Instant, turn: string): Promise<number> {
    return (await this.#seizeLease(LEASES.pull, schoolId, ownerId, at, turn)).fence;
  }

  async pullLeaseHolder(schoolId: SchoolId, at: Instant): Promise<PullLeaseHolder | null> {
    const [held] = (
      await sql<HeldLease>`
        select l.owner, l.token, l.acquired_at, o.host, o.pid, o.heartbeat_at
        from pull_leases l left join run_owners o on o.owner = l.owner
        where l.school_id = ${schoolId} and l.token <> ''`.execute(this.#ctx.w)
    ).rows;
    if (!held) return null;
    return {
      owner: held.owner,
      since: held.acquired_at,
      turn: held.token,
      gone: ownerGone(held, new Date(storedInstant(at, 'lease'))),
    };
  }

  /** The lease, held or not, its fence raised: the job queue gave its turn to this caller, so whoever held it is past it. */
  async #seizeLease(
    lease: LeaseTable,
    key: string,
    ownerId: string,
    at: Instant,
    token: string,
  ): Promise<{ token: string; fence: number }> {
    const acquired_at = storedInstant(at, 'lease');
    const table = sql.table(lease.table);
    const column = sql.ref(lease.key);
    const { rows } = await sql<{ fence: number | string }>`
      insert into ${table} (${column}, owner, token, acquired_at, fence)
      values (${key}, ${ownerId}, ${token}, ${acquired_at}, 1)
      on conflict (${column}) do update set owner = excluded.owner, token = excluded.token,
        acquired_at = excluded.acquired_at, fence = ${table}.fence + 1
      returning fence`.execute(this.#ctx.w);
    return { token, fence: Number(rows[0]!.fence) };
  }

  async #acquireLease(lease: LeaseTable, key: string, ownerId: string, at: Instant): Promise<PullLease> {
    const acquired_at = storedInstant(at, 'lease');
    const token = randomUUID();
    const table = sql.table(lease.table);
    const column = sql.ref(lease.key);
    // Free (never taken, or released: its row kept with token ''): taken in one statement, its fence raised by one.
    const taken = await sql<{ fence: number | string }>`
      insert into ${table} (${column}, owner, token, acquired_at, fence)
      values (${key}, ${ownerId}, ${token}, ${acquired_at}, 1)
      on conflict (${column}) do update set owner = excluded.owner, token = excluded.token,
        acquired_at = excluded.acquired_at, fence = ${table}.fence + 1
      where ${table}.token = '' returning fence`.execute(this.#ctx.w);
    if (taken.rows.length > 0) return { acquired: true, token, fence: Number(taken.rows[0]!.fence) };
    const [held] = (
      await sql<HeldLease>`
        select l.owner, l.token, l.acquired_at, o.host, o.pid, o.heartbeat_at
        from ${table} l left join run_owners o on o.owner = l.owner
        where ${sql.ref(`l.${lease.key}`)} = ${key}`.execute(this.#ctx.w)
    ).rows;
    // Released between the two statements: try once more from the start.
    if (!held || held.token === '') return this.#acquireLease(lease, key, ownerId, at);
    const beat = held.heartbeat_at
      ? { host: held.host ?? '', pid: Number(held.pid), heartbeatAt: held.heartbeat_at }
      : null;
    // Judged at the caller's moment, the one the lease is taken at: one clock, the caller's.
    if (ownerAlive(beat, new Date(acquired_at))) {
      return { acquired: false, holder: { owner: held.owner, since: held.acquired_at, token: held.token } };
    }
    // Its owner is gone: take it over, unless another caller just did (compare-and-swap on the token). The fence
    // moves on, so whatever the silent holder still tries to write is refused (lease-fence.ts).
    const over = await sql<{ fence: number | string }>`
      update ${table} set owner = ${ownerId}, token = ${token}, acquired_at = ${acquired_at}, fence = fence + 1
      where ${column} = ${key} and token = ${held.token} returning fence`.execute(this.#ctx.w);
    if (over.rows.length > 0) return { acquired: true, token, fence: Number(over.rows[0]!.fence) };
    return this.#acquireLease(lease, key, ownerId, at);
  }

  /** Frees the lease taken with `token`; its row stays, and with it the fence the next acquisition raises. */
  async #releaseLease(lease: LeaseTable, key: string, token: string): Promise<void> {
    await sql`update ${sql.table(lease.table)} set owner = '', token = ''
      where ${sql.ref(lease.key)} = ${key} and token = ${token}`.execute(this.#ctx.w);
  }
}

/** The runs a pull looks through for ones whose process died (PullOpening.recent). */
const RECENT_RUNS = 20;
/** How far back a pull looks for a completed full one (PullOpening.completedFull). */
const COMPLETED_FULL_WITHIN = 50;

/**
 * The lease tables, one per kind of work and alike but for what they lease: a school's pulls, a push target's
 * pushes (a target's lease is never a school's, whatever the two are named).
 */
const LEASES = {
  pull: { table: 'pull_leases', key: 'school_id' },
  push: { table: 'push_leases', key: 'target' },
} as const;
type LeaseTable = (typeof LEASES)[keyof typeof LEASES];

interface HeldLease {
  owner: string;
  token: string;
  acquired_at: string;
  host: string | null;
  pid: number | null;
  heartbeat_at: string | null;
}

/** Whether the owner a row names has stopped beating (a row with no owner cannot tell, so it is not). */
function ownerGone(
  r: { owner: string | null } & { host: string | null; pid: number | null; heartbeat_at: string | null },
  now: Date,
): boolean {
  if (r.owner === null) return false;
  const beat =
    r.heartbeat_at === null ? null : { host: r.host ?? '', pid: Number(r.pid), heartbeatAt: r.heartbeat_at };
  return !ownerAlive(beat, now);
}

/** A run recorded as running whose owner is gone is interrupted, whatever the row still says. */
function effectiveStatus(
  r: { status: string; owner: string | null; started_at: string } & {
    host: string | null;
    pid: number | null;
    heartbeat_at: string | null;
  },
  now: Date,
): RunStatus {
  if (r.status !== 'running') return r.status as RunStatus;
  // Recorded before runs had owners: nothing to tell by (the next pull closes it once it is old).
  if (r.owner === null) return 'running';
  return ownerGone(r, now) ? 'interrupted' : 'running';
}

/** A row of sync_runs with its owner's liveness, as a run (its status as the owner's heartbeat says). */
function runOf(
  r: Selectable<SyncRunsTable> & { host: string | null; pid: number | null; heartbeat_at: string | null },
  now: Date,
): SyncRun {
  return {
    id: Number(r.id),
    schoolId: r.school_id,
    kind: r.kind as RunKind,
    target: r.target,
    status: effectiveStatus(r, now),
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    counts: JSON.parse(r.counts) as Record<string, RunCounts>,
    upstreamRequests: Number(r.upstream_requests),
    retries: Number(r.retries),
    throttled: Number(r.throttled),
    errors: JSON.parse(r.errors) as string[],
    warning: r.warning,
    owner: r.owner,
    upstreamSkewMs: r.upstream_skew_ms === null ? null : Number(r.upstream_skew_ms),
  };
}
