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

const STATEMENT_CACHE_SIZE = 256;

class NodeSqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  readonly #cache = new Map<string, { stmt: StatementSync; reader: boolean }>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  #prepare(sql: string): { stmt: StatementSync; reader: boolean } {
    const hit = this.#cache.get(sql);
    if (hit) {
      // Refresh recency: Map iteration order is insertion order, so the first key is the least recently used.
      this.#cache.delete(sql);
      this.#cache.set(sql, hit);
      return hit;
    }
    const stmt = this.#db.prepare(sql);
    const entry = { stmt, reader: stmt.columns().length > 0 };
    this.#cache.set(sql, entry);
    if (this.#cache.size > STATEMENT_CACHE_SIZE) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    return entry;
  }

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    const params = compiled.parameters.map(toSqlite);
    const { stmt, reader } = this.#prepare(compiled.sql);
    if (reader) return { rows: stmt.all(...params) as R[] };
    const { changes, lastInsertRowid } = stmt.run(...params);
    return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
  }

  async *streamQuery<R>(compiled: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const params = compiled.parameters.map(toSqlite);
    const { stmt } = this.#prepare(compiled.sql);
    for (const row of stmt.iterate(...params)) yield { rows: [row as R] };
  }

  exec(sql: string): void {
    this.#db.exec(sql);
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
  mutex: Mutex;
  refs: number;
}
const shared = new Map<string, SharedSqlite>();

function acquireShared(key: string, open: () => DatabaseSync): SharedSqlite {
  let entry = shared.get(key);
  if (!entry) {
    const db = open();
    entry = { db, connection: new NodeSqliteConnection(db), mutex: new Mutex(), refs: 0 };
    shared.set(key, entry);
  }
  entry.refs++;
  return entry;
}

class NodeSqliteDriver implements Driver {
  readonly #key: string;
  readonly #open: () => DatabaseSync;
  #shared: SharedSqlite | undefined;
  #closed = false;
  readonly #releases = new Map<DatabaseConnection, () => void>();

  constructor(key: string, open: () => DatabaseSync) {
    this.#key = key;
    this.#open = open;
  }

  async init(): Promise<void> {
    this.#shared = acquireShared(this.#key, this.#open);
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
    (connection as NodeSqliteConnection).exec('BEGIN IMMEDIATE');
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as NodeSqliteConnection).exec('COMMIT');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    (connection as NodeSqliteConnection).exec('ROLLBACK');
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
      shared.delete(this.#key);
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

export class NodeSqliteDialect implements Dialect {
  readonly #key: string;
  readonly #open: () => DatabaseSync;

  /** `key` identifies the connection to share: stores of one process with the same key share one connection. */
  constructor(key: string, open: () => DatabaseSync) {
    this.#key = key;
    this.#open = open;
  }
  createDriver(): Driver {
    return new NodeSqliteDriver(this.#key, this.#open);
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
