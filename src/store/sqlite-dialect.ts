// A Kysely dialect for Node's built-in `node:sqlite` (DatabaseSync). Kysely's own SqliteDialect targets
// better-sqlite3 and hands its single connection to every caller at once; with async callers that lets one
// caller's statements run inside another caller's open transaction. This driver serialises access to the
// connection (one holder at a time, transactions included), opens write transactions with BEGIN IMMEDIATE so
// two processes sharing the file queue on busy_timeout instead of failing on lock upgrade, and caches prepared
// statements because the pull issues the same multi-row statements thousands of times.

import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type TransactionSettings,
} from 'kysely';
import { LRUCache } from 'lru-cache';
import { TimeSlice } from '../util/event-loop.ts';
import { sqliteBeginText } from './lease-fence.ts';
import { inBoundedTransaction, PG_READ_DEADLINE_MS } from './pg-deadline.ts';
import { Checkpointer } from './sqlite-checkpoints.ts';
import { TransactionCutError } from './unreachable.ts';

const STATEMENT_CACHE_SIZE = 256;
/**
 * Synchronous time a connection may take between two turns of the event loop. Each statement blocks the
 * thread, and awaiting one resumes as a microtask, so a pull's thousands of bulk statements would otherwise
 * hold off every request of the same process (seconds for a district's sessions) though readers have a
 * connection of their own.
 */
const STATEMENT_SLICE_MS = 10;

/**
 * How long a statement keeps retrying while another process holds the file's write lock. The wait is
 * asynchronous: SQLite's own busy_timeout sleeps on the thread, which would freeze this process's web server
 * for as long as, say, a `rostercal sync` in another process holds a transaction.
 */
export const SQLITE_BUSY_WAIT_MS = 60_000;
const SQLITE_BUSY = 5;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isBusy(err: unknown): boolean {
  return (err as { errcode?: number } | null)?.errcode === SQLITE_BUSY;
}

/**
 * Runs fn, retrying while the database is busy. Safe to repeat: a statement refused with SQLITE_BUSY did
 * nothing (autocommit statements, BEGIN IMMEDIATE and COMMIT all fail atomically).
 */
