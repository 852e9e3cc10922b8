// What every repository of the store shares: the connections, the transaction of the current call chain, and
// the bulk statements (multi-row inserts, COPY, id lists) that are written differently per dialect.
//
// Transactions follow the async call chain (AsyncLocalStorage): inside `transaction(fn)` every call on any
// repository of this store joins the open transaction, so nested calls never deadlock on SQLite's single writer
// connection and behave the same on PostgreSQL.

import { AsyncLocalStorage } from 'node:async_hooks';
import {
  CompiledQuery,
  type Expression,
  type Kysely,
  type RawBuilder,
  type SqlBool,
  sql,
  type Transaction,
} from 'kysely';
import type { Id } from '../domain/types.ts';
import { fenceHeld, type LeaseFence, LeaseLostError, pgFenceRead, withSqliteFence } from './lease-fence.ts';
import type { Dialect } from './migrations.ts';
import { type LockKey, withBeginLocks } from './pg-begin-locks.ts';
import { CopyRows, type CopyValue } from './pg-copy.ts';
import { CopyText } from './pg-copy-text.ts';
import { withTransactionDeadline } from './pg-deadline.ts';
import type { DB } from './schema.ts';

/** Parameters per statement: below SQLite's 32,766 and PostgreSQL's 65,535 bound-parameter limits. */
const MAX_PARAMS = 30_000;
/** Rows per multi-row statement; larger batches stop paying off and make statements huge to compile. */
const MAX_ROWS = 500;
/*
 * SQLite runs every statement synchronously on the thread that answers requests, and nothing can interrupt one:
 * the loop turns only between statements (sqlite-dialect.ts). So on SQLite each statement is kept to a few ms of
 * a district's rows (~1.4 KB of JSON a session); bench:feeds prints serve's longest hold during a district pull.
 */
/** Ids per `IN (...)` list on SQLite: each id is a row read, 900 of a district's sessions took 14-20 ms. */
const SQLITE_IN_CHUNK = 250;
/** Rows per statement when SQLite reads every live row of a kind: 2,000 sessions took 10-30 ms, 500 take 3-4. */
const SQLITE_READ_ROWS = 500;
/** Rows per statement when PostgreSQL does (its server does the work; fewer round trips). */
const PG_READ_ROWS = 2_000;
/**
 * Characters of parameters per multi-row write on SQLite: an upsert of 500 sessions (~700 KB) took 23-42 ms
 * of CPU, of 64 (~128 KB) a few ms.
 */
export const SQLITE_STATEMENT_CHARS = 128_000;
/** Rows per bulk insert on PostgreSQL: bounds one statement's memory. */
export const PG_BULK_ROWS = 5_000;
/** Characters of JSON per bulk insert on PostgreSQL: bounds it where rows are large (teams with their members). */
const PG_BULK_CHARS = 2_000_000;

export type Row = Record<string, string | number | null>;

export type Executor = Kysely<DB> | Transaction<DB>;

/**
 * [start, length] of each multi-row statement's rows: full batches of `size`, then the rest in power-of-two sizes
 * (180 rows: 128, 32, 16, 4). Each distinct row count is a statement of its own in the connection's cache,
 * holding SQLite's compiled program; with write chunks cut by text, remainders of every size raised a district
 * sync's peak memory (bench:sync prints it). This way a table and column set has at most ~10 shapes.
 */
function statementRanges(count: number, size: number): [start: number, length: number][] {
  const out: [number, number][] = [];
  let i = 0;
  for (; i + size <= count; i += size) out.push([i, size]);
  for (let n = 2 ** Math.floor(Math.log2(size)); n >= 1 && i < count; n /= 2) {
    if (i + n <= count) {
      out.push([i, n]);
      i += n;
    }
  }
  return out;
}

/**
 * Rows per multi-row SQLite write of `rows`: as many of the largest as fit SQLITE_STATEMENT_CHARS, rounded down
 * to a power of two so that a table keeps the few statement shapes statementRanges makes (at least one row).
 */
export function sqliteRowsPerStatement(rows: readonly Row[]): number {
  let widest = 1;
  for (const row of rows) {
    let chars = 0;
    for (const v of Object.values(row)) chars += typeof v === 'string' ? v.length : 8;
    if (chars > widest) widest = chars;
  }
  const fit = Math.floor(SQLITE_STATEMENT_CHARS / widest);
  return fit >= MAX_ROWS ? MAX_ROWS : Math.max(1, 2 ** Math.floor(Math.log2(Math.max(1, fit))));
}

/** An upsert's key, and the columns a conflicting row takes from the new one (none: the row is left as it is). */
export interface RowConflict {
  columns: string[];
  update: string[];
}

