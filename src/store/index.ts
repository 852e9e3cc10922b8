// openStore: PostgreSQL when a database URL is given, else an SQLite file through node:sqlite.
import { randomUUID } from 'node:crypto';
import { accessSync, closeSync, constants, existsSync, openSync, statfsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Kysely } from 'kysely';
import { ensurePrivateDir, ensurePrivateFile, PRIVATE_FILE_MODE } from '../private-files.ts';
import { defineLeaseLost } from './lease-fence.ts';
import { LockingPostgresDialect } from './pg-begin-locks.ts';
import { copyingPool } from './pg-copy.ts';
import { PG_READ_DEADLINE_MS, ReadDeadline } from './pg-deadline.ts';
import type { DB } from './schema.ts';
import { SqlStore } from './sql-store.ts';
import { NodeSqliteDialect } from './sqlite-dialect.ts';
import { sqliteQuickCheck } from './sqlite-integrity.ts';
import type { Store } from './types.ts';

export type * from './types.ts';

export interface OpenStoreOptions {
  /** `postgres://…`: use PostgreSQL. */
  databaseUrl?: string;
  /** SQLite: directory of `rostercal.sqlite` (default `./data`). */
  dataDir?: string;
  /** SQLite: the database file itself (overrides dataDir). */
  file?: string;
  /** Apply pending migrations before returning (default true). */
  migrate?: boolean;
  /** PostgreSQL pool size (default 10). */
  poolSize?: number;
  /**
   * SQLite: WAL checkpoints on a worker thread (sqlite-checkpoints.ts), for a process whose event loop serves
   * requests (`serve`). Off for one-shot commands: nothing waits on their loop, and the worker costs memory.
   */
  checkpointsOffThread?: boolean;
}

/**
 * SQLite's own (thread-blocking) wait for another process's lock: kept short, longer waits happen
 * asynchronously in the driver (see SQLITE_BUSY_WAIT_MS in sqlite-dialect.ts).
 */
const SQLITE_BUSY_TIMEOUT_MS = 20;

export async function openStore(opts: OpenStoreOptions = {}): Promise<Store> {
  const store = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl, opts.poolSize ?? 10)
    : openSqlite(opts, opts.checkpointsOffThread === true);
  if (opts.migrate !== false) {
    try {
      await store.migrate();
    } catch (err) {
      await store.close().catch(() => {});
      throw err;
    }
  }
  return store;
}

/** The store a configuration names: PostgreSQL at databaseUrl, else SQLite in dataDir. The one way to open it. */
export function openStoreFor(
  cfg: { databaseUrl?: string | undefined; dataDir: string },
  opts: Pick<OpenStoreOptions, 'migrate' | 'poolSize' | 'checkpointsOffThread'> = {},
): Promise<Store> {
  return openStore({
    ...(cfg.databaseUrl ? { databaseUrl: cfg.databaseUrl } : { dataDir: cfg.dataDir }),
    ...opts,
  });
}

/**
 * The database a configuration names as an operator may read it: `PostgreSQL at host:port/name` (never the URL,
 * which carries the password) or `SQLite at <file>`.
 */
export function storeWhere(cfg: { databaseUrl?: string | undefined; dataDir: string }): string {
  return cfg.databaseUrl ? `PostgreSQL at ${postgresWhere(cfg.databaseUrl)}` : `SQLite at ${sqlitePath(cfg)}`;
}

