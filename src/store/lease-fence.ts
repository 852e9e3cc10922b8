// Fencing a pull's writes with its lease. A pull holds its school's lease (pull_leases) for as long as its process
// beats; one that stalls past OWNER_SILENT_MS (a GC pause, SIGSTOP, a lost network) can be taken over by another,
// and would then write beside it when it wakes. (On PostgreSQL the school's turn in the job queue decides; it lapses
// 10 s after its holder's last beat, or at once for a holder known dead, and the row is raised as the next pull takes
// the turn: sync/pull/lease.ts.) Each acquisition and takeover raises the lease's `fence` by one (runs-repository.ts),
// and every write of a pull is checked, inside its own transaction, against the fence the pull took: when the lease
// has moved on, or was freed, the transaction writes nothing and LeaseLostError ends the pull.
// A push's writes of its target's calendars and mappings are fenced the same way by the target's row in push_leases
// (push-repository.ts's `fencedBy`): on SQLite the target's lease; on PostgreSQL the row is raised as the push takes
// the target's turn in the job queue (fire-queue.ts), so a push whose turn lapsed while it stalled is refused too.
//
// The check costs no statement of its own (test/sync/statement-count.test.ts holds them):
// - SQLite: it runs in the BEGIN IMMEDIATE's exec, which holds the file's write lock until COMMIT, so no takeover
//   can come between it and the commit. A function of the connection (`rostercal_lease_lost`) raises the error.
// - PostgreSQL: it ends the statement a transaction already sends last (SqlContext.atCommit), reading the lease row
//   FOR SHARE: a takeover (an UPDATE of that row) waits for this commit, or has committed and the fence differs.
//   Taken at the end, not at BEGIN, the row lock lasts one round trip, so a pull meeting this one's lease is told
//   it is busy at once, not after this transaction. A write made on its own (a push's calendar or mappings, a
//   pull's last cursors) carries the check in its own WHERE instead (fenceHeld, pgUnderFence): one statement, no
//   transaction, and the same lock for as long.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseSync } from 'node:sqlite';
import { type RawBuilder, sql } from 'kysely';

/**
 * A school's pull lease as one pull took it: a write given it is made only while the lease is still held at this
 * fence, and otherwise throws LeaseLostError having written nothing.
 */
export interface PullFence {
  schoolId: string;
  fence: number;
}

/**
 * A push target's lease (`school/target`) as one push took it (SQLite: acquired; PostgreSQL: raised as the target's
 * turn in the job queue was taken, so a push whose turn lapsed is refused as one whose lease was taken over).
 */
export interface PushFence {
  target: string;
  fence: number;
}

export type LeaseFence = PullFence | PushFence;

/** The lease row a fence names: its table, key column and key. */
function leaseRow(f: LeaseFence): {
  table: 'pull_leases' | 'push_leases';
  column: 'school_id' | 'target';
  key: string;
} {
  return 'target' in f
    ? { table: 'push_leases', column: 'target', key: f.target }
    : { table: 'pull_leases', column: 'school_id', key: f.schoolId };
}

/** The lease was taken over (or freed) since it was acquired: nothing of the transaction was written. */
export class LeaseLostError extends Error {
  /** The pull's school, for a pull's lease. */
  readonly schoolId: string | undefined;
  /** The push's target (`school/target`), for a push's lease. */
  readonly target: string | undefined;
  readonly fence: number;
  constructor(lost: LeaseFence) {
    const push = 'target' in lost;
    super(
      push
        ? `lost the push lease of ${lost.target} (fence ${lost.fence}): another push took the target over while ` +
            'this one was silent, and nothing more of this run was written to the store'
        : `lost the school's pull lease (fence ${lost.fence}): another pull took it over while this one was silent, ` +
            'and nothing more of this run was written',
    );
    this.name = 'LeaseLostError';
    this.schoolId = push ? undefined : lost.schoolId;
    this.target = push ? lost.target : undefined;
    this.fence = lost.fence;
  }
}

const SQLITE_LOST = 'rostercal_lease_lost';

/** Lets the writer connection raise LeaseLostError from SQL (the check in sqliteFenceCheck). */
export function defineLeaseLost(db: DatabaseSync): void {
  db.function(SQLITE_LOST, { deterministic: false }, (table, key, fence) => {
    const n = Number(fence);
    throw new LeaseLostError(
      table === 'push_leases' ? { target: String(key), fence: n } : { schoolId: String(key), fence: n },
    );
  });
}

const sqliteText = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** SQLite: a statement that raises LeaseLostError unless the lease is held at `fence` (no parameters). */
function sqliteFenceCheck(f: LeaseFence): string {
  const { table, column, key: raw } = leaseRow(f);
  const key = sqliteText(raw);
  const fence = Math.trunc(f.fence);
  return (
    `select ${SQLITE_LOST}('${table}', ${key}, ${fence}) where not exists (select 1 from ${table} ` +
    `where ${column} = ${key} and fence = ${fence} and token <> '')`
  );
}

/** The check the next BEGIN of the call chain carries (SQLite), and whether it has been taken. */
const pendingCheck = new AsyncLocalStorage<{ text: string; taken: boolean }>();

/** Runs fn with `fence` to be checked by the BEGIN of the SQLite transaction it opens (sqliteBeginText). */
export function withSqliteFence<T>(fence: LeaseFence | undefined, fn: () => Promise<T>): Promise<T> {
  if (!fence) return fn();
  return pendingCheck.run({ text: sqliteFenceCheck(fence), taken: false }, fn);
}

/** The text SQLite's driver begins a write transaction with: the fence check after it, when one is asked for. */
export function sqliteBeginText(): string {
  const asked = pendingCheck.getStore();
  if (!asked || asked.taken) return 'BEGIN IMMEDIATE';
  asked.taken = true;
  return `BEGIN IMMEDIATE; ${asked.text}`;
}

/** PostgreSQL: the lease row's fence while it is held, locked until the transaction ends. */
export const pgFenceRead = (f: LeaseFence) => {
  const { table, column, key } = leaseRow(f);
  return sql<{
    fence: string | number;
  }>`select fence from ${sql.table(table)} where ${sql.ref(column)} = ${key} and token <> '' for share`;
};

/** The lease row while it is held at `fence`, locked FOR SHARE on PostgreSQL (pgFenceRead's lock). */
const heldRow = (f: LeaseFence, dialect: 'sqlite' | 'postgres') => {
  const { table, column, key } = leaseRow(f);
  return sql`select 1 from ${sql.table(table)} where ${sql.ref(column)} = ${key} and fence = ${f.fence} and token <> ''${
    dialect === 'postgres' ? sql` for share` : sql``
  }`;
};

/** A condition true while the lease is held at `fence` (FOR SHARE on PostgreSQL, as pgFenceRead). */
export const fenceHeld = (f: LeaseFence, dialect: 'sqlite' | 'postgres') =>
  sql`exists (${heldRow(f, dialect)})`;

/**
 * PostgreSQL: one statement that makes the data-modifying `write` only while the lease is held at `fence` (given
 * the condition for its WHERE) and answers whether it was: a write that finds nothing to change still tells a lease
 * lost from nothing to do, in its one round trip.
 */
export const pgUnderFence = (f: LeaseFence, write: (held: RawBuilder<unknown>) => RawBuilder<unknown>) =>
  sql<{ held: boolean }>`with fence_held as (${heldRow(f, 'postgres')}),
    fenced_write as (${write(sql`exists (select 1 from fence_held)`)})
    select exists (select 1 from fence_held) as held`;