/**
 * The rows as the JSON parameters of PostgreSQL's bulk inserts, one a statement: each ends at PG_BULK_ROWS rows or
 * PG_BULK_CHARS of JSON, whichever comes first. 5,000 sessions are 15 MB of text, held three times over (the rows,
 * the joined JSON, the protocol buffer) while it is sent, so each batch is made only as the one before is written.
 */
function* pgJsonBatches(rows: readonly Row[]): Generator<string, void, undefined> {
  let parts: string[] = [];
  let chars = 0;
  for (const row of rows) {
    const text = JSON.stringify(row);
    parts.push(text);
    chars += text.length;
    if (parts.length >= PG_BULK_ROWS || chars >= PG_BULK_CHARS) {
      const json = `[${parts.join(',')}]`;
      parts = [];
      chars = 0;
      yield json;
    }
  }
  if (parts.length > 0) yield `[${parts.join(',')}]`;
}

const lockName = (key: LockKey) => `${key[0]}\t${key[1]}`;

/** PostgreSQL's COPY of `columns` into `table`, its rows the statement's one parameter (pg-copy.ts). */
function copyStatement(table: string, columns: readonly string[]): string {
  return `copy "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) from stdin`;
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface SqlContextOptions {
  dialect: Dialect;
  /** Writes and transactions. */
  db: Kysely<DB>;
  /** Reads outside transactions; SQLite uses a second connection so reads don't wait behind the pull. */
  reader?: Kysely<DB>;
}

export class SqlContext {
  readonly dialect: Dialect;
  readonly db: Kysely<DB>;
  readonly reader: Kysely<DB>;
  readonly #tx = new AsyncLocalStorage<Transaction<DB>>();
  /** What runs at the end of every transaction, before its commit (deferred rows written in one go). */
  readonly #beforeCommit: (() => Promise<void>)[] = [];
  /** SQLite multi-row INSERT texts by table, columns, row count and conflict clause (see insertSqlite). */
  readonly #insertTexts = new Map<string, string>();
  /** The advisory locks each open transaction holds (PostgreSQL), until it ends (see lock). */
  readonly #held = new WeakMap<Transaction<DB>, Set<string>>();
  /** Each open transaction's writes left for its end (see atCommit). */
  readonly #atCommit = new WeakMap<Transaction<DB>, CompiledQuery[]>();

  constructor(opts: SqlContextOptions) {
    this.dialect = opts.dialect;
    this.db = opts.db;
    this.reader = opts.reader ?? opts.db;
  }

  /** Executor for writes: the open transaction of this call chain, else the writer. */
  get w(): Executor {
    return this.#tx.getStore() ?? this.db;
  }
  /** Executor for reads: the open transaction of this call chain (to see its own writes), else the reader. */
  get r(): Executor {
    return this.#tx.getStore() ?? this.reader;
  }
  /** The open transaction of this call chain, if any. */
  get openTransaction(): Transaction<DB> | undefined {
    return this.#tx.getStore();
  }

  /** Runs `hook` at the end of every transaction, before it commits. */
  beforeCommit(hook: () => Promise<void>): void {
    this.#beforeCommit.push(hook);
  }

  /**
   * Runs fn atomically, or within the transaction already open in this call chain. `locks`: the advisory locks
   * fn will take (lock), taken on PostgreSQL by the BEGIN itself, in its round trip (pg-begin-locks.ts). `fence`:
   * it commits only while that pull or push lease is held at its fence (lease-fence.ts: SQLite checks it in the BEGIN,
   * PostgreSQL in the last statement before COMMIT); a transaction joined keeps the fence of the one it joins.
   * `bounded`: a request's, done within the request deadline or cut (pg-deadline.ts's withTransactionDeadline,
   * TransactionCutError; on SQLite, another process's write lock is waited for that long, not SQLITE_BUSY_WAIT_MS).
   */
  async transaction<T>(
    fn: () => Promise<T>,
    opts?: { locks?: readonly LockKey[]; fence?: LeaseFence; bounded?: boolean },
  ): Promise<T> {
    if (this.#tx.getStore()) return fn();
    const postgres = this.dialect === 'postgres';
    const locks = postgres ? (opts?.locks ?? []) : [];
    const fence = opts?.fence;
    if (opts?.bounded)
      return withTransactionDeadline(() => this.transaction(fn, { ...opts, bounded: false }));
    return withSqliteFence(postgres ? undefined : fence, () =>
      withBeginLocks(locks, (begun) =>
        this.db.transaction().execute((trx) =>
          this.#tx.run(trx, async () => {
            if (begun()) this.#held.set(trx, new Set(locks.map(lockName)));
            const result = await fn();
            for (const hook of this.#beforeCommit) await hook();
            await this.#runAtCommit(trx, postgres ? fence : undefined);
            return result;
          }),
        ),
      ),
    );
  }

  /**
   * Takes a transaction-scoped advisory lock on (school, table) on PostgreSQL, once per transaction: one writer
   * of a kind at a time until it commits. SQLite's single write connection already gives this.
   */
  async lock(schoolId: string, table: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    const trx = this.#tx.getStore();
    const held = trx && (this.#held.get(trx) ?? new Set<string>());
    if (trx && held) {
      if (held.has(lockName([schoolId, table]))) return;
      this.#held.set(trx, held.add(lockName([schoolId, table])));
    }
    await sql`select pg_advisory_xact_lock(hashtext(${schoolId}), hashtext(${table}))`.execute(this.w);
  }

  /**
   * A write whose result nobody reads, left for the open transaction's end (after the beforeCommit hooks), or
   * run now outside one. On PostgreSQL a transaction's are sent as one statement, data-modifying CTEs side by
   * side (its data version, cursors and the run's progress line: three round trips a resource, issue 46), so
   * each must write a table of its own, and its text may hold no `$` but its parameters' (they are renumbered).
   */
  async atCommit(query: CompiledQuery): Promise<void> {
    const trx = this.#tx.getStore();
    if (!trx) {
      await this.w.executeQuery(query);
      return;
    }
    const queued = this.#atCommit.get(trx);
    if (queued) queued.push(query);
    else this.#atCommit.set(trx, [query]);
  }

  /** The transaction's writes left for its end; on PostgreSQL with the check of `fence`, in one statement. */
  async #runAtCommit(trx: Transaction<DB>, fence: LeaseFence | undefined): Promise<void> {
    const queued = this.#atCommit.get(trx) ?? [];
    this.#atCommit.delete(trx);
    if (this.dialect !== 'postgres' || (queued.length <= 1 && !fence)) {
      for (const q of queued) await trx.executeQuery(q);
      return;
    }
    const parameters: unknown[] = [];
    const renumbered = (q: CompiledQuery) => {
      const offset = parameters.length;
      parameters.push(...q.parameters);
      return q.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + offset}`);
    };
    const parts = queued.map((q, i) => `w${i} as (${renumbered(q)})`);
    const last = fence ? renumbered(pgFenceRead(fence).compile(trx)) : 'select 1';
    const text = parts.length > 0 ? `with ${parts.join(', ')} ${last}` : last;
    const { rows } = await trx.executeQuery<{ fence: string | number }>(CompiledQuery.raw(text, parameters));
    // Its writes ran in the same statement: throwing rolls them back with the rest of the transaction.
    if (fence && (rows.length === 0 || Number(rows[0]!.fence) !== fence.fence))
      throw new LeaseLostError(fence);
  }

  /** Ids per IN-list: PostgreSQL takes one array parameter, SQLite one parameter per id. */
  get inChunk(): number {
    return this.dialect === 'postgres' ? 10_000 : SQLITE_IN_CHUNK;
  }

  /** Rows per statement of a read that walks every live row of a kind in id order. */
  get readChunk(): number {
    return this.dialect === 'postgres' ? PG_READ_ROWS : SQLITE_READ_ROWS;
  }

  /** `column IN (ids)`: `= any($1::type[])` on PostgreSQL, whose planner is slow on long parameter lists. */
  inList(
    // biome-ignore lint/suspicious/noExplicitAny: used across tables; the column is checked by the callers' specs.
    eb: any,
    column: string,
    ids: readonly (Id | string)[],
    pgType: 'int8' | 'text',
  ): Expression<SqlBool> {
    if (this.dialect === 'postgres') return eb(column, '=', sql`any(${ids}::${sql.raw(pgType)}[])`);
    return eb(column, 'in', ids);
  }

  /** PostgreSQL's COPY of `items` into `table` (see pg-copy.ts), each one row of `values`: no conflict check. */
  /** As copyRows, from text already in COPY's format (pg-copy-text.ts). */
  async copyText(table: string, columns: readonly string[], pieces: Iterable<string>): Promise<void> {
    await this.w.executeQuery(CompiledQuery.raw(copyStatement(table, columns), [new CopyText(pieces)]));
  }

  async copyRows<T>(
    table: string,
    columns: readonly string[],
    items: Iterable<T>,
    values: (item: T) => readonly CopyValue[],
  ): Promise<void> {
    if (Array.isArray(items) && items.length === 0) return;
    await this.w.executeQuery(
      CompiledQuery.raw(copyStatement(table, columns), [new CopyRows(items, values)]),
    );
  }

  /**
   * Inserts rows sharing one set of columns, optionally upserting on a key. SQLite: multi-row VALUES within
   * its parameter limit. PostgreSQL: the whole batch as one JSON parameter expanded by json_populate_recordset
   * into the table's own row type: several times faster than thousands of scalar parameters, and cheaper to
   * encode than one array per column.
   */
  async insertRows(table: string, rows: Row[], conflict: RowConflict | null): Promise<void> {
    if (rows.length === 0) return;
    const columns = Object.keys(rows[0]!);
    if (this.dialect === 'postgres') {
      for (const json of pgJsonBatches(rows)) await this.#insertJson(table, columns, json, conflict);
      return;
    }
    await this.insertSqlite(
      table,
      columns,
      rows.length,
      (params, i) => {
        const row = rows[i]!;
        for (const c of columns) params.push(row[c]);
      },
      conflict,
      sqliteRowsPerStatement(rows),
    );
  }

  /**
   * insertRows, written only while `fence`'s lease is held at it, else nothing and LeaseLostError (lease-fence.ts).
   * On PostgreSQL rows that fit one statement are written by one statement holding the check in its WHERE: one
   * round trip, not four (BEGIN, the write, the check, COMMIT). Otherwise, and on SQLite (whose statements are no
   * round trips), a transaction checked against the fence. Rows that conflict must update (a conflict left alone
   * writes nothing, which would read as the lease lost).
   */
  async insertRowsFenced(
    table: string,
    rows: Row[],
    conflict: { columns: string[]; update: [string, ...string[]] } | null,
    fence: LeaseFence,
  ): Promise<void> {
    if (rows.length === 0) return;
    if (this.dialect === 'postgres') {
      const batches = pgJsonBatches(rows);
      const first = batches.next();
      if (!first.done && batches.next().done) {
        const only = fenceHeld(fence, 'postgres');
        const written = await this.#insertJson(table, Object.keys(rows[0]!), first.value, conflict, only);
        if (written === 0) throw new LeaseLostError(fence);
        return;
      }
    }
    await this.transaction(() => this.insertRows(table, rows, conflict), { fence });
  }

  /** PostgreSQL: one bulk statement of `json`'s rows (pgJsonBatches), only where `only` holds; rows written. */
  async #insertJson(
    table: string,
    columns: string[],
    json: string,
    conflict: RowConflict | null,
    only?: RawBuilder<unknown>,
  ): Promise<number> {
    // biome-ignore lint/suspicious/noExplicitAny: table and columns are chosen at runtime by the callers.
    const db = this.w as unknown as Kysely<any>;
    const selected = sql.join(columns.map((c) => sql.ref(c)));
    const select = sql`select ${selected} from json_populate_recordset(null::${sql.table(table)}, ${json}::json)${only ? sql` where ${only}` : sql``}`;
    const insert = db.insertInto(table).columns(columns).expression(select);
    const result = await (conflict
      ? insert.onConflict((oc) =>
          conflict.update.length === 0
            ? oc.columns(conflict.columns).doNothing()
            : oc.columns(conflict.columns).doUpdateSet((eb) => {
                const set: Record<string, Expression<unknown>> = {};
                for (const c of conflict.update) set[c] = eb.ref(`excluded.${c}`);
                return set;
              }),
        )
      : insert
    ).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0);
  }

  /**
   * SQLite's multi-row INSERT of `items`, each written into the statement's parameters by `put` in `columns`
   * order. The statement text comes straight from the column list, not through Kysely's query builder: for the
   * tens of thousands of rows of a full pull, building and compiling a node per value cost more CPU than
   * SQLite's own work on some tables, and as much garbage. Same text for every full batch, so one prepared
   * statement.
   */
  async insertSqlite(
    table: string,
    columns: readonly string[],
    count: number,
    put: (params: unknown[], index: number) => void,
    conflict: { columns: string[]; update: string[] } | null = null,
    maxRows = MAX_ROWS,
  ): Promise<void> {
    const q = (name: string) => `"${name}"`;
    const onConflictSql = !conflict
      ? ''
      : ` on conflict (${conflict.columns.map(q).join(', ')}) do ` +
        (conflict.update.length === 0
          ? 'nothing'
          : `update set ${conflict.update.map((c) => `${q(c)} = "excluded".${q(c)}`).join(', ')}`);
    const head = `insert into ${q(table)} (${columns.map(q).join(', ')}) values `;
    const tuple = `(${columns.map(() => '?').join(', ')})`;
    const perStatement = Math.min(maxRows, MAX_ROWS, Math.floor(MAX_PARAMS / columns.length));
    for (const [start, length] of statementRanges(count, perStatement)) {
      const params: unknown[] = [];
      for (let i = start; i < start + length; i++) put(params, i);
      // The same string for the same statement: made once, and found in the statement cache by identity.
      const key = `${head}${length}${onConflictSql}`;
      let text = this.#insertTexts.get(key);
      if (text === undefined) {
        text = `${head}${new Array(length).fill(tuple).join(', ')}${onConflictSql}`;
        this.#insertTexts.set(key, text);
      }
      await this.w.executeQuery(CompiledQuery.raw(text, params));
    }
  }
}
