// Fencing a pull's writes with its lease. A pull holds its school's lease (pull_leases) for as long as its process
// beats; one that stalls past OWNER_SILENT_MS (a GC pause, SIGSTOP, a lost network) can be taken over by another,
// and would then write beside it when it wakes. Each acquisition and takeover raises the lease's `fence` by one
// (runs-repository.ts), and every write of a pull is checked, inside its own transaction, against the fence the pull
// took: when the lease has moved on, or was freed, the transaction writes nothing and LeaseLostError ends the pull.
//
// The check costs no statement of its own (test/sync/statement-count.test.ts holds them):
// - SQLite: it runs in the BEGIN IMMEDIATE's exec, which holds the file's write lock until COMMIT, so no takeover
//   can come between it and the commit. A function of the connection (`rostercal_lease_lost`) raises the error.
// - PostgreSQL: it ends the statement a transaction already sends last (SqlContext.atCommit), reading the lease row
//   FOR SHARE: a takeover (an UPDATE of that row) waits for this commit, or has committed and the fence differs.
//   Taken at the end, not at BEGIN, the row lock lasts one round trip, so a pull meeting this one's lease is told
//   it is busy at once, not after this transaction.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DatabaseSync } from 'node:sqlite';
import { sql } from 'kysely';

/**
 * A school's pull lease as one pull took it: a write given it is made only while the lease is still held at this
 * fence, and otherwise throws LeaseLostError having written nothing.
 */
export interface PullFence {
  schoolId: string;
  fence: number;
}

/** The pull's lease was taken over (or freed) since it was acquired: nothing of the transaction was written. */
export class LeaseLostError extends Error {
  readonly schoolId: string;
  readonly fence: number;
  constructor(schoolId: string, fence: number) {
    super(
      `lost the school's pull lease (fence ${fence}): another pull took it over while this one was silent, ` +
        'and nothing more of this run was written',
    );
    this.name = 'LeaseLostError';
    this.schoolId = schoolId;
    this.fence = fence;
  }
}

const SQLITE_LOST = 'rostercal_lease_lost';

/** Lets the writer connection raise LeaseLostError from SQL (the check in sqliteFenceCheck). */
export function defineLeaseLost(db: DatabaseSync): void {
  db.function(SQLITE_LOST, { deterministic: false }, (schoolId, fence) => {
    throw new LeaseLostError(String(schoolId), Number(fence));
  });
}

const sqliteText = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** SQLite: a statement that raises LeaseLostError unless the school's lease is held at `fence` (no parameters). */
function sqliteFenceCheck(f: PullFence): string {
  const school = sqliteText(f.schoolId);
  const fence = Math.trunc(f.fence);
  return (
    `select ${SQLITE_LOST}(${school}, ${fence}) where not exists (select 1 from pull_leases ` +
    `where school_id = ${school} and fence = ${fence} and token <> '')`
  );
}

/** The check the next BEGIN of the call chain carries (SQLite), and whether it has been taken. */
const pendingCheck = new AsyncLocalStorage<{ text: string; taken: boolean }>();

/** Runs fn with `fence` to be checked by the BEGIN of the SQLite transaction it opens (sqliteBeginText). */
export function withSqliteFence<T>(fence: PullFence | undefined, fn: () => Promise<T>): Promise<T> {
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
export const pgFenceRead = (f: PullFence) =>
  sql<{
    fence: string | number;
  }>`select fence from pull_leases where school_id = ${f.schoolId} and token <> '' for share`;

/** A condition true while the school's lease is held at `fence` (FOR SHARE on PostgreSQL, as pgFenceRead). */
export const fenceHeld = (f: PullFence, dialect: 'sqlite' | 'postgres') =>
  sql`exists (select 1 from pull_leases where school_id = ${f.schoolId} and fence = ${f.fence} and token <> ''${
    dialect === 'postgres' ? sql` for share` : sql``
  })`;