async function whileBusy<T>(fn: () => T): Promise<T> {
  // A request's transaction waits no longer than the request deadline: refused as busy, it wrote nothing.
  const bounded = inBoundedTransaction();
  const waitMs = bounded ? PG_READ_DEADLINE_MS : SQLITE_BUSY_WAIT_MS;
  const deadline = Date.now() + waitMs;
  let delay = 2;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      if (!isBusy(err)) throw err;
      if (Date.now() >= deadline) {
        const why = new Error(
          `SQLite database stayed locked by another process for ${waitMs / 1000} s; giving up`,
          {
            cause: err,
          },
        );
        throw bounded ? new TransactionCutError(why, false) : why;
      }
      await sleep(delay + Math.random() * delay);
      delay = Math.min(delay * 2, 100);
    }
  }
}

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #cache = new LRUCache<string, { stmt: StatementSync; reader: boolean }>({
    max: STATEMENT_CACHE_SIZE,
  });
  readonly #slice = new TimeSlice(STATEMENT_SLICE_MS);
  readonly #afterCommit: () => void;
  readonly #readOnly: string | undefined;

  /** `afterCommit`: called when a write has committed (a transaction's COMMIT, or a statement on its own). */
  constructor(db: DatabaseSync, afterCommit: () => void = () => {}, readOnly?: string) {
    this.#db = db;
    this.#afterCommit = afterCommit;
    this.#readOnly = readOnly;
  }

  #prepare(sql: string): { stmt: StatementSync; reader: boolean } {
    const hit = this.#cache.get(sql);
    if (hit) return hit;
    const stmt = this.#db.prepare(sql);
    const entry = { stmt, reader: stmt.columns().length > 0 };
    this.#cache.set(sql, entry);
    return entry;
  }

  executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    return explainReadOnly(this.#readOnly, () => this.#executeQuery<R>(compiled));
  }

  async #executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    await this.#slice.pause();
    const params = compiled.parameters.map(toSqlite);
    const { stmt, reader } = await whileBusy(() => this.#prepare(compiled.sql));
    if (reader) return { rows: (await whileBusy(() => stmt.all(...params))) as R[] };
    const { changes, lastInsertRowid } = await whileBusy(() => stmt.run(...params));
    if (!this.#db.isTransaction) this.#afterCommit();
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const params = compiled.parameters.map(toSqlite);
    const { stmt } = this.#prepare(compiled.sql);
    for (const row of stmt.iterate(...params)) yield { rows: [row as R] };
  }

  async exec(sql: string): Promise<void> {
    await explainReadOnly(this.#readOnly, () => whileBusy(() => this.#db.exec(sql)));
    if (sql === 'COMMIT') this.#afterCommit();
  }

  /** Whether a transaction is open: SQLite ends one itself on some errors (a full disk, an I/O error). */
  get inTransaction(): boolean {
    return this.#db.isTransaction;
  }
}

/** node:sqlite binds only null, numbers, bigints, strings and bytes. */
function toSqlite(value: unknown): SQLInputValue {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  return value as SQLInputValue;
}

/** A FIFO lock: the connection has one holder at a time. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();

  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => next);
    return acquired;
  }
}

/**
 * One SQLite file's connection, shared by every store a process opens on that file. DatabaseSync waits for
 * locks synchronously (busy_timeout blocks the thread), so two connections of one process must never contend
 * for the write lock: the holder could not run to release it. Sharing one connection and one FIFO lock per file
 * turns that deadlock into an ordinary queue.
 */
interface SharedSqlite {
  connection: NodeSqliteConnection;
  db: DatabaseSync;
  checkpointer: Checkpointer | null;
  mutex: Mutex;
  refs: number;
  closed: boolean;
}
const shared = new Map<string, Promise<SharedSqlite>>();

async function acquireShared(
  key: string,
  open: () => DatabaseSync,
  checkpointFile: string | undefined,
  readOnly: string | undefined,
): Promise<SharedSqlite> {
  for (;;) {
    let pending = shared.get(key);
    if (!pending) {
      // Opening runs pragmas (WAL) that can meet another process's lock: retried like any statement.
      pending = whileBusy(open).then((db) => {
        const checkpointer = checkpointFile ? new Checkpointer(db, checkpointFile) : null;
        return {
          db,
          checkpointer,
          connection: new NodeSqliteConnection(db, () => checkpointer?.request(), readOnly),
          mutex: new Mutex(),
          refs: 0,
          closed: false,
        };
      });
      shared.set(key, pending);
      pending.catch(() => shared.delete(key));
    }
    const entry = await pending;
    // The last holder may have closed it while this caller waited: open afresh.
    if (entry.closed) continue;
    entry.refs++;
    return entry;
  }
}

class NodeSqliteDriver implements Driver {
  readonly #key: string;
  readonly #open: () => DatabaseSync;
  readonly #checkpointFile: string | undefined;
  readonly #readOnly: string | undefined;
  #shared: SharedSqlite | undefined;
  #closed = false;
  readonly #releases = new Map<DatabaseConnection, () => void>();

  constructor(key: string, open: () => DatabaseSync, opts: NodeSqliteDialectOptions) {
    this.#key = key;
    this.#open = open;
    this.#checkpointFile = opts.checkpointFile;
    this.#readOnly = opts.readOnly;
  }

  async init(): Promise<void> {
    this.#shared = await acquireShared(this.#key, this.#open, this.#checkpointFile, this.#readOnly);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const entry = this.#shared;
    if (!entry || this.#closed) throw new Error('sqlite store is closed');
    const release = await entry.mutex.lock();
    if (this.#closed) {
      release();
      throw new Error('sqlite store is closed');
    }
    this.#releases.set(entry.connection, release);
    return entry.connection;
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    const conn = connection as NodeSqliteConnection;
    // With a pull's lease fence to check (lease-fence.ts), in the same exec: under the write lock it holds.
    const text = sqliteBeginText();
    try {
      await conn.exec(text);
    } catch (err) {
      // Begun, then refused by the check: Kysely rolls back only a transaction whose BEGIN returned.
      if (conn.inTransaction) await conn.exec('ROLLBACK');
      throw err;
    }
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as NodeSqliteConnection).exec('COMMIT');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const conn = connection as NodeSqliteConnection;
    // On a full disk or an I/O error SQLite has already rolled the transaction back; a ROLLBACK now would fail
    // ("cannot rollback - no transaction is active") and that error would replace the one that says why.
    if (!conn.inTransaction) return;
    await conn.exec('ROLLBACK');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const release = this.#releases.get(connection);
    this.#releases.delete(connection);
    release?.();
  }

  async destroy(): Promise<void> {
    const entry = this.#shared;
    if (!entry || this.#closed) return;
    // Wait for the current holder so a close never cuts a transaction in half.
    const release = await entry.mutex.lock();
    this.#closed = true;
    entry.refs--;
    if (entry.refs === 0) {
      entry.closed = true;
      shared.delete(this.#key);
      await entry.checkpointer?.stop();
      try {
        // Lets SQLite refresh the planner statistics the queries have shown it need; cheap when nothing does.
        entry.db.exec('PRAGMA optimize');
      } catch {
        // A read-only or busy database cannot be optimised now; closing matters more.
      }
      entry.db.close();
    }
    release();
  }
}

export interface NodeSqliteDialectOptions {
  /** The writer's file: its WAL checkpoints run on a worker thread (see sqlite-checkpoints.ts). */
  checkpointFile?: string;
  /** Why the connection is read-only: a write's "attempt to write a readonly database" then says it. */
  readOnly?: string;
}

const SQLITE_READONLY = 8;

/** A read-only connection's refusal, saying why the store is read-only (a full disk, a read-only mount). */
function explainReadOnly<T>(reason: string | undefined, run: () => Promise<T>): Promise<T> {
  if (!reason) return run();
  return run().catch((err: unknown) => {
    const code = (err as { errcode?: number } | null)?.errcode;
    if (code === undefined || (code & 0xff) !== SQLITE_READONLY) throw err;
    throw Object.assign(new Error(`${(err as Error).message}: ${reason}`, { cause: err }), { errcode: code });
  });
}

export class NodeSqliteDialect implements Dialect {
  readonly #key: string;
  readonly #open: () => DatabaseSync;
  readonly #opts: NodeSqliteDialectOptions;

  /** `key` identifies the connection to share: stores of one process with the same key share one connection. */
  constructor(key: string, open: () => DatabaseSync, opts: NodeSqliteDialectOptions = {}) {
    this.#key = key;
    this.#open = open;
    this.#opts = opts;
  }
  createDriver(): Driver {
    return new NodeSqliteDriver(this.#key, this.#open, this.#opts);
  }
  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }
  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }
  // biome-ignore lint/suspicious/noExplicitAny: Kysely's Dialect interface itself types this as Kysely<any>.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