/** A PostgreSQL URL's host, port and database name, without its user and password. */
function postgresWhere(url: string): string {
  try {
    const u = new URL(url);
    const name = decodeURIComponent(u.pathname.replace(/^\//, ''));
    return `${u.hostname}:${u.port || 5432}${name ? `/${name}` : ''}`;
  } catch {
    return 'its address';
  }
}

/** Where the SQLite file lives for these options. */
export function sqlitePath(opts: { dataDir?: string; file?: string }): string {
  return resolve(opts.file ?? join(opts.dataDir ?? './data', 'rostercal.sqlite'));
}

/** Bytes per page of a new SQLite file (SQLite's default is 4,096). */
export const PAGE_SIZE = 16_384;

const SQLITE_BUSY = 5;
/** SQLite's primary result codes that say a file cannot be written (or its WAL index cannot be made). */
const CANNOT_WRITE = new Set([
  3 /* PERM */, 8 /* READONLY */, 10 /* IOERR */, 13 /* FULL */, 14 /* CANTOPEN */,
]);

/**
 * Why the SQLite file cannot be written, or null: the directory or the file is not writable (a read-only mount,
 * permissions), its filesystem is full, or SQLite cannot open it for writing (`probe`, which opens and reads the
 * way the writer will: WAL mode needs its index file).
 */
function writeRefusal(file: string, probe: () => void): string | null {
  const dir = dirname(file);
  try {
    // A directory yet to be made is made by the probe.
    if (existsSync(dir)) accessSync(dir, constants.W_OK);
    if (existsSync(file)) accessSync(file, constants.W_OK);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return e.code === 'EROFS'
      ? `${dir} is on a read-only filesystem`
      : `${e.path ?? dir} cannot be written: ${e.message}`;
  }
  try {
    probe();
    return null;
  } catch (err) {
    const fsCode = (err as NodeJS.ErrnoException).code;
    if (fsCode && ['EROFS', 'EACCES', 'EPERM', 'ENOSPC'].includes(fsCode))
      return `${dirname(file)} cannot be written: ${(err as Error).message}`;
    const code = (err as { errcode?: number }).errcode;
    // Busy: another connection is writing, so the file can be written.
    if (code !== undefined && (code & 0xff) === SQLITE_BUSY) return null;
    if (code === undefined || !CANNOT_WRITE.has(code & 0xff)) throw err;
    const full = statfsSync(dirname(file)).bavail === 0 ? ' (its filesystem is full)' : '';
    return `${file} cannot be opened for writing: ${(err as Error).message}${full}`;
  }
}

/**
 * A read-only connection. SQLite reads a WAL database through its index file (-shm), which a read-only directory
 * may not have (a clean close removes it) and a full disk cannot make: then the file is opened immutable, read as
 * its last checkpoint left it (commits still only in a -wal file are not seen).
 */
function openReadOnly(file: string): DatabaseSync {
  try {
    const db = new DatabaseSync(file, { readOnly: true, timeout: SQLITE_BUSY_TIMEOUT_MS });
    try {
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  } catch {
    return new DatabaseSync(`file:${encodeURI(file)}?immutable=1`, { readOnly: true });
  }
}

// A connection to the file. The reader is an ordinary connection that is only ever given SELECTs (a read-only one cannot open a fresh
// file or create the WAL index).
function connectTo(file: string, writer: boolean): () => DatabaseSync {
  return () => {
    const db = new DatabaseSync(file, { timeout: SQLITE_BUSY_TIMEOUT_MS });
    try {
      if (writer) {
        // Only a new file takes it (an existing database keeps the page size it was made with). Sessions are
        // rows of over a kilobyte: 16 KB pages made a district's sessions write, its commit and its full sync
        // faster and its file smaller than 4 KB pages, and a school's sync and feed renders no slower
        // (bench:sync and bench:feeds measure them).
        db.exec(`PRAGMA page_size = ${PAGE_SIZE}`);
        db.exec('PRAGMA journal_mode = WAL');
        // SQLite's own temporary files (a statement's rollback journal, sorts) in memory, not in TMPDIR: with
        // 16 KB pages a multi-row upsert's statement journal outgrew a 512 KB TMPDIR and failed a district pull
        // with "database or disk is full" (test/failures/disk-full.test.ts); TMPDIR is the pull spool's alone.
        // A district's full sync measured no different in time or peak memory.
        db.exec('PRAGMA temp_store = MEMORY');
        // WAL + NORMAL: durable across application crashes; a power cut may lose the last commit, never corrupt.
        db.exec('PRAGMA synchronous = NORMAL');
        // A pull's dirty pages spill to the WAL mid-transaction beyond it (the 2 MB default made a school's sync
        // much slower), yet a district's full sync measured no slower than with four times as much, and peaked
        // lower: the cache stays filled for the process's life (bench:sync prints time and peak RSS).
        db.exec('PRAGMA cache_size = -8000');
        // What a transaction fenced by a pull's lease raises when the lease moved on (lease-fence.ts).
        defineLeaseLost(db);
      }
      db.exec('PRAGMA foreign_keys = ON');
      return db;
    } catch (err) {
      db.close();
      throw err;
    }
  };
}

function openSqlite(opts: { dataDir?: string; file?: string }, checkpointsOffThread: boolean): SqlStore {
  const file = sqlitePath(opts);
  const refusal = writeRefusal(file, () => {
    // Children's medical conditions and guardians' contacts: readable by the service's user alone. SQLite gives
    // the -wal and -shm files the mode of the database file, so creating that one 0600 covers all three.
    ensurePrivateDir(dirname(file));
    for (const f of [file, `${file}-wal`, `${file}-shm`]) ensurePrivateFile(f);
    closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
    const probe = connectTo(file, true)();
    try {
      probe.prepare('SELECT count(*) FROM sqlite_master').get();
    } finally {
      probe.close();
    }
  });
  if (refusal) {
    // Serving must not depend on writing: what can be read is served, and every write fails saying why.
    if (!existsSync(file)) throw new Error(`no store at ${file}, and none can be made there: ${refusal}`);
    const db = new Kysely<DB>({
      dialect: new NodeSqliteDialect(`ro:${file}:${randomUUID()}`, () => openReadOnly(file), {
        readOnly: `the store was opened read-only: ${refusal}`,
      }),
    });
    return new SqlStore({
      dialect: 'sqlite',
      db,
      readOnly: refusal,
      checkIntegrity: () => sqliteQuickCheck(file, { immutable: true }),
    });
  }
  // Every store of this process on this file shares one writer (see sqlite-dialect.ts); each has its own
  // reader, which WAL lets read the last commit while a write transaction is open.
  const db = new Kysely<DB>({
    dialect: new NodeSqliteDialect(
      `w:${file}`,
      connectTo(file, true),
      checkpointsOffThread ? { checkpointFile: file } : {},
    ),
  });
  const reader = new Kysely<DB>({
    dialect: new NodeSqliteDialect(`r:${file}:${randomUUID()}`, connectTo(file, false)),
  });
  return new SqlStore({ dialect: 'sqlite', db, reader, checkIntegrity: () => sqliteQuickCheck(file) });
}

/** How long a connection to PostgreSQL may take (a free pool slot included) before the call fails, unless set. */
export const PG_CONNECT_TIMEOUT_S = 5;

/**
 * DATABASE_URL's `connect_timeout` (seconds, libpq's parameter; 0: no limit), else PG_CONNECT_TIMEOUT_S. pg reads
 * no such parameter itself: without a bound, a database that takes the connection and never answers held every
 * store call for as long as the socket lived (70 s in test/store/pg-connect-timeout).
 */
function connectTimeoutOf(url: string): number {
  try {
    const v = new URL(url).searchParams.get('connect_timeout');
    if (v !== null && /^\d+$/.test(v)) return Number(v);
  } catch {}
  return PG_CONNECT_TIMEOUT_S;
}

async function openPostgres(url: string, max: number): Promise<SqlStore> {
  // Loaded only for PostgreSQL: pg and its packages would otherwise slow every SQLite command's start.
  const { default: pg } = await import('pg');
  const timeoutS = connectTimeoutOf(url);
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: timeoutS * 1000,
    // An idle connection whose server is gone without a word (a partition that drops packets) is found dead by
    // TCP keepalive after the OS's probes, rather than at its next use; a statement's own bound is pg-deadline.ts.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    // int8 (ids, counters) as numbers: every id and count here is far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === pg.types.builtins.INT8
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its server (restart, failover) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // A checked-out client whose session the server ends (restart, pg_terminate_backend) emits 'error' besides
  // failing its query; unheard, that event would end the process instead of one request.
  pool.on('connect', (client) => client.on('error', () => {}));
  const where = postgresWhere(url);
  const deadline = new ReadDeadline(PG_READ_DEADLINE_MS, where);
  const bounded = await copyingPool(pool, deadline, timeoutS);
  const db = new Kysely<DB>({ dialect: new LockingPostgresDialect({ pool: bounded }, pg.escapeLiteral) });
  // Loaded only for PostgreSQL too: SQLite has no queue.
  const { openJobQueue } = await import('./fire-queue.ts');
  return new SqlStore({ dialect: 'postgres', db, jobs: openJobQueue(url, timeoutS * 1000) });
}
