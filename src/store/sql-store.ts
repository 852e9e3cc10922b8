// The Store over Kysely: one implementation for SQLite and PostgreSQL. Dialect differences stay in the
// dialect setup (index.ts), the driver (sqlite-dialect.ts) and the migrations.
//
// Transactions follow the async call chain (AsyncLocalStorage): inside `transaction(fn)` every call on this
// store — through the `tx` argument or the store itself — joins the open transaction, so nested calls never
// deadlock on SQLite's single writer connection and behave the same on PostgreSQL.

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { CompiledQuery, type Expression, type Kysely, type SqlBool, sql, type Transaction } from 'kysely';
import type { Id, Instant } from '../domain/types.ts';
import { scrubSecrets } from '../log.ts';
import * as familyLinks from './family-links.ts';
import * as feedEventVersions from './feed-event-versions.ts';
import * as feedRotations from './feed-rotations.ts';
import { storedInstant } from './instants.ts';
import { type KindSpec, kindSpec, membersOf, prepareRecord } from './kinds.ts';
import { ownerAlive } from './liveness.ts';
import { MembershipBuffer, memberOf, ownerOf, type Pair } from './membership-buffer.ts';
import { type Dialect, pendingMigrations, runMigrations } from './migrations.ts';
import { CopyRows, type CopyValue } from './pg-copy.ts';
import * as renderedFeeds from './rendered-feeds.ts';
import type { DB, JobStatusTable, SnapshotTable } from './schema.ts';
import * as staffAccess from './staff-access.ts';
import type {
  AbsenceQuery,
  AuditQuery,
  AuditRecord,
  FamilyLink,
  FeedRotationRow,
  FeedScope,
  FeedToken,
  JobResult,
  JobStatus,
  JobStatusPatch,
  PreparedRecord,
  PublishedEvent,
  PullLease,
  PushCalendar,
  PushMapping,
  RenderedFeedRecord,
  RenderedFeedState,
  ResourceKind,
  ResourceMap,
  RunCounts,
  RunKind,
  RunOwner,
  RunProgress,
  RunStatus,
  SchoolId,
  SessionQuery,
  StaffSession,
  Store,
  Stored,
  StoredFeedScope,
  SyncRun,
  UpsertStats,
} from './types.ts';

/** Parameters per statement: below SQLite's 32,766 and PostgreSQL's 65,535 bound-parameter limits. */
const MAX_PARAMS = 30_000;
/** Rows per multi-row statement; larger batches stop paying off and make statements huge to compile. */
const MAX_ROWS = 500;
/** Ids per `IN (...)` list. */
const IN_CHUNK = 900;
/** Rows per bulk insert on PostgreSQL: bounds one statement's memory. */
const PG_BULK_ROWS = 5_000;
/** Membership rows per insert or delete statement (two id arrays, or one JSON list, as one parameter). */
const MEMBERSHIP_PAIRS = PG_BULK_ROWS * 4;
/** Characters of JSON per bulk insert on PostgreSQL: bounds it where rows are large (teams with their members). */
const PG_BULK_CHARS = 2_000_000;

type Row = Record<string, string | number | null>;

/** A membership table: which column holds the owner (a session, a team) and which the member. */
type JoinTable = { table: string; owner: string; member: string };

type Executor = Kysely<DB> | Transaction<DB>;

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
}

