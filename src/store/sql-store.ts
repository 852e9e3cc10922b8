// The Store over Kysely: one implementation for SQLite and PostgreSQL, made of repositories that share one
// SqlContext (the connections and the transaction of the current call chain). Dialect differences stay in the
// dialect setup (index.ts), the driver (sqlite-dialect.ts), the bulk statements (sql-context.ts) and the
// migrations.
import { type Kysely, sql } from 'kysely';
import { SqlFamilyActs } from './family-acts-repository.ts';
import { SqlFeedLinks } from './feed-links-repository.ts';
import type { FireQueue, JobQueue, PullTurns, PushTurns } from './fire-queue.ts';
import { kindSpec } from './kinds.ts';
import { type Dialect, pendingMigrations, runMigrations } from './migrations.ts';
import { SqlPush } from './push-repository.ts';
import { SqlRecords } from './records-repository.ts';
import { SqlRenderedFeeds } from './rendered-feeds-repository.ts';
import { SqlRuns } from './runs-repository.ts';
import type { DB } from './schema.ts';
import { SqlContext } from './sql-context.ts';
import { SqlStaffAccess } from './staff-access-repository.ts';
import type { Store, TransactionOptions } from './types.ts';

export interface SqlStoreOptions {
  dialect: Dialect;
  /** Writes and transactions. */
  db: Kysely<DB>;
  /** Reads outside transactions; SQLite uses a second connection so reads don't wait behind the pull. */
  reader?: Kysely<DB>;
  /** What checkIntegrity runs (SQLite: quick_check on a worker thread); without it the store has no check. */
  checkIntegrity?: () => Promise<string | null>;
  /** Why the connections were opened read-only (see Store.readOnly). */
  readOnly?: string | null;
  /** The job queue replicas share (PostgreSQL): the scheduled fires, the schools' and push targets' turns. */
  jobs?: JobQueue;
}

export class SqlStore implements Store {
  readonly dialect: Dialect;
  readonly readOnly: string | null;
  readonly fires: FireQueue | null;
  readonly pushTurns: PushTurns | null;
  readonly pullTurns: PullTurns | null;
  readonly records: SqlRecords;
  readonly runs: SqlRuns;
  readonly feeds: SqlRenderedFeeds;
  readonly links: SqlFeedLinks;
  readonly push: SqlPush;
  readonly access: SqlStaffAccess;
  readonly families: SqlFamilyActs;
  readonly #ctx: SqlContext;
  readonly #checkIntegrity: (() => Promise<string | null>) | undefined;

  constructor(opts: SqlStoreOptions) {
    this.dialect = opts.dialect;
    this.readOnly = opts.readOnly ?? null;
    this.fires = opts.jobs ?? null;
    this.pushTurns = opts.jobs ?? null;
    this.pullTurns = opts.jobs ?? null;
    this.#checkIntegrity = opts.checkIntegrity;
    const ctx = new SqlContext(opts);
    this.#ctx = ctx;
    this.records = new SqlRecords(ctx);
    this.runs = new SqlRuns(ctx);
    this.feeds = new SqlRenderedFeeds(ctx);
    this.links = new SqlFeedLinks(ctx);
    this.push = new SqlPush(ctx);
    this.access = new SqlStaffAccess(ctx);
    this.families = new SqlFamilyActs(ctx);
  }

  async migrate(): Promise<string[]> {
    if (this.readOnly) {
      // Reading needs the current schema; a read-only store can be read only when it already has it.
      const pending = await pendingMigrations(this.#ctx.reader);
      if (pending.length)
        throw new Error(
          `the store can be read but not written (${this.readOnly}), and it needs ${pending.length} migration(s) it cannot take (${pending.join(', ')}): start once with it writable`,
        );
      return [];
    }
    return runMigrations(this.#ctx.db, this.dialect);
  }

  async close(): Promise<void> {
    const { db, reader } = this.#ctx;
    await this.fires?.close();
    if (reader !== db) await reader.destroy();
    await db.destroy();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.#ctx.r);
  }

  async checkIntegrity(): Promise<string | null> {
    return this.#checkIntegrity ? this.#checkIntegrity() : null;
  }

  transaction<T>(fn: (tx: Store) => Promise<T>, opts?: TransactionOptions): Promise<T> {
    const w = opts?.writes;
    const locks = w ? w.kinds.map((k) => [w.schoolId, kindSpec(k).table] as const) : [];
    const fence = w?.fence === undefined ? {} : { fence: { schoolId: w.schoolId, fence: w.fence } };
    return this.#ctx.transaction(() => fn(this), { locks, ...fence, bounded: opts?.bounded === true });
  }
}