/**
 * [start, length] of each multi-row statement's rows: full batches of `size`, then the rest in power-of-two sizes
 * (180 rows: 128, 32, 16, 4). Each distinct row count is a statement of its own in the connection's cache,
 * holding SQLite's compiled program; with write chunks cut by text, remainders of every size took a district's
 * sync from 298–310 MB to 346–363 MB peak. This way a table and column set has at most ~10 shapes.
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

/** One column of [owner, member] pairs as a PostgreSQL array literal: one parameter, however many ids. */
function int8Array(pairs: readonly (readonly [number, number])[], column: 0 | 1): string {
  return `{${pairs.map((p) => p[column]).join(',')}}`;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function maybeInstant(value: Instant | null, what: string): string | null {
  return value === null ? null : storedInstant(value, what);
}

function toStored<K extends ResourceKind>(row: {
  data: string;
  version: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}): Stored<K> {
  const record = JSON.parse(row.data) as ResourceMap[K];
  return {
    ...record,
    meta: {
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      version: Number(row.version),
      deletedAt: row.deleted_at,
    },
  };
}

export class SqlStore implements Store {
  readonly dialect: Dialect;
  readonly #db: Kysely<DB>;
  readonly #reader: Kysely<DB>;
  readonly #tx = new AsyncLocalStorage<Transaction<DB>>();
  /** Membership rows upsertPrepared deferred to the end of each open transaction, per join table and school. */
  readonly #deferred = new WeakMap<
    Transaction<DB>,
    Map<string, { join: JoinTable; schoolId: SchoolId; rows: MembershipBuffer }>
  >();
  /** SQLite multi-row INSERT texts by table, columns, row count and conflict clause (see #insertSqlite). */
  readonly #insertTexts = new Map<string, string>();
  readonly #checkIntegrity: (() => Promise<string | null>) | undefined;
  readonly readOnly: string | null;

  constructor(opts: SqlStoreOptions) {
    this.dialect = opts.dialect;
    this.#db = opts.db;
    this.#reader = opts.reader ?? opts.db;
    this.#checkIntegrity = opts.checkIntegrity;
    this.readOnly = opts.readOnly ?? null;
  }

  /** Executor for writes: the open transaction of this call chain, else the writer. */
  get #w(): Executor {
    return this.#tx.getStore() ?? this.#db;
  }
  /** Executor for reads: the open transaction of this call chain (to see its own writes), else the reader. */
  get #r(): Executor {
    return this.#tx.getStore() ?? this.#reader;
  }

  async migrate(): Promise<string[]> {
    if (this.readOnly) {
      // Reading needs the current schema; a read-only store can be read only when it already has it.
      const pending = await pendingMigrations(this.#reader);
      if (pending.length)
        throw new Error(
          `the store can be read but not written (${this.readOnly}), and it needs ${pending.length} migration(s) it cannot take (${pending.join(', ')}): start once with it writable`,
        );
      return [];
    }
    return runMigrations(this.#db, this.dialect);
  }

  async close(): Promise<void> {
    if (this.#reader !== this.#db) await this.#reader.destroy();
    await this.#db.destroy();
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.#r);
  }

  async checkIntegrity(): Promise<string | null> {
    return this.#checkIntegrity ? this.#checkIntegrity() : null;
  }

  async transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T> {
    if (this.#tx.getStore()) return fn(this);
    return this.#db.transaction().execute((trx) =>
      this.#tx.run(trx, async () => {
        const result = await fn(this);
        await this.#flushMemberships();
        return result;
      }),
    );
  }

  // --- schools

  async upsertSchool(school: { id: SchoolId; name: string; timeZone: string }): Promise<void> {
    const now = new Date().toISOString();
    await this.#w
      .insertInto('schools')
      .values({
        id: school.id,
        name: school.name,
        time_zone: school.timeZone,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet({ name: school.name, time_zone: school.timeZone, updated_at: now }),
      )
      .execute();
  }

  async listSchools(): Promise<{ id: SchoolId; name: string; timeZone: string }[]> {
    const rows = await this.#r
      .selectFrom('schools')
      .select(['id', 'name', 'time_zone'])
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, timeZone: r.time_zone }));
  }

  // --- snapshot writes

  async upsert<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    records: ResourceMap[K][],
    at: Instant,
  ): Promise<UpsertStats> {
    return this.upsertPrepared(
      schoolId,
      kind,
      records.map((r) => prepareRecord(kind, r)),
      at,
    );
  }

  async upsertPrepared(
    schoolId: SchoolId,
    kind: ResourceKind,
    records: readonly PreparedRecord[],
    at: Instant,
  ): Promise<UpsertStats> {
    const stats: UpsertStats = { added: 0, changed: 0, unchanged: 0, restored: 0 };
    if (records.length === 0) return stats;
    const spec = kindSpec(kind);
    const now = storedInstant(at, 'upsert');

    // Last occurrence of an id wins: a listing that repeats a record must not write it twice.
    const incoming = new Map<Id | string, PreparedRecord>();
    for (const record of records) incoming.set(record.key, record);

    return this.transaction(async () => {
      const db = this.#w;
      const table = spec.table;
      // One writer of a kind at a time, until commit. SQLite's single write connection already gives this; on
      // PostgreSQL two overlapping pulls (a lease taken over from a stalled replica) would otherwise both read
      // "not stored yet" and both insert. Serialised, a record new to this transaction owns no membership rows
      // (owners are never removed, only marked deleted), so memberships are inserted without a conflict check.
      if (this.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(hashtext(${schoolId}), hashtext(${table}))`.execute(db);
      }
      const existing = new Map<Id | string, { hash: string; version: number; deleted_at: string | null }>();
      for (const ids of chunks([...incoming.keys()], this.#inChunk)) {
        const rows = await db
          .selectFrom(table)
          .select(['id', 'hash', 'version', 'deleted_at'])
          .where('school_id', '=', schoolId)
          .where((eb) => this.#inList(eb, 'id', ids, idType(kind)))
          .execute();
        for (const r of rows) existing.set(normaliseId(r.id, kind), r);
      }

      const writes: SnapshotTable[] = [];
      const written: { record: PreparedRecord; existed: boolean }[] = [];
      for (const [id, record] of incoming) {
        const old = existing.get(id);
        let version = 0;
        if (old) {
          const sameContent = old.hash === record.hash;
          if (old.deleted_at !== null) stats.restored++;
          else if (sameContent) {
            stats.unchanged++;
            continue;
          } else stats.changed++;
          version = sameContent ? Number(old.version) : Number(old.version) + 1;
        } else stats.added++;
        writes.push(snapshotRow(spec, schoolId, record, version, now));
        written.push({ record, existed: old !== undefined });
      }
      if (writes.length === 0) return stats;

      // New records own no membership rows yet: only rewritten ones need theirs cleared, found from the members
      // their stored record lists (the rows were derived from it) before it is overwritten, by primary key.
      const rewritten = written.filter((w) => w.existed).map((w) => w.record.key as Id);
      // Rows deferred earlier in this transaction may be among them: in their table first, then found and deleted.
      if (rewritten.length > 0) await this.#flushMemberships();
      const stale = spec.joins.length > 0 ? await this.#storedMemberships(spec, schoolId, rewritten) : [];

      const columns = Object.keys(writes[0]!);
      const upsert = {
        columns: ['school_id', 'id'],
        update: columns.filter((c) => c !== 'school_id' && c !== 'id' && c !== 'created_at'),
      };
      if (this.dialect === 'postgres') {
        // Records new to the store cannot conflict (the lock above), so they go in by COPY; rewrites upsert.
        const fresh: Row[] = [];
        const rewrites: Row[] = [];
        for (const [i, row] of (writes as unknown as Row[]).entries()) {
          (written[i]!.existed ? rewrites : fresh).push(row);
        }
        await this.#copyRows(table, columns, fresh, (row) => columns.map((c) => row[c] ?? null));
        await this.#insertRows(table, rewrites, upsert);
      } else await this.#insertRows(table, writes as unknown as Row[], upsert);

      for (const [j, join] of spec.joins.entries()) {
        await this.#deleteMemberships(join, schoolId, stale[j] ?? []);
        // Deferred to the end of the transaction, to go in with the rest of the resource's rows in key order
        // (membership-buffer.ts); the rare pair whose ids the buffer cannot hold goes in now.
        const deferred = this.#deferredMemberships(join, schoolId);
        const now: Pair[] = [];
        for (const { record } of written) {
          const owner = record.key as number;
          for (const member of (record.members[j] ?? []) as number[]) {
            if (MembershipBuffer.fits(owner, member)) deferred.add(owner, member);
            else now.push([owner, member]);
          }
        }
        now.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
        await this.#insertMemberships(join, schoolId, now);
      }

      await this.#bumpDataVersion(schoolId);
      return stats;
    });
  }

  async rewriteRecords<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    fn: (record: ResourceMap[K]) => ResourceMap[K],
    except: ReadonlySet<Id | string> = new Set(),
  ): Promise<number> {
    const spec = kindSpec(kind);
    return this.transaction(async () => {
      // Ids first: a pull that has just rewritten every live team leaves only the deleted ones to read.
      const all = await this.#w
        .selectFrom(spec.table)
        .select('id')
        .where('school_id', '=', schoolId)
        .execute();
      const wanted = all.map((r) => normaliseId(r.id, kind)).filter((id) => !except.has(id));
      let changed = 0;
      for (const batch of chunks(wanted, this.#inChunk)) {
        const rows = await this.#w
          .selectFrom(spec.table)
          .select(['id', 'data', 'hash'])
          .where('school_id', '=', schoolId)
          .where((eb) => this.#inList(eb, 'id', batch, idType(kind)))
          .execute();
        for (const row of rows) {
          const next = prepareRecord(kind, fn(JSON.parse(row.data) as ResourceMap[K]));
          if (next.hash === row.hash) continue;
          await this.#w
            .updateTable(spec.table)
            .set({ data: next.data, hash: next.hash })
            .where('school_id', '=', schoolId)
            .where('id', '=', row.id)
            .execute();
          changed++;
        }
      }
      if (changed > 0) await this.#bumpDataVersion(schoolId);
      return changed;
    });
  }

  async liveHashes(schoolId: SchoolId, kind: ResourceKind): Promise<Map<Id | string, string>> {
    const spec = kindSpec(kind);
    const rows = await this.#r
      .selectFrom(spec.table)
      .select(['id', 'hash'])
      .where('school_id', '=', schoolId)
      .where('deleted_at', 'is', null)
      .execute();
    return new Map(rows.map((r) => [normaliseId(r.id, kind), r.hash]));
  }

  /** Ids per IN-list: PostgreSQL takes one array parameter, SQLite one parameter per id. */
  get #inChunk(): number {
    return this.dialect === 'postgres' ? 10_000 : IN_CHUNK;
  }

  /** `column IN (ids)`: `= any($1::type[])` on PostgreSQL, whose planner is slow on long parameter lists. */
  #inList(
    // biome-ignore lint/suspicious/noExplicitAny: used across tables; the column is checked by the callers' specs.
    eb: any,
    column: string,
    ids: readonly (Id | string)[],
    pgType: 'int8' | 'text',
  ): Expression<SqlBool> {
    if (this.dialect === 'postgres') return eb(column, '=', sql`any(${ids}::${sql.raw(pgType)}[])`);
    return eb(column, 'in', ids);
  }

  /**
   * The membership rows the stored records of `ids` own, per join of the kind, as [owner, member] pairs: what
   * upsertPrepared derived from each record when it wrote it. The membership tables have no owner index (its
   * random-order inserts were most of a full pull's membership writes), so a rewritten record's rows are found
   * from its stored record instead. Reads only records about to be rewritten: a pull drops unchanged ones early.
   */
  async #storedMemberships<R>(
    spec: KindSpec<R>,
    schoolId: SchoolId,
    ids: readonly Id[],
  ): Promise<[owner: number, member: number][][]> {
    const out = spec.joins.map((): [number, number][] => []);
    for (const batch of chunks(ids, this.#inChunk)) {
      const rows = await this.#w
        .selectFrom(spec.table)
        .select(['id', 'data'])
        .where('school_id', '=', schoolId)
        .where((eb) => this.#inList(eb, 'id', batch, 'int8'))
        .execute();
      for (const row of rows) {
        const owner = Number(row.id);
        const members = membersOf(spec, JSON.parse(row.data) as R);
        for (const [j, list] of members.entries())
          for (const member of list) out[j]!.push([owner, member as number]);
      }
    }
    return out;
  }

  /** Deletes the given membership rows by primary key: one statement per batch, whatever its size. */
  async #deleteMemberships(
    join: JoinTable,
    schoolId: SchoolId,
    pairs: readonly [owner: number, member: number][],
  ): Promise<void> {
    const table = sql.table(join.table);
    const key = sql`(${sql.ref(join.member)}, ${sql.ref(join.owner)})`;
    for (const batch of chunks(pairs, MEMBERSHIP_PAIRS)) {
      const list =
        this.dialect === 'postgres'
          ? sql`select * from unnest(${int8Array(batch, 1)}::int8[], ${int8Array(batch, 0)}::int8[])`
          : sql`select value ->> 0, value ->> 1 from json_each(${JSON.stringify(batch.map((p) => [p[1], p[0]]))})`;
      await sql`delete from ${table} where school_id = ${schoolId} and ${key} in (${list})`.execute(this.#w);
    }
  }

  /** The open transaction's deferred membership rows of one join table and school (see upsertPrepared). */
  #deferredMemberships(join: JoinTable, schoolId: SchoolId): MembershipBuffer {
    const trx = this.#tx.getStore();
    if (!trx) throw new Error('membership rows are deferred only inside a transaction');
    let pending = this.#deferred.get(trx);
    if (!pending) {
      pending = new Map();
      this.#deferred.set(trx, pending);
    }
    const key = `${join.table}\u0000${schoolId}`;
    let entry = pending.get(key);
    if (!entry) {
      entry = { join, schoolId, rows: new MembershipBuffer() };
      pending.set(key, entry);
    }
    return entry.rows;
  }

  /** Inserts the open transaction's deferred membership rows, each table's in primary-key order. */
  async #flushMemberships(): Promise<void> {
    const trx = this.#tx.getStore();
    const pending = trx && this.#deferred.get(trx);
    if (!pending) return;
    this.#deferred.delete(trx);
    for (const { join, schoolId, rows } of pending.values()) {
      if (this.dialect === 'postgres') {
        // One COPY per table, its rows generated as the server takes them: our text and the server's inserts
        // overlap for the whole table, where a COPY per 20,000 rows made each wait for the other.
        if (rows.size > 0) await this.#copyMemberships(join, schoolId, rows.drainEach());
        continue;
      }
      // Straight from the sorted keys: an array per pair cost a district's 538,360 session_students ~80 ms.
      const keys = rows.drainSorted();
      await this.#insertSqlite(
        join.table,
        ['school_id', join.member, join.owner],
        keys.length,
        (params, i) => {
          const key = keys[i]!;
          params.push(schoolId, memberOf(key), ownerOf(key));
        },
      );
    }
  }

  /**
   * A kind's membership rows (session → students…), under upsertPrepared's lock. PostgreSQL: COPY (a
   * district's 535,580 session_students rows: 0.96–1.02 s by two unnested id arrays, 0.66–0.72 s by COPY).
   * SQLite: multi-row VALUES (dropping its conflict clause measured no different: 78–85 ms either way). On both,
   * a duplicate is an error: it would mean the lock did not hold.
   */
  async #insertMemberships(join: JoinTable, schoolId: SchoolId, pairs: readonly Pair[]): Promise<void> {
    if (pairs.length === 0) return;
    if (this.dialect === 'sqlite') {
      // Straight from the pairs: an object per row (computed keys make them dictionaries) cost ~0.4 s of CPU and
      // its garbage for a district's 535,000 rows of session_students.
      const columns = ['school_id', join.member, join.owner];
      await this.#insertSqlite(join.table, columns, pairs.length, (params, i) => {
        const p = pairs[i]!;
        params.push(schoolId, p[1], p[0]);
      });
      return;
    }
    await this.#copyMemberships(join, schoolId, pairs);
  }

  async #copyMemberships(join: JoinTable, schoolId: SchoolId, pairs: Iterable<Pair>): Promise<void> {
    await this.#copyRows(join.table, ['school_id', join.member, join.owner], pairs, (p) => [
      schoolId,
      p[1],
      p[0],
    ]);
  }

  /** PostgreSQL's COPY of `items` into `table` (see pg-copy.ts), each one row of `values`: no conflict check. */
  async #copyRows<T>(
    table: string,
    columns: readonly string[],
    items: Iterable<T>,
    values: (item: T) => readonly CopyValue[],
  ): Promise<void> {
    if (Array.isArray(items) && items.length === 0) return;
    const text = `copy "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) from stdin`;
    await this.#w.executeQuery(CompiledQuery.raw(text, [new CopyRows(items, values)]));
  }

  /**
   * Inserts rows sharing one set of columns, optionally upserting on a key. SQLite: multi-row VALUES within
   * its parameter limit. PostgreSQL: the whole batch as one JSON parameter expanded by json_populate_recordset
   * into the table's own row type: several times faster than thousands of scalar parameters, and cheaper to
   * encode than one array per column.
   */
  async #insertRows(
    table: string,
    rows: Row[],
    conflict: { columns: string[]; update: string[] } | null,
  ): Promise<void> {
    if (rows.length === 0) return;
    // biome-ignore lint/suspicious/noExplicitAny: table and columns are chosen at runtime by the callers.
    const db = this.#w as unknown as Kysely<any>;
    const columns = Object.keys(rows[0]!);
    const onConflict = <Q extends { onConflict: (...a: never[]) => Q }>(q: Q): Q =>
      conflict
        ? // biome-ignore lint/suspicious/noExplicitAny: see above.
          (q as any).onConflict((oc: any) =>
            conflict.update.length === 0
              ? oc.columns(conflict.columns).doNothing()
              : oc.columns(conflict.columns).doUpdateSet((eb: { ref(c: string): Expression<unknown> }) => {
                  const set: Record<string, Expression<unknown>> = {};
                  for (const c of conflict.update) set[c] = eb.ref(`excluded.${c}`);
                  return set;
                }),
          )
        : q;
    if (this.dialect === 'postgres') {
      const selected = sql.join(columns.map((c) => sql.ref(c)));
      // Batches end at PG_BULK_ROWS rows or PG_BULK_CHARS of JSON, whichever comes first: 5,000 sessions are
      // 15 MB of text, held three times over (the rows, the joined JSON, the protocol buffer) while it is sent.
      let parts: string[] = [];
      let chars = 0;
      const flush = async () => {
        if (parts.length === 0) return;
        const json = `[${parts.join(',')}]`;
        parts = [];
        chars = 0;
        const select = sql`select ${selected} from json_populate_recordset(null::${sql.table(table)}, ${json}::json)`;
        await onConflict(db.insertInto(table).columns(columns).expression(select)).execute();
      };
      for (const row of rows) {
        const text = JSON.stringify(row);
        parts.push(text);
        chars += text.length;
        if (parts.length >= PG_BULK_ROWS || chars >= PG_BULK_CHARS) await flush();
      }
      await flush();
      return;
    }
    await this.#insertSqlite(
      table,
      columns,
      rows.length,
      (params, i) => {
        const row = rows[i]!;
        for (const c of columns) params.push(row[c]);
      },
      conflict,
    );
  }

  /**
   * SQLite's multi-row INSERT of `items`, each written into the statement's parameters by `put` in `columns`
   * order. The statement text comes straight from the column list, not through Kysely's query builder: for the
   * tens of thousands of rows of a full pull, building and compiling a node per value cost more CPU than
   * SQLite's own work on some tables, and as much garbage. Same text for every full batch, so one prepared
   * statement.
   */
  async #insertSqlite(
    table: string,
    columns: readonly string[],
    count: number,
    put: (params: unknown[], index: number) => void,
    conflict: { columns: string[]; update: string[] } | null = null,
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
    const perStatement = Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / columns.length));
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
      await this.#w.executeQuery(CompiledQuery.raw(text, params));
    }
  }

  async #bumpDataVersion(schoolId: SchoolId): Promise<void> {
    await this.#w
      .insertInto('data_versions')
      .values({ school_id: schoolId, version: 1 })
      .onConflict((oc) => oc.column('school_id').doUpdateSet({ version: sql`data_versions.version + 1` }))
      .execute();
  }

  async liveIds(
    schoolId: SchoolId,
    kind: ResourceKind,
    window?: { from: Instant; to: Instant },
  ): Promise<Id[]> {
    const spec = kindSpec(kind);
    let q = this.#r
      .selectFrom(spec.table)
      .select('id')
      .where('school_id', '=', schoolId)
      .where('deleted_at', 'is', null);
    if (window) {
      if (!spec.windowed) throw new Error(`liveIds: ${kind} has no time window`);
      const from = storedInstant(window.from, 'window.from');
      const to = storedInstant(window.to, 'window.to');
      q = q.where((eb) => intersects(eb, from, to));
    }
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => normaliseId(r.id, kind) as Id);
  }

  async markDeleted(schoolId: SchoolId, kind: ResourceKind, ids: Id[], at: Instant): Promise<number> {
    if (ids.length === 0) return 0;
    const spec = kindSpec(kind);
    const now = storedInstant(at, 'markDeleted');
    return this.transaction(async () => {
      let count = 0;
      for (const batch of chunks([...new Set(ids)], this.#inChunk)) {
        const result = await this.#w
          .updateTable(spec.table)
          .set({ deleted_at: now })
          .where('school_id', '=', schoolId)
          .where((eb) => this.#inList(eb, 'id', batch, idType(kind)))
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        count += Number(result.numUpdatedRows);
      }
      if (count > 0) await this.#bumpDataVersion(schoolId);
      return count;
    });
  }

  async dataVersion(schoolId: SchoolId): Promise<number> {
    const row = await this.#r
      .selectFrom('data_versions')
      .select('version')
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    return row ? Number(row.version) : 0;
  }

  // --- snapshot reads

  async get<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    id: Id | string,
    opts?: { includeDeleted?: boolean },
  ): Promise<Stored<K> | null> {
    const spec = kindSpec(kind);
    let key: Id | string = String(id);
    if (kind !== 'customFields') {
      key = Number(id);
      if (!Number.isSafeInteger(key)) return null;
    }
    let q = this.#r
      .selectFrom(spec.table)
      .select(['data', 'version', 'created_at', 'updated_at', 'deleted_at'])
      .where('school_id', '=', schoolId)
      .where('id', '=', key);
    if (!opts?.includeDeleted) q = q.where('deleted_at', 'is', null);
    const row = await q.executeTakeFirst();
    return row ? toStored<K>(row) : null;
  }

  async list<K extends ResourceKind>(
    schoolId: SchoolId,
    kind: K,
    opts?: { includeDeleted?: boolean },
  ): Promise<Stored<K>[]> {
    const spec = kindSpec(kind);
    let q = this.#r
      .selectFrom(spec.table)
      .select(['data', 'version', 'created_at', 'updated_at', 'deleted_at'])
      .where('school_id', '=', schoolId);
    if (!opts?.includeDeleted) q = q.where('deleted_at', 'is', null);
    const rows = await q.orderBy('id').execute();
    return rows.map((r) => toStored<K>(r));
  }

  async listSessions(schoolId: SchoolId, query: SessionQuery): Promise<Stored<'sessions'>[]> {
    if (query.teamIds?.length === 0 || query.activityIds?.length === 0) return [];
    // Inside a transaction, the memberships it wrote must be in their tables before they are asked about.
    await this.#flushMemberships();
    let q = this.#r
      .selectFrom('sessions as s')
      .select(['s.data', 's.version', 's.created_at', 's.updated_at', 's.deleted_at'])
      .where('s.school_id', '=', schoolId);
    if (!query.includeDeleted) q = q.where('s.deleted_at', 'is', null);
    if (query.from !== undefined || query.to !== undefined) {
      const from = query.from === undefined ? undefined : storedInstant(query.from, 'from');
      const to = query.to === undefined ? undefined : storedInstant(query.to, 'to');
      q = q.where((eb) => intersects(eb, from, to, 's.'));
    }
    if (query.activityIds) q = q.where('s.activity_id', 'in', query.activityIds);
    if (query.teamIds) {
      const teamIds = query.teamIds;
      q = q.where('s.id', 'in', (eb) =>
        eb
          .selectFrom('session_teams')
          .select('session_id')
          .where('school_id', '=', schoolId)
          .where('team_id', 'in', teamIds),
      );
    }
    if (query.staffId !== undefined) {
      const staffId = query.staffId;
      q = q.where('s.id', 'in', (eb) =>
        eb
          .selectFrom('session_staff')
          .select('session_id')
          .where('school_id', '=', schoolId)
          .where('staff_id', '=', staffId),
      );
    }
    if (query.studentId !== undefined) {
      const studentId = query.studentId;
      // One id list (a UNION) the planner can drive the primary-key lookups from: sessions listing the student,
      // plus sessions of the live teams the student is in now (the teams' current rosters).
      q = q.where('s.id', 'in', (eb) =>
        eb
          .selectFrom('session_students')
          .select('session_id')
          .where('school_id', '=', schoolId)
          .where('student_id', '=', studentId)
          .unionAll(
            eb
              .selectFrom('session_teams')
              .select('session_id')
              .where('school_id', '=', schoolId)
              .where('team_id', 'in', (eb2) =>
                eb2
                  .selectFrom('team_students as ts')
                  .innerJoin('teams as t', (j) =>
                    j.onRef('t.school_id', '=', 'ts.school_id').onRef('t.id', '=', 'ts.team_id'),
                  )
                  .select('ts.team_id')
                  .where('ts.school_id', '=', schoolId)
                  .where('ts.student_id', '=', studentId)
                  .where('t.deleted_at', 'is', null),
              ),
          ),
      );
    }
    const rows = await q.orderBy('s.start_at').orderBy('s.id').execute();
    return rows.map((r) => toStored<'sessions'>(r));
  }

  async listAbsences(schoolId: SchoolId, query: AbsenceQuery): Promise<Stored<'absences'>[]> {
    if (query.studentIds?.length === 0) return [];
    let q = this.#r
      .selectFrom('absences')
      .select(['data', 'version', 'created_at', 'updated_at', 'deleted_at'])
      .where('school_id', '=', schoolId)
      .where('deleted_at', 'is', null);
    if (query.studentIds) q = q.where('student_id', 'in', query.studentIds);
    if (query.from !== undefined || query.to !== undefined) {
      const from = query.from === undefined ? undefined : storedInstant(query.from, 'from');
      const to = query.to === undefined ? undefined : storedInstant(query.to, 'to');
      q = q.where((eb) => intersects(eb, from, to));
    }
    const rows = await q.orderBy('start_at').orderBy('id').execute();
    return rows.map((r) => toStored<'absences'>(r));
  }

  // --- sync runs and job status

  async startRun(run: {
    schoolId: SchoolId;
    kind: RunKind;
    target?: string | null;
    at: Instant;
    owner?: string | null;
  }): Promise<number> {
    const row = await this.#w
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
    const r = await this.#w
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
      })
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) throw new Error(`finishRun: no sync run ${id}`);
  }

  async recordRunProgress(id: number, progress: RunProgress): Promise<void> {
    await this.#w
      .updateTable('sync_runs')
      .set({
        counts: JSON.stringify(progress.counts),
        upstream_requests: progress.upstreamRequests,
        retries: progress.retries,
        throttled: progress.throttled,
      })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .execute();
  }

  async listRuns(schoolId: SchoolId, opts?: { kind?: RunKind; limit?: number }): Promise<SyncRun[]> {
    let q = this.#r
      .selectFrom('sync_runs')
      .leftJoin('run_owners', 'run_owners.owner', 'sync_runs.owner')
      .selectAll('sync_runs')
      .select(['run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at'])
      .where('school_id', '=', schoolId);
    if (opts?.kind) q = q.where('kind', '=', opts.kind);
    const rows = await q
      .orderBy('id', 'desc')
      .limit(opts?.limit ?? 50)
      .execute();
    const now = new Date();
    return rows.map((r) => ({
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
    }));
  }

  async getCursor(schoolId: SchoolId, key: string): Promise<string | null> {
    const row = await this.#r
      .selectFrom('sync_cursors')
      .select('value')
      .where('school_id', '=', schoolId)
      .where('key', '=', key)
      .executeTakeFirst();
    return row?.value ?? null;
  }

  async setCursor(schoolId: SchoolId, key: string, value: string): Promise<void> {
    const now = new Date().toISOString();
    await this.#w
      .insertInto('sync_cursors')
      .values({ school_id: schoolId, key, value, updated_at: now })
      .onConflict((oc) => oc.columns(['school_id', 'key']).doUpdateSet({ value, updated_at: now }))
      .execute();
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
    const q = this.#w.insertInto('job_status').values(insert);
    await (Object.keys(values).length === 0
      ? q.onConflict((oc) => oc.columns(['school_id', 'job']).doNothing())
      : q.onConflict((oc) => oc.columns(['school_id', 'job']).doUpdateSet(values))
    ).execute();
  }

  async listJobStatus(schoolId?: SchoolId): Promise<JobStatus[]> {
    let q = this.#r
      .selectFrom('job_status')
      .leftJoin('run_owners', 'run_owners.owner', 'job_status.owner')
      .selectAll('job_status')
      .select(['run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at']);
    if (schoolId !== undefined) q = q.where('school_id', '=', schoolId);
    const rows = await q.orderBy('school_id').orderBy('job').execute();
    const now = new Date();
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
        state: unfinished ? (ownerGone(r, now) ? 'interrupted' : 'running') : null,
      };
    });
  }

  // --- full-pull requests and records missing once

  async requestFullPull(schoolId: SchoolId, at: Instant, by: string): Promise<void> {
    const full_requested_at = storedInstant(at, 'requestFullPull');
    await this.#w
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
    const row = await this.#w
      .selectFrom('pull_requests')
      .select(['full_requested_at', 'requested_by'])
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    return row ? { at: row.full_requested_at, by: row.requested_by } : null;
  }

  async satisfyFullPull(schoolId: SchoolId, startedAt: Instant): Promise<void> {
    await this.#w
      .deleteFrom('pull_requests')
      .where('school_id', '=', schoolId)
      .where('full_requested_at', '<=', storedInstant(startedAt, 'satisfyFullPull'))
      .execute();
  }

  async listMissing(schoolId: SchoolId, kind: ResourceKind): Promise<Map<Id, Instant>> {
    const rows = await this.#r
      .selectFrom('missing_records')
      .select(['id', 'since'])
      .where('school_id', '=', schoolId)
      .where('kind', '=', kind)
      .execute();
    return new Map(rows.map((r) => [Number(r.id), r.since]));
  }

  async setMissing(schoolId: SchoolId, kind: ResourceKind, ids: readonly Id[], at: Instant): Promise<void> {
    const since = storedInstant(at, 'setMissing');
    const wanted = new Set(ids);
    await this.transaction(async () => {
      const held = await this.listMissing(schoolId, kind);
      const gone = [...held.keys()].filter((id) => !wanted.has(id));
      for (const batch of chunks(gone, this.#inChunk)) {
        await this.#w
          .deleteFrom('missing_records')
          .where('school_id', '=', schoolId)
          .where('kind', '=', kind)
          .where((eb) => this.#inList(eb, 'id', batch, 'int8'))
          .execute();
      }
      const fresh = [...wanted].filter((id) => !held.has(id));
      for (const batch of chunks(fresh, 500)) {
        await this.#w
          .insertInto('missing_records')
          .values(batch.map((id) => ({ school_id: schoolId, kind, id, since })))
          .execute();
      }
    });
  }

  // --- feed tokens

  /**
   * Inserts a token, or updates the version/revocation of one with the same hash. Saving does not revoke the
   * scope's other tokens: rotation is `revokeFeedToken` then `saveFeedToken`, in one transaction.
   */
  async saveFeedToken(token: FeedToken): Promise<void> {
    await this.#w
      .insertInto('feed_tokens')
      .values({
        token_hash: token.tokenHash,
        school_id: token.schoolId,
        scope: token.scope,
        scope_id: token.scopeId,
        version: token.version,
        created_at: storedInstant(token.createdAt, 'createdAt'),
        revoked_at: maybeInstant(token.revokedAt, 'revokedAt'),
      })
      .onConflict((oc) =>
        oc.column('token_hash').doUpdateSet({
          version: token.version,
          revoked_at: maybeInstant(token.revokedAt, 'revokedAt'),
        }),
      )
      .execute();
  }

  async getFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id): Promise<FeedToken | null> {
    const row = await this.#r
      .selectFrom('feed_tokens')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where('scope', '=', scope)
      .where('scope_id', '=', scopeId)
      .where('revoked_at', 'is', null)
      .orderBy('version', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row ? toFeedToken(row) : null;
  }

  async findFeedTokenByHash(tokenHash: string): Promise<FeedToken | null> {
    const row = await this.#r
      .selectFrom('feed_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .executeTakeFirst();
    return row ? toFeedToken(row) : null;
  }

  async revokeFeedToken(schoolId: SchoolId, scope: FeedScope, scopeId: Id, at: Instant): Promise<void> {
    await this.#w
      .updateTable('feed_tokens')
      .set({ revoked_at: storedInstant(at, 'revokeFeedToken') })
      .where('school_id', '=', schoolId)
      .where('scope', '=', scope)
      .where('scope_id', '=', scopeId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async listFeedTokens(schoolId?: SchoolId): Promise<FeedToken[]> {
    let q = this.#r.selectFrom('feed_tokens').selectAll();
    if (schoolId !== undefined) q = q.where('school_id', '=', schoolId);
    const rows = await q
      .orderBy('school_id')
      .orderBy('scope')
      .orderBy('scope_id')
      .orderBy('version')
      .execute();
    return rows.map(toFeedToken);
  }

  async uidDomain(): Promise<string | null> {
    // Read once: it never changes. A read-only store not yet migrated has no table: its UIDs stay as they were.
    // Any other failure is not remembered (a UID domain taken for absent would change every UID).
    this.#uidDomain ??= this.#r
      .selectFrom('installation')
      .select('uid_domain')
      .where('id', '=', 1)
      .executeTakeFirst()
      .then(
        (row) => row?.uid_domain || null,
        (err: unknown) => {
          if (/no such table|does not exist/.test(String((err as Error)?.message))) return null;
          this.#uidDomain = undefined;
          throw err;
        },
      );
    return this.#uidDomain;
  }
  #uidDomain: Promise<string | null> | undefined;

  // --- the feed rotation record

  getFeedRotationRecord(): Promise<{ secret: string; createdAt: Instant } | null> {
    return feedRotations.getFeedRotationRecord(this.#r);
  }
  startFeedRotationRecord(secret: string, at: Instant): Promise<void> {
    return this.transaction(() => feedRotations.startFeedRotationRecord(this.#w, secret, at));
  }
  addFeedRotations(rows: readonly FeedRotationRow[]): Promise<void> {
    return feedRotations.addFeedRotations(this.#w, rows);
  }
  listFeedRotations(): Promise<FeedRotationRow[]> {
    return feedRotations.listFeedRotations(this.#r);
  }
  feedRotationsMark(): Promise<number> {
    return feedRotations.feedRotationsMark(this.#r);
  }

  // --- family links

  getFeedEventVersions(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
  ): Promise<Map<Id, PublishedEvent>> {
    return feedEventVersions.getFeedEventVersions(this.#r, schoolId, scope, scopeId);
  }
  saveFeedEventVersions(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
    versions: ReadonlyMap<Id, PublishedEvent>,
  ): Promise<void> {
    return feedEventVersions.saveFeedEventVersions(this.#w, schoolId, scope, scopeId, versions);
  }

  getRenderedFeed(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
  ): Promise<RenderedFeedRecord | null> {
    return renderedFeeds.getRenderedFeed(this.#r, schoolId, scope, scopeId);
  }
  listRenderedFeedStates(schoolId: SchoolId): Promise<RenderedFeedState[]> {
    return renderedFeeds.listRenderedFeedStates(this.#r, schoolId);
  }
  saveRenderedFeed(record: RenderedFeedRecord): Promise<void> {
    return renderedFeeds.saveRenderedFeed(this.#w, record);
  }
  saveRenderedFeedBrotli(
    schoolId: SchoolId,
    scope: StoredFeedScope,
    scopeId: Id,
    etag: string,
    br: Buffer,
  ): Promise<void> {
    return renderedFeeds.saveRenderedFeedBrotli(this.#w, schoolId, scope, scopeId, etag, br);
  }
  markRenderedFeedsCurrent(
    schoolId: SchoolId,
    feeds: readonly { scope: FeedScope; scopeId: Id; inputs: string }[],
    dataVersion: number,
  ): Promise<void> {
    if (feeds.length === 0) return Promise.resolve();
    return this.transaction(() =>
      renderedFeeds.markRenderedFeedsCurrent(this.#w, schoolId, feeds, dataVersion),
    );
  }
  deleteRenderedFeeds(
    schoolId: SchoolId,
    feeds: readonly { scope: StoredFeedScope; scopeId: Id }[],
  ): Promise<void> {
    if (feeds.length === 0) return Promise.resolve();
    return this.transaction(() => renderedFeeds.deleteRenderedFeeds(this.#w, schoolId, feeds));
  }

  saveFamilyLink(link: FamilyLink): Promise<void> {
    return familyLinks.saveFamilyLink(this.#w, link);
  }
  findFamilyLinkByHash(tokenHash: string): Promise<FamilyLink | null> {
    return familyLinks.findFamilyLinkByHash(this.#r, tokenHash);
  }

  // --- push bookkeeping

  async savePushCalendar(cal: PushCalendar): Promise<void> {
    const values = {
      remote_calendar_id: cal.remoteCalendarId,
      paused_until: maybeInstant(cal.pausedUntil, 'pausedUntil'),
      last_reconciled_at: maybeInstant(cal.lastReconciledAt, 'lastReconciledAt'),
    };
    await this.#w
      .insertInto('push_calendars')
      .values({ school_id: cal.schoolId, target: cal.target, calendar_key: cal.calendarKey, ...values })
      .onConflict((oc) => oc.columns(['school_id', 'target', 'calendar_key']).doUpdateSet(values))
      .execute();
  }

  async listPushCalendars(schoolId: SchoolId, target: string): Promise<PushCalendar[]> {
    const rows = await this.#r
      .selectFrom('push_calendars')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where('target', '=', target)
      .orderBy('calendar_key')
      .execute();
    return rows.map((r) => ({
      schoolId: r.school_id,
      target: r.target,
      calendarKey: r.calendar_key,
      remoteCalendarId: r.remote_calendar_id,
      pausedUntil: r.paused_until,
      lastReconciledAt: r.last_reconciled_at,
    }));
  }

  async upsertPushMappings(mappings: PushMapping[]): Promise<void> {
    if (mappings.length === 0) return;
    // Last occurrence of a key wins (PostgreSQL refuses to update one row twice in a statement).
    const byKey = new Map<string, PushMapping>();
    for (const m of mappings)
      byKey.set(JSON.stringify([m.schoolId, m.target, m.calendarKey, m.sessionId]), m);
    const rows = [...byKey.values()].map((m) => ({
      school_id: m.schoolId,
      target: m.target,
      calendar_key: m.calendarKey,
      session_id: m.sessionId,
      remote_event_id: m.remoteEventId,
      content_hash: m.contentHash,
      updated_at: storedInstant(m.updatedAt, 'updatedAt'),
    }));
    await this.transaction(() =>
      this.#insertRows('push_mappings', rows, {
        columns: ['school_id', 'target', 'calendar_key', 'session_id'],
        update: ['remote_event_id', 'content_hash', 'updated_at'],
      }),
    );
  }

  async deletePushMappings(
    schoolId: SchoolId,
    target: string,
    calendarKey: string,
    sessionIds: Id[],
  ): Promise<void> {
    if (sessionIds.length === 0) return;
    await this.transaction(async () => {
      for (const batch of chunks(sessionIds, this.#inChunk)) {
        await this.#w
          .deleteFrom('push_mappings')
          .where('school_id', '=', schoolId)
          .where('target', '=', target)
          .where('calendar_key', '=', calendarKey)
          .where((eb) => this.#inList(eb, 'session_id', batch, 'int8'))
          .execute();
      }
    });
  }

  async listPushMappings(schoolId: SchoolId, target: string, calendarKey?: string): Promise<PushMapping[]> {
    let q = this.#r
      .selectFrom('push_mappings')
      .selectAll()
      .where('school_id', '=', schoolId)
      .where('target', '=', target);
    if (calendarKey !== undefined) q = q.where('calendar_key', '=', calendarKey);
    const rows = await q.orderBy('calendar_key').orderBy('session_id').execute();
    return rows.map((r) => ({
      schoolId: r.school_id,
      target: r.target,
      calendarKey: r.calendar_key,
      sessionId: Number(r.session_id),
      remoteEventId: r.remote_event_id,
      contentHash: r.content_hash,
      updatedAt: r.updated_at,
    }));
  }

  // --- staff sessions and the audit log (SQL in staff-access.ts)

  createStaffSession(session: StaffSession): Promise<void> {
    return staffAccess.createStaffSession(this.#w, session);
  }
  getStaffSession(idHash: string): Promise<StaffSession | null> {
    return staffAccess.getStaffSession(this.#r, idHash);
  }
  touchStaffSession(idHash: string, at: Instant): Promise<void> {
    return staffAccess.touchStaffSession(this.#w, idHash, at);
  }
  revokeStaffSession(idHash: string, at: Instant): Promise<boolean> {
    return staffAccess.revokeStaffSession(this.#w, idHash, at);
  }
  revokeStaffSessionsOf(email: string, at: Instant): Promise<number> {
    return staffAccess.revokeStaffSessionsOf(this.#w, email, at);
  }
  listStaffSessions(at: Instant): Promise<StaffSession[]> {
    return staffAccess.listStaffSessions(this.#r, at);
  }
  pruneStaffSessions(before: Instant): Promise<number> {
    return staffAccess.pruneStaffSessions(this.#w, before);
  }
  appendAudit(record: Omit<AuditRecord, 'id'>): Promise<number> {
    return staffAccess.appendAudit(this.#w, record);
  }
  listAudit(query?: AuditQuery): Promise<AuditRecord[]> {
    return staffAccess.listAudit(this.#r, query);
  }
  pruneAudit(before: Instant): Promise<number> {
    return staffAccess.pruneAudit(this.#w, before);
  }

  // --- coordination

  async claimFire(job: string, fireTime: Instant, owner: string): Promise<boolean> {
    const fire = storedInstant(fireTime, 'fireTime');
    const result = await this.#w
      .insertInto('fire_claims')
      .values({ job, fire_time: fire, owner, claimed_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(['job', 'fire_time']).doNothing())
      .executeTakeFirst();
    const won = Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    if (won) {
      // Keep the table small: claims older than a day before this fire can no longer be contested.
      const horizon = new Date(Date.parse(fire) - 86_400_000).toISOString();
      await this.#w
        .deleteFrom('fire_claims')
        .where('job', '=', job)
        .where('fire_time', '<', horizon)
        .execute();
    }
    return won;
  }

  // --- run owners and pull leases

  async beat(owner: RunOwner, at: Instant): Promise<void> {
    const heartbeat_at = storedInstant(at, 'beat');
    await this.#w
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
    await this.#w.deleteFrom('run_owners').where('owner', '=', ownerId).execute();
    await this.#w.deleteFrom('pull_leases').where('owner', '=', ownerId).execute();
    // Owners silent for a day are long gone: keep the table small.
    const horizon = new Date(Date.now() - 86_400_000).toISOString();
    await this.#w.deleteFrom('run_owners').where('heartbeat_at', '<', horizon).execute();
  }

  async acquirePullLease(schoolId: SchoolId, ownerId: string, at: Instant): Promise<PullLease> {
    const acquired_at = storedInstant(at, 'lease');
    const token = randomUUID();
    const inserted = await this.#w
      .insertInto('pull_leases')
      .values({ school_id: schoolId, owner: ownerId, token, acquired_at })
      .onConflict((oc) => oc.column('school_id').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { acquired: true, token };
    const held = await this.#w
      .selectFrom('pull_leases')
      .leftJoin('run_owners', 'run_owners.owner', 'pull_leases.owner')
      .select(['pull_leases.owner', 'pull_leases.token', 'pull_leases.acquired_at'])
      .select(['run_owners.host', 'run_owners.pid', 'run_owners.heartbeat_at'])
      .where('school_id', '=', schoolId)
      .executeTakeFirst();
    // Released between the two statements: try once more from the start.
    if (!held) return this.acquirePullLease(schoolId, ownerId, at);
    const beat = held.heartbeat_at
      ? { host: held.host ?? '', pid: Number(held.pid), heartbeatAt: held.heartbeat_at }
      : null;
    if (ownerAlive(beat, new Date())) {
      return { acquired: false, holder: { owner: held.owner, since: held.acquired_at } };
    }
    // Its owner is gone: take it over, unless another caller just did (compare-and-swap on the token).
    const taken = await this.#w
      .updateTable('pull_leases')
      .set({ owner: ownerId, token, acquired_at })
      .where('school_id', '=', schoolId)
      .where('token', '=', held.token)
      .executeTakeFirst();
    if (Number(taken.numUpdatedRows) > 0) return { acquired: true, token };
    return this.acquirePullLease(schoolId, ownerId, at);
  }

  async releasePullLease(schoolId: SchoolId, token: string): Promise<void> {
    await this.#w
      .deleteFrom('pull_leases')
      .where('school_id', '=', schoolId)
      .where('token', '=', token)
      .execute();
  }
}

/** Whether the owner a row names has stopped beating (a row with no owner cannot tell, so it is not). */
function ownerGone(
  r: { owner: string | null } & { host: string | null; pid: number | null; heartbeat_at: string | null },
  now = new Date(),
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

function toFeedToken(r: {
  school_id: string;
  scope: string;
  scope_id: number;
  token_hash: string;
  version: number;
  created_at: string;
  revoked_at: string | null;
}): FeedToken {
  return {
    schoolId: r.school_id,
    scope: r.scope as FeedScope,
    scopeId: Number(r.scope_id),
    tokenHash: r.token_hash,
    version: Number(r.version),
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
  };
}

/** Ids come back as numbers from both drivers (int8 is parsed on PostgreSQL); custom fields keep text keys. */
function normaliseId(id: number | string, kind: ResourceKind): Id | string {
  return kind === 'customFields' ? String(id) : Number(id);
}

/** The PostgreSQL type of a kind's ids (custom fields are keyed by text). */
function idType(kind: ResourceKind): 'int8' | 'text' {
  return kind === 'customFields' ? 'text' : 'int8';
}

function snapshotRow<R>(
  spec: KindSpec<R>,
  schoolId: SchoolId,
  record: PreparedRecord,
  version: number,
  now: string,
): SnapshotTable {
  const row: Record<string, unknown> = {
    school_id: schoolId,
    id: record.key,
    data: record.data,
    hash: record.hash,
    version,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  for (const c of spec.extraColumns) {
    const v = record.extras[c];
    row[c] =
      v === undefined
        ? null
        : c === 'start_at' || c === 'end_at'
          ? maybeInstant(v as string | null, 'record time')
          : v;
  }
  return row as unknown as SnapshotTable;
}

/**
 * Rows intersecting [from, to): start < to and end > from. A zero-length row starting at `from` counts as
 * inside (its end is not after `from`, but it happens within the window).
 */
function intersects(
  // biome-ignore lint/suspicious/noExplicitAny: shared by queries over differently aliased tables.
  eb: any,
  from: string | undefined,
  to: string | undefined,
  prefix = '',
): Expression<SqlBool> {
  const parts: Expression<SqlBool>[] = [];
  if (to !== undefined) parts.push(eb(`${prefix}start_at`, '<', to));
  if (from !== undefined)
    parts.push(eb.or([eb(`${prefix}end_at`, '>', from), eb(`${prefix}start_at`, '>=', from)]));
  return eb.and(parts);
}
